/**
 * Draws a buffer's layout as SVG from the server's `tilescope.plotLayout` answer: one cell per
 * element, coloured by the thread that owns it (fragments) or by its physical index (shared
 * buffers); and, when the server measured them, the bank-conflict degree of each shared-memory
 * access pattern. Built as a string so it is tested without a browser, and small enough for a
 * 128×128 tile.
 */

export interface LayoutGrid {
  shape: [number, number];
  thread: number[][] | null;
  index: number[][] | null;
}

/** One access pattern's conflict degree per element (1 = conflict-free), as the core measures it. */
export interface ConflictReport {
  pattern: string;
  description: string;
  degree: number[][];
  wavefronts: number;
  ideal: number;
}

export interface PlotLayoutAnswer {
  layout: Record<string, unknown>;
  grid: LayoutGrid | null;
  conflicts: ConflictReport[];
}

/** A way to colour the plot: by thread, by index, or by one pattern's conflict degree. */
export interface View {
  id: string;
  label: string;
}

function matrix(m: unknown): number[][] | null {
  return Array.isArray(m) && m.every(Array.isArray) ? (m as number[][]) : null;
}

export function parsePlotLayout(value: unknown): PlotLayoutAnswer {
  if (typeof value !== "object" || value === null) {
    throw new Error("the server's layout answer is empty");
  }
  const v = value as Record<string, unknown>;
  const layout = (typeof v.layout === "object" && v.layout !== null ? v.layout : {}) as Record<string, unknown>;
  const conflicts = (Array.isArray(v.conflicts) ? v.conflicts : [])
    .filter((c): c is Record<string, unknown> => typeof c === "object" && c !== null && matrix(c.degree) !== null)
    .map((c) => ({
      pattern: String(c.pattern ?? "access"),
      description: String(c.description ?? ""),
      degree: matrix(c.degree) as number[][],
      wavefronts: Number(c.wavefronts ?? 0),
      ideal: Number(c.ideal ?? 0),
    }));
  const g = v.grid as Record<string, unknown> | null | undefined;
  if (!g || !Array.isArray(g.shape) || g.shape.length !== 2) {
    return { layout, grid: null, conflicts };
  }
  return {
    layout,
    grid: { shape: [Number(g.shape[0]), Number(g.shape[1])], thread: matrix(g.thread), index: matrix(g.index) },
    conflicts,
  };
}

/** The views this answer supports, best first. */
export function views(answer: PlotLayoutAnswer): View[] {
  const out: View[] = [];
  if (answer.grid?.thread) {
    out.push({ id: "thread", label: "by thread" });
  }
  if (answer.grid?.index) {
    out.push({ id: "index", label: "by index" });
  }
  for (const c of answer.conflicts) {
    out.push({ id: `conflict:${c.pattern}`, label: `bank conflicts: ${c.pattern}` });
  }
  return out;
}

/** A stable, well-spread hue per value (golden-angle steps), so neighbouring threads contrast. */
export function colour(value: number): string {
  const hue = Math.round((value * 137.508) % 360);
  const light = 55 + (Math.floor(value / 32) % 3) * 10;
  return `hsl(${hue},65%,${light}%)`;
}

/** Green for conflict-free, through yellow and orange, to red at 8-way and worse. */
export function degreeColour(degree: number): string {
  const hue = Math.max(0, Math.round(130 - (130 * Math.log2(Math.max(1, degree))) / 3));
  return `hsl(${hue},70%,50%)`;
}

export const MAX_WIDTH_PX = 1100;
const LABEL_MIN_CELL = 30;

export function cellSize(cols: number): number {
  return Math.max(4, Math.min(40, Math.floor(MAX_WIDTH_PX / Math.max(1, cols))));
}

interface Plot {
  values: number[][];
  fill: (v: number) => string;
  label: (r: number, c: number, v: number) => [string, string];
}

function svg(rows: number, cols: number, plot: Plot): string {
  const cell = cellSize(cols);
  const labels = cell >= LABEL_MIN_CELL;
  const width = cols * cell;
  const height = rows * cell;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="layout" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" data-rows="${rows}" data-cols="${cols}" data-cell="${cell}">`,
  ];
  for (let r = 0; r < rows; r++) {
    const row = plot.values[r] ?? [];
    for (let c = 0; c < cols; c++) {
      const v = row[c];
      const known = typeof v === "number";
      parts.push(`<rect x="${c * cell}" y="${r * cell}" width="${cell}" height="${cell}" fill="${known ? plot.fill(v) : "#888"}"/>`);
      if (labels && known) {
        const [top, bottom] = plot.label(r, c, v);
        parts.push(
          `<text x="${c * cell + cell / 2}" y="${r * cell + cell * 0.42}" class="top">${top}</text>` +
            `<text x="${c * cell + cell / 2}" y="${r * cell + cell * 0.82}" class="bottom">${bottom}</text>`,
        );
      }
    }
  }
  parts.push("</svg>");
  return parts.join("");
}

/** The SVG of one view, and a caption saying what the colours mean. */
export function renderView(answer: PlotLayoutAnswer, id: string): { svg: string; caption: string } {
  const grid = answer.grid;
  if (id.startsWith("conflict:")) {
    const report = answer.conflicts.find((c) => `conflict:${c.pattern}` === id);
    if (!report) {
      throw new Error(`no conflict measurement ${id}`);
    }
    const rows = report.degree.length;
    const cols = report.degree[0]?.length ?? 0;
    const worst = Math.max(1, ...report.degree.map((row) => Math.max(...row)));
    const slowdown = report.ideal > 0 ? report.wavefronts / report.ideal : 1;
    return {
      svg: svg(rows, cols, { values: report.degree, fill: degreeColour, label: (_r, _c, v) => [`${v}×`, ""] }),
      caption:
        `${report.description}: worst ${worst}-way conflict, ${report.wavefronts} wavefronts for ${report.ideal} ` +
        `conflict-free (${slowdown.toFixed(2)}× slower). Green is conflict-free, red 8-way or worse.`,
    };
  }
  const values = id === "thread" ? grid?.thread : grid?.index;
  if (!grid || !values) {
    throw new Error(`this layout has no ${id} values`);
  }
  const thread = grid.thread;
  const index = grid.index;
  return {
    svg: svg(grid.shape[0], grid.shape[1], {
      values,
      fill: colour,
      label: (r, c) => [thread ? `T${thread[r]?.[c]}` : "", index ? String(index[r]?.[c]) : ""],
    }),
    caption:
      id === "thread"
        ? "Each cell is one element, coloured by the thread that holds it; the small number is its register index."
        : "Each cell is one element, coloured by its physical offset in the buffer.",
  };
}
