/**
 * The settings the language server reads, built from the `tilescope.*` configuration and the
 * workspace's trust. Kept free of `vscode` so the mapping is unit-tested: the server and the
 * extension must agree on these names.
 */

/** The server's hint kinds (`tilescope.core.ide.hints.HINT_KINDS`), each switchable; checked against the server's options in `test/settings.test.ts`. */
export const HINT_KINDS = ["buffers", "parameters", "launch", "layouts", "pipelines"] as const;

export type HintKinds = Record<(typeof HINT_KINDS)[number], boolean>;

export interface ServerSettings {
  trusted: boolean;
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

/** Initialization options and `didChangeConfiguration` payloads share this shape. */
export function serverSettings(get: ConfigGetter, trusted: boolean, compilerPython?: string): ServerSettings {
  const timeout = Number(get<number>("timeout", DEFAULT_TIMEOUT_S));
  const idle = Number(get<number>("idle", DEFAULT_IDLE_S));
  return {
    trusted,
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
