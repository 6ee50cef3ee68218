/**
 * The pass trace as the view shows it: the server's `tilescope.tracePasses` answer, which
 * passes are listed (unchanged ones hidden unless asked), and next/previous change.
 */

export interface PassInfo {
  index: number;
  name: string;
  phase: string;
  duration_ms: number;
  changed: boolean;
  /** The catalogue's name for the pass; differs from `name` for TVM's anonymous `pass_fn`. */
  resolved_name?: string;
  description?: string;
}

export interface PassTrace {
  kernel: string;
  passes: PassInfo[];
  catalog: Record<string, string>;
}

export interface PassIR {
  before: string;
  after: string;
  before_lines: (number | null)[];
  after_lines: (number | null)[];
}

/** Validates the server's answer; throws with what was wrong so the view can say it. */
export function parseTrace(value: unknown): PassTrace {
  if (!isObject(value) || !Array.isArray(value.passes)) {
    throw new Error("the server's pass trace has no passes list");
  }
  const passes = value.passes.map((p: unknown, k: number): PassInfo => {
    if (!isObject(p) || typeof p.name !== "string") {
      throw new Error(`pass ${k} of the trace has no name`);
    }
    return {
      index: typeof p.index === "number" ? p.index : k,
      name: p.name,
      phase: typeof p.phase === "string" ? p.phase : "",
      duration_ms: typeof p.duration_ms === "number" ? p.duration_ms : 0,
      changed: p.changed !== false,
      resolved_name: typeof p.resolved_name === "string" ? p.resolved_name : undefined,
      description: typeof p.description === "string" ? p.description : undefined,
    };
  });
  const catalog: Record<string, string> = {};
  if (isObject(value.catalog)) {
    for (const [name, text] of Object.entries(value.catalog)) {
      if (typeof text === "string") {
        catalog[name] = text;
      }
    }
  }
  return { kernel: typeof value.kernel === "string" ? value.kernel : "", passes, catalog };
}

export function parsePassIR(value: unknown): PassIR {
  if (!isObject(value) || typeof value.before !== "string" || typeof value.after !== "string") {
    throw new Error("the server's pass IR has no before/after text");
  }
  const lines = (v: unknown): (number | null)[] =>
    Array.isArray(v) ? v.map((x) => (typeof x === "number" ? x : null)) : [];
  return { before: value.before, after: value.after, before_lines: lines(value.before_lines), after_lines: lines(value.after_lines) };
}

export function visiblePasses(trace: PassTrace, showUnchanged: boolean): PassInfo[] {
  return showUnchanged ? trace.passes : trace.passes.filter((p) => p.changed);
}

/** The next (step 1) or previous (step -1) changed pass after `current`, wrapping; undefined if none changed. */
export function nextChange(trace: PassTrace, current: number | undefined, step: 1 | -1): number | undefined {
  const changed = trace.passes.filter((p) => p.changed).map((p) => p.index);
  if (changed.length === 0) {
    return undefined;
  }
  if (current === undefined) {
    return step === 1 ? changed[0] : changed[changed.length - 1];
  }
  if (step === 1) {
    return changed.find((i) => i > current) ?? changed[0];
  }
  return [...changed].reverse().find((i) => i < current) ?? changed[changed.length - 1];
}

/** The name to show: the catalogue's, where the compiler recorded an anonymous function. */
export function passLabel(pass: PassInfo): string {
  return pass.resolved_name && pass.resolved_name !== pass.name ? pass.resolved_name : pass.name;
}

/** What the pass does: its own description, else the catalog's entry by name, with or without the `tl.`/`tir.` prefix. */
export function describePass(trace: PassTrace, pass: PassInfo): string | undefined {
  const names = [pass.resolved_name, pass.name].filter((n): n is string => Boolean(n));
  const keys = names.flatMap((n) => [n, n.replace(/^(tl|tir|tirx|s_tir)\./, "")]);
  return pass.description ?? keys.map((k) => trace.catalog[k]).find((text) => text !== undefined);
}

export function totalMs(passes: PassInfo[]): number {
  return passes.reduce((sum, p) => sum + p.duration_ms, 0);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
