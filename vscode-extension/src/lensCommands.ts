/**
 * The server's code lenses name its own `workspace/executeCommand` commands, whose answers are
 * JSON for an editor to render. The client rewrites them to the commands that open the views,
 * which in turn ask the server for that JSON.
 */

export const SERVER_COMMANDS = {
  tracePasses: "tilescope.tracePasses",
  passIR: "tilescope.passIR",
  plotLayout: "tilescope.plotLayout",
  showCuda: "tilescope.showCuda",
  autotuneConfigs: "tilescope.autotuneConfigs",
} as const;

export const VIEW_COMMANDS = {
  openTrace: "tilescope.openTrace",
  openLayout: "tilescope.openLayout",
  openCuda: "tilescope.openCuda",
  openVariants: "tilescope.openVariants",
} as const;

const LENS_TO_VIEW: Record<string, string> = {
  [SERVER_COMMANDS.tracePasses]: VIEW_COMMANDS.openTrace,
  [SERVER_COMMANDS.plotLayout]: VIEW_COMMANDS.openLayout,
  [SERVER_COMMANDS.showCuda]: VIEW_COMMANDS.openCuda,
  [SERVER_COMMANDS.autotuneConfigs]: VIEW_COMMANDS.openVariants,
};

/** The view command for a server command, or the command unchanged when no view renders it. */
export function viewCommandFor(command: string): string {
  return LENS_TO_VIEW[command] ?? command;
}
