/**
 * The settings the language server reads, built from the `tilescope.*` configuration, and the
 * workspace's trust, which travels apart from them: the server ignores a `trusted` setting (a
 * project's `.vscode/settings.json` could set it) and takes VS Code's own verdict only as the
 * `workspaceTrust` initialization option and the `tilescope/didChangeWorkspaceTrust` notification.
 * Kept free of `vscode` so the mapping is unit-tested: the server and the extension must agree on
 * these names.
 */

/** The server's hint kinds (`tilescope.core.ide.hints.HINT_KINDS`), each switchable; checked against the server's options in `test/settings.test.ts`. */
export const HINT_KINDS = ["buffers", "parameters", "launch", "layouts", "pipelines"] as const;

export type HintKinds = Record<(typeof HINT_KINDS)[number], boolean>;

export interface ServerSettings {
  target: string;
  hints: HintKinds;
  timeout: number;
  /** Also run ptxas on the device code, for registers and spills (seconds per kernel). */
  ptxas: boolean;
  /** Learn sizes the source does not give from a dry run of the file's `__main__` (trusted workspaces only). */
  dryRun: boolean;
  /** Seconds a document must rest before the compiler tier analyses it. */
  idle: number;
  /** The interpreter whose TileLang the compiler tier uses; empty: the server's own. */
  python: string;
}

/** Reads one configuration value under `tilescope.`; `vscode.WorkspaceConfiguration.get` fits. */
export type ConfigGetter = <T>(key: string, fallback: T) => T;

export const DEFAULT_TARGET = "sm_90";
export const DEFAULT_TIMEOUT_S = 60;
export const DEFAULT_IDLE_S = 0.5;

/** The settings part of the initialization options, and the `didChangeConfiguration` payload. */
export function serverSettings(get: ConfigGetter, compilerPython?: string): ServerSettings {
  const timeout = Number(get<number>("timeout", DEFAULT_TIMEOUT_S));
  const idle = Number(get<number>("idle", DEFAULT_IDLE_S));
  return {
    target: get<string>("target", DEFAULT_TARGET).trim() || DEFAULT_TARGET,
    hints: Object.fromEntries(HINT_KINDS.map((kind) => [kind, get<boolean>(`hints.${kind}`, true)])) as HintKinds,
    timeout: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_S,
    ptxas: get<boolean>("ptxas", false),
    dryRun: get<boolean>("dryRun", true),
    idle: Number.isFinite(idle) && idle >= 0 ? idle : DEFAULT_IDLE_S,
    python: compilerPython ?? "",
  };
}

/** The `workspace/didChangeConfiguration` params: the server reads the `tilescope` section. */
export function configurationChange(settings: ServerSettings): { settings: { tilescope: ServerSettings } } {
  return { settings: { tilescope: settings } };
}

/** The notification by which VS Code's own trust verdict reaches a running server (`onDidGrantWorkspaceTrust`). */
export const WORKSPACE_TRUST_NOTIFICATION = "tilescope/didChangeWorkspaceTrust";

export type InitializationOptions = ServerSettings & { workspaceTrust: boolean };

/** What the server starts with: the settings, and VS Code's verdict on the workspace (`workspace.isTrusted`). */
export function initializationOptions(settings: ServerSettings, isTrusted: boolean): InitializationOptions {
  return { ...settings, workspaceTrust: isTrusted };
}

/** The `tilescope/didChangeWorkspaceTrust` params. */
export function trustChange(isTrusted: boolean): { trusted: boolean } {
  return { trusted: isTrusted };
}
