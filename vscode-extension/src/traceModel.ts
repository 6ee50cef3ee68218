/**
 * The pass trace as the view shows it: the server's `tilescope.tracePasses` answer (the core's
 * `TraceView`, already joined with the pass catalogue), the IR diff of one pass
 * (`tilescope.passIR`, the core's rows), which passes are listed, and next/previous change.
 */

export interface PassView {
  index: number;
  name: string;
  /** What to show: the name, with the function behind an anonymous `pass_fn`. */
  label: string;
  phase: string;
  duration_ms: number;
  changed: boolean;
  what: string | null;
  look_for: string | null;
}

export interface PassTrace {
  kernel: string;
  title: string;
  passes: PassView[];
}

export type RowKind = "same" | "add" | "del" | "hunk";

/** One line of the core's unified diff; `source` is the Python line behind the IR line. */
export interface DiffRow {
  kind: RowKind;
  text: string;
  old: number | null;
  new: number | null;
  source: number | null;
}

export interface PassDiff {
  kernel: string;
  index: number;
  rows: DiffRow[];
  added: number;
  removed: number;
}

const KINDS: readonly string[] = ["same", "add", "del", "hunk"];

function optionalNumber(v: unknown): number | null {
  return typeof v === "number" ? v : null;
}

function optionalString(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

/** Validates the server's answer; throws with what was wrong so the view can say it. */
export function parseTrace(value: unknown): PassTrace {
  if (!isObject(value) || !Array.isArray(value.passes)) {
    throw new Error("the server's pass trace has no passes list");
  }
  const passes = value.passes.map((p: unknown, k: number): PassView => {
    if (!isObject(p) || typeof p.name !== "string") {
      throw new Error(`pass ${k} of the trace has no name`);
    }
    return {
      index: typeof p.index === "number" ? p.index : k,
      name: p.name,
      label: typeof p.label === "string" ? p.label : p.name,
      phase: typeof p.phase === "string" ? p.phase : "",
      duration_ms: typeof p.duration_ms === "number" ? p.duration_ms : 0,
      changed: p.changed !== false,
      what: optionalString(p.what),
      look_for: optionalString(p.look_for),
    };
  });
  return { kernel: typeof value.kernel === "string" ? value.kernel : "", title: optionalString(value.title) ?? "", passes };
}

export function parsePassDiff(value: unknown): PassDiff {
  if (!isObject(value) || !isObject(value.diff) || !Array.isArray(value.diff.rows)) {
    throw new Error("the server's pass IR has no diff rows");
  }
  const rows = value.diff.rows.filter(isObject).map(
    (r): DiffRow => ({
      kind: (KINDS.includes(String(r.kind)) ? r.kind : "same") as RowKind,
      text: String(r.text ?? ""),
      old: optionalNumber(r.old),
      new: optionalNumber(r.new),
      source: optionalNumber(r.source),
    }),
  );
  return {
    kernel: String(value.kernel ?? ""),
    index: Number(value.index),
    rows,
    added: Number(value.diff.added ?? 0),
    removed: Number(value.diff.removed ?? 0),
  };
}

export function visiblePasses(trace: PassTrace, showUnchanged: boolean): PassView[] {
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
