/**
 * An Ascend kernel's schedule as the server sends it (`tilescope.schedule`, the core's `ScheduleView`):
 * rows in program order, each in the Cube lane, the Vector lane or across both, the flag arrows by
 * row, and the memory plan. Validated here so that the drawing can trust every field.
 */

export type Lane = "cube" | "vector" | "both";
export type RowKind = "loop" | "op" | "flag" | "slot" | "control";
export type When = "next" | "next iteration" | "after the loop";

export interface FlagMark {
  kind: string;
  pipes: string;
  event: string;
  across: boolean;
  all_cores: boolean;
}

export interface ScheduleRow {
  row: number;
  lane: Lane;
  kind: RowKind;
  depth: number;
  text: string;
  line: number | null;
  flag: FlagMark | null;
}

export interface FlagArrow {
  source: number;
  target: number;
  across: boolean;
  label: string;
  when: When;
  vector_core: number | null;
  text: string;
}

export interface LevelPlan {
  level: string;
  used: number;
  capacity: number;
  fits: boolean;
  text: string;
  buffers: string[];
}

export interface PlacedBuffer {
  name: string;
  level: string;
  shape: string;
  dtype: string;
  slots: number;
  line: number | null;
  placement: string;
}

export interface ScheduleView {
  kernel: string;
  kind: string;
  cores: string;
  title: string;
  lens: string;
  levels: LevelPlan[];
  placed: PlacedBuffer[];
  simt_threads: number[];
  rows: ScheduleRow[];
  arrows: FlagArrow[];
  flags: number;
  flags_text: string;
  scheduled: boolean;
  lanes: Record<string, string>;
}

const LANES: readonly string[] = ["cube", "vector", "both"];
const KINDS: readonly string[] = ["loop", "op", "flag", "slot", "control"];
const WHEN: readonly string[] = ["next", "next iteration", "after the loop"];

function fail(what: string): never {
  throw new Error(`the server's schedule has ${what}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function list(v: unknown, what: string): unknown[] {
  return Array.isArray(v) ? v : fail(`no ${what} list`);
}

function text(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function optionalLine(v: unknown): number | null {
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : null;
}

function flagMark(v: unknown): FlagMark | null {
  if (!isObject(v)) {
    return null;
  }
  return { kind: text(v.kind), pipes: text(v.pipes), event: text(v.event), across: v.across === true, all_cores: v.all_cores === true };
}

function row(v: unknown, k: number): ScheduleRow {
  if (!isObject(v) || !LANES.includes(String(v.lane)) || !KINDS.includes(String(v.kind)) || typeof v.text !== "string") {
    fail(`a malformed row ${k}`);
  }
  return {
    row: k,
    lane: v.lane as Lane,
    kind: v.kind as RowKind,
    depth: typeof v.depth === "number" && v.depth >= 0 ? v.depth : 0,
    text: v.text,
    line: optionalLine(v.line),
    flag: flagMark(v.flag),
  };
}

function arrow(v: unknown, rows: number): FlagArrow {
  const inRange = (x: unknown): x is number => typeof x === "number" && Number.isInteger(x) && x >= 0 && x < rows;
  if (!isObject(v) || !inRange(v.source) || !inRange(v.target) || !WHEN.includes(String(v.when))) {
    fail("an arrow between rows it does not have");
  }
  return {
    source: v.source,
    target: v.target,
    across: v.across === true,
    label: text(v.label),
    when: v.when as When,
    vector_core: typeof v.vector_core === "number" ? v.vector_core : null,
    text: text(v.text),
  };
}

/** Validates the server's answer; throws with what was wrong so the view can say it. */
export function parseSchedule(value: unknown): ScheduleView {
  if (!isObject(value)) {
    fail("no fields");
  }
  const rows = list(value.rows, "rows").map(row);
  const levels = list(value.levels, "levels")
    .filter(isObject)
    .map((l) => ({
      level: text(l.level),
      used: Number(l.used ?? 0),
      capacity: Number(l.capacity ?? 0),
      fits: l.fits !== false,
      text: text(l.text),
      buffers: Array.isArray(l.buffers) ? l.buffers.map(String) : [],
    }));
  const placed = list(value.placed, "placed buffers")
    .filter(isObject)
    .map((b) => ({
      name: text(b.name),
      level: text(b.level),
      shape: text(b.shape),
      dtype: text(b.dtype),
      slots: Number(b.slots ?? 1),
      line: optionalLine(b.line),
      placement: text(b.placement),
    }));
  const lanes = isObject(value.lanes) ? Object.fromEntries(Object.entries(value.lanes).map(([k, v]) => [k, String(v)])) : {};
  return {
    kernel: text(value.kernel),
    kind: text(value.kind),
    cores: text(value.cores),
    title: text(value.title),
    lens: text(value.lens),
    levels,
    placed,
    simt_threads: Array.isArray(value.simt_threads) ? value.simt_threads.filter((t): t is number => typeof t === "number") : [],
    rows,
    arrows: list(value.arrows, "arrows").map((a) => arrow(a, rows.length)),
    flags: Number(value.flags ?? 0),
    flags_text: text(value.flags_text),
    scheduled: value.scheduled !== false,
    lanes: { cube: "Cube (AIC)", vector: "Vector (AIV)", both: "both cores", ...lanes },
  };
}

/**
 * Which row each loop row holds: the rows right after it that are deeper than it (a statement's depth
 * is the number of loops around it, a loop row's the number around the loop).
 */
export function loopEnds(rows: ScheduleRow[]): Map<number, number> {
  const ends = new Map<number, number>();
  rows.forEach((r, k) => {
    if (r.kind !== "loop") {
      return;
    }
    let end = k;
    while (end + 1 < rows.length && rows[end + 1].depth > r.depth) {
      end++;
    }
    ends.set(k, end);
  });
  return ends;
}

/**
 * Tracks for the arrows along one lane, so that arcs whose rows overlap are drawn side by side:
 * each arrow (by index into `spans`) takes the first track free over its rows.
 */
export function tracks(spans: [number, number][]): number[] {
  const taken: [number, number][][] = [];
  return spans.map(([a, b]) => {
    const lo = Math.min(a, b);
    const hi = Math.max(a, b);
    let track = taken.findIndex((used) => used.every(([x, y]) => hi < x || lo > y));
    if (track < 0) {
      track = taken.length;
      taken.push([]);
    }
    taken[track].push([lo, hi]);
    return track;
  });
}
