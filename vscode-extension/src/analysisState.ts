/**
 * The analysis state the status bar shows, and how the server's `tilescope/status`
 * notification maps onto it. Pure so that the wording is tested.
 */

export type AnalysisState = "starting" | "static" | "analysing" | "ready" | "error" | "stopped";

export interface StatusNotification {
  state: string;
  uri?: string;
  message?: string;
}

export interface Presentation {
  text: string;
  tooltip: string;
  isError: boolean;
}

const ALIASES: Record<string, AnalysisState> = {
  static: "static",
  "static-only": "static",
  static_only: "static",
  untrusted: "static",
  analysing: "analysing",
  analyzing: "analysing",
  running: "analysing",
  busy: "analysing",
  ready: "ready",
  "up-to-date": "ready",
  up_to_date: "ready",
  done: "ready",
  idle: "ready",
  error: "error",
  failed: "error",
  timeout: "error",
  crashed: "error",
};

/** Maps a state name from the server to ours; unknown names leave the state unchanged. */
export function stateFromServer(name: string): AnalysisState | undefined {
  return ALIASES[name.trim().toLowerCase()];
}

export function present(state: AnalysisState, detail?: string): Presentation {
  const suffix = detail ? `\n${detail}` : "";
  switch (state) {
    case "starting":
      return { text: "$(loading~spin) Tilescope", tooltip: "Starting the Tilescope language server" + suffix, isError: false };
    case "static":
      return {
        text: "$(shield) Tilescope: static only",
        tooltip: "Restricted workspace: shapes come from the source alone; trust the workspace to run the compiler." + suffix,
        isError: false,
      };
    case "analysing":
      return { text: "$(sync~spin) Tilescope: analysing", tooltip: "The compiler tier is lowering the kernels" + suffix, isError: false };
    case "ready":
      return { text: "$(check) Tilescope: up to date", tooltip: "Compiler-tier results match the current text" + suffix, isError: false };
    case "error":
      return { text: "$(error) Tilescope: error", tooltip: "Analysis failed; see the Problems panel or the Tilescope output" + suffix, isError: true };
    case "stopped":
      return { text: "$(circle-slash) Tilescope: stopped", tooltip: "The language server is not running" + suffix, isError: true };
  }
}
