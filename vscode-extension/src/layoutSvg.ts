/**
 * Draws the server's layout view (`tilescope.plotLayout`, the core's `KernelLayout`) as SVG. The
 * fold, the colours, the labels and the order of the buffers are all the core's: each panel
 * gives a value per cell and one colour per value, so this module only lays out rectangles. Built
 * as a string so it is tested without a browser, and small enough for a 128×128 tile.
 */

export interface LegendEntry {
  label: string;
  colour: string;
}

/** One way to colour the grid: `values[r][c]` is drawn in `colours[values[r][c]]`. */
export interface Panel {
  id: string;
  label: string;
  caption: string;
  values: number[][];
  colours: string[];
  legend: LegendEntry[];
}

export interface Conflict {
  pattern: string;
  description: string;
  worst: number;
  wavefronts: number;
  ideal: number;
  slowdown: number;
  panel: string;
}

export interface Fact {
  name: string;
  value: string;
}

export interface LayoutView {
  buffer: string;
  kind: "fragment" | "shared";
  dtype: string;
  title: string;
  subtitle: string;
  shape: number[];
  rows: number;
  cols: number;
  stages: number;
  fold: string;
  /** One or two text lines for each cell of the top-left corner the core labels. */
  labels: string[][][];
  panels: Panel[];
  conflicts: Conflict[];
  facts: Fact[];
}

/** The kernel's layout buffers in the core's plot order, and the view of the chosen one. */
export interface KernelLayout {
  kernel: string;
  buffer: string;
  buffers: string[];
  view: LayoutView;
}

function fail(what: string): never {
  throw new Error(`the server's layout answer has no ${what}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function numberGrid(v: unknown, rows: number, cols: number, what: string): number[][] {
  if (!Array.isArray(v) || v.length !== rows || !v.every((row) => Array.isArray(row) && row.length === cols && row.every((x) => Number.isInteger(x)))) {
    fail(`${rows}×${cols} ${what}`);
  }
  return v as number[][];
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string")) {
    fail(what);
  }
  return v as string[];
}

function parsePanel(p: unknown, rows: number, cols: number): Panel {
  if (!isObject(p) || typeof p.id !== "string") {
    fail("panel id");
  }
  const colours = strings(p.colours, `colours for ${p.id}`);
  const values = numberGrid(p.values, rows, cols, `values for ${p.id}`);
  if (values.some((row) => row.some((v) => v < 0 || v >= colours.length))) {
    fail(`colour for every value of ${p.id}`);
  }
  const legend = (Array.isArray(p.legend) ? p.legend : []).filter(isObject).map((e) => ({ label: String(e.label), colour: String(e.colour) }));
  return { id: p.id, label: String(p.label ?? p.id), caption: String(p.caption ?? ""), values, colours, legend };
}

/** Validates the server's answer; throws with what was missing so the view can say it. */
export function parseKernelLayout(value: unknown): KernelLayout {
  if (!isObject(value) || !isObject(value.view)) {
    fail("view");
  }
  const v = value.view;
  const rows = Number(v.rows);
  const cols = Number(v.cols);
  if (!(rows > 0 && cols > 0)) {
    fail("grid size");
  }
  const panels = (Array.isArray(v.panels) ? v.panels : []).map((p) => parsePanel(p, rows, cols));
  if (panels.length === 0) {
    fail("panels");
  }
  const view: LayoutView = {
    buffer: String(v.buffer ?? ""),
    kind: v.kind === "fragment" ? "fragment" : "shared",
    dtype: String(v.dtype ?? ""),
    title: String(v.title ?? ""),
    subtitle: String(v.subtitle ?? ""),
    shape: Array.isArray(v.shape) ? v.shape.map(Number) : [rows, cols],
    rows,
    cols,
    stages: Number(v.stages ?? 1),
    fold: String(v.fold ?? ""),
    labels: Array.isArray(v.labels) ? (v.labels as string[][][]) : [],
    panels,
    conflicts: (Array.isArray(v.conflicts) ? v.conflicts : []).filter(isObject).map((c) => ({
      pattern: String(c.pattern),
      description: String(c.description ?? ""),
      worst: Number(c.worst),
      wavefronts: Number(c.wavefronts),
      ideal: Number(c.ideal),
      slowdown: Number(c.slowdown),
      panel: String(c.panel),
    })),
    facts: (Array.isArray(v.facts) ? v.facts : []).filter(isObject).map((f) => ({ name: String(f.name), value: String(f.value) })),
  };
  const buffers = strings(value.buffers ?? [view.buffer], "buffer list");
  return { kernel: String(value.kernel ?? ""), buffer: String(value.buffer ?? view.buffer), buffers, view };
}

export const MAX_WIDTH_PX = 1100;
const LABEL_MIN_CELL = 30;

export function cellSize(cols: number): number {
  return Math.max(4, Math.min(40, Math.floor(MAX_WIDTH_PX / Math.max(1, cols))));
}

function escapeText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Whether every cell has a label from the core (it labels only a corner of large tiles). */
function fullyLabelled(view: LayoutView): boolean {
  return view.labels.length === view.rows && view.labels.every((row) => row.length === view.cols);
}

/** The SVG of one panel, and the caption saying what its colours mean. */
export function renderPanel(view: LayoutView, id: string): { svg: string; caption: string } {
  const panel = view.panels.find((p) => p.id === id);
  if (!panel) {
    throw new Error(`the layout of ${view.buffer} has no ${id} panel`);
  }
  const cell = cellSize(view.cols);
  const labels = cell >= LABEL_MIN_CELL && fullyLabelled(view);
  const width = view.cols * cell;
  const height = view.rows * cell;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="layout" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" data-rows="${view.rows}" data-cols="${view.cols}" data-cell="${cell}">`,
  ];
  for (let r = 0; r < view.rows; r++) {
    for (let c = 0; c < view.cols; c++) {
      parts.push(`<rect x="${c * cell}" y="${r * cell}" width="${cell}" height="${cell}" fill="${panel.colours[panel.values[r][c]]}"/>`);
      if (labels) {
        const [top = "", bottom = ""] = view.labels[r][c];
        parts.push(
          `<text x="${c * cell + cell / 2}" y="${r * cell + cell * (bottom ? 0.42 : 0.62)}" class="top">${escapeText(top)}</text>` +
            (bottom ? `<text x="${c * cell + cell / 2}" y="${r * cell + cell * 0.82}" class="bottom">${escapeText(bottom)}</text>` : ""),
        );
      }
    }
  }
  parts.push("</svg>");
  return { svg: parts.join(""), caption: panel.caption };
}

/** What the pointer is over: the cell, every panel's value there, and the core's label if it has one. */
export function readout(view: LayoutView, r: number, c: number): string {
  if (r < 0 || c < 0 || r >= view.rows || c >= view.cols) {
    return "";
  }
  const parts = [`[${r}, ${c}]`, ...view.panels.map((p) => `${p.label}: ${p.values[r][c]}`)];
  const label = view.labels[r]?.[c];
  if (label) {
    parts.push(label.join(" "));
  }
  return parts.join(" · ");
}
