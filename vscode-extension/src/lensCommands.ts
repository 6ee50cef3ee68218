/**
 * The server's code lenses name `tilescope.show.*` commands, which the server carries out itself
 * for editors without Tilescope's views (it writes a file and asks the editor to open it). This
 * client rewrites them to the commands that open its own views, which in turn ask the server for
 * the JSON of the data commands below.
 */

export const SERVER_COMMANDS = {
  tracePasses: "tilescope.tracePasses",
  passIR: "tilescope.passIR",
  plotLayout: "tilescope.plotLayout",
  showCuda: "tilescope.showCuda",
  kernelModel: "tilescope.kernelModel",
  schedule: "tilescope.schedule",
} as const;

export const VIEW_COMMANDS = {
  openTrace: "tilescope.openTrace",
  openLayout: "tilescope.openLayout",
  openCuda: "tilescope.openCuda",
  openVariants: "tilescope.openVariants",
  openSchedule: "tilescope.openSchedule",
} as const;

export const LENS_COMMANDS = {
  passes: "tilescope.show.passes",
  layout: "tilescope.show.layout",
  cuda: "tilescope.show.cuda",
  autotune: "tilescope.show.autotune",
  schedule: "tilescope.show.schedule",
} as const;

const LENS_TO_VIEW: Record<string, string> = {
  [LENS_COMMANDS.passes]: VIEW_COMMANDS.openTrace,
  [LENS_COMMANDS.layout]: VIEW_COMMANDS.openLayout,
  [LENS_COMMANDS.cuda]: VIEW_COMMANDS.openCuda,
  [LENS_COMMANDS.autotune]: VIEW_COMMANDS.openVariants,
  [LENS_COMMANDS.schedule]: VIEW_COMMANDS.openSchedule,
};

/** The view command for a server command, or the command unchanged when no view renders it. */
export function viewCommandFor(command: string): string {
  return LENS_TO_VIEW[command] ?? command;
}
