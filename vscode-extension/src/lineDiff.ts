/**
 * A line diff of a pass's IR before and after, grouped into hunks with context. The IR of one
 * pass differs from the last in a few places, so the common head and tail are trimmed first and
 * the longest common subsequence runs only on the changed middle.
 */

export type DiffOp = "same" | "add" | "del";

export interface DiffLine {
  op: DiffOp;
  text: string;
  /** 0-based line in `before` (for same/del) or `after` (for add and same). */
  oldLine?: number;
  newLine?: number;
}

export interface Hunk {
  lines: DiffLine[];
}

/** Past this many cells in the middle's table the diff reports the middle as one replacement. */
const MAX_TABLE_CELLS = 4_000_000;

export function diffLines(before: string[], after: string[]): DiffLine[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) {
    head++;
  }
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) {
    tail++;
  }
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) {
    out.push({ op: "same", text: before[i], oldLine: i, newLine: i });
  }
  out.push(...diffMiddle(before, after, head, before.length - tail, head, after.length - tail));
  for (let k = tail; k > 0; k--) {
    const i = before.length - k;
    const j = after.length - k;
    out.push({ op: "same", text: before[i], oldLine: i, newLine: j });
  }
  return out;
}

function diffMiddle(a: string[], b: string[], a0: number, a1: number, b0: number, b1: number): DiffLine[] {
  const n = a1 - a0;
  const m = b1 - b0;
  const out: DiffLine[] = [];
  if (n * m > MAX_TABLE_CELLS) {
    for (let i = a0; i < a1; i++) {
      out.push({ op: "del", text: a[i], oldLine: i });
    }
    for (let j = b0; j < b1; j++) {
      out.push({ op: "add", text: b[j], newLine: j });
    }
    return out;
  }
  // lcs[i][j]: length of the LCS of a[a0+i..a1) and b[b0+j..b1), in one flat array.
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] =
        a[a0 + i] === b[b0 + j]
          ? lcs[(i + 1) * width + j + 1] + 1
          : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[a0 + i] === b[b0 + j]) {
      out.push({ op: "same", text: a[a0 + i], oldLine: a0 + i, newLine: b0 + j });
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i * width + j + 1] >= lcs[(i + 1) * width + j])) {
      out.push({ op: "add", text: b[b0 + j], newLine: b0 + j });
      j++;
    } else {
      out.push({ op: "del", text: a[a0 + i], oldLine: a0 + i });
      i++;
    }
  }
  return out;
}

/** Groups changed lines with `context` unchanged lines around them; hunks closer than that merge. */
export function hunks(lines: DiffLine[], context = 3): Hunk[] {
  const changed = lines.map((l, k) => (l.op === "same" ? -1 : k)).filter((k) => k >= 0);
  const result: Hunk[] = [];
  let start = -1;
  let end = -1;
  for (const k of changed) {
    if (start >= 0 && k - context <= end + context) {
      end = k;
      continue;
    }
    if (start >= 0) {
      result.push({ lines: lines.slice(Math.max(0, start - context), Math.min(lines.length, end + context + 1)) });
    }
    start = k;
    end = k;
  }
  if (start >= 0) {
    result.push({ lines: lines.slice(Math.max(0, start - context), Math.min(lines.length, end + context + 1)) });
  }
  return result;
}

export function splitLines(text: string): string[] {
  return text.length === 0 ? [] : text.replace(/\r\n/g, "\n").replace(/\n$/, "").split("\n");
}
