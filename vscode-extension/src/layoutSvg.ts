/**
 * Draws a buffer's layout as SVG from the server's `tilescope.plotLayout` grid: one cell per
 * element, coloured by the thread that owns it (fragments), by the memory bank it falls in
 * (shared buffers, when the server gives banks) or by its physical index. Built as a string so
 * it is tested without a browser, and small enough for a 128×128 tile.
 */

export interface LayoutGrid {
  shape: [number, number];
  thread?: number[][] | null;
  index?: number[][] | null;
  bank?: number[][] | null;
}

export type ColourBy = "thread" | "bank" | "index";

export interface PlotLayoutAnswer {
  layout: Record<string, unknown>;
  grid: LayoutGrid | null;
}

export function parsePlotLayout(value: unknown): PlotLayoutAnswer {
  if (typeof value !== "object" || value === null) {
    throw new Error("the server's layout answer is empty");
  }
  const v = value as Record<string, unknown>;
  const layout = (typeof v.layout === "object" && v.layout !== null ? v.layout : {}) as Record<string, unknown>;
  const g = v.grid as Record<string, unknown> | null | undefined;
  if (!g || !Array.isArray(g.shape) || g.shape.length !== 2) {
    return { layout, grid: null };
  }
  const matrix = (m: unknown): number[][] | null => (Array.isArray(m) ? (m as number[][]) : null);
  return {
    layout,
    grid: {
      shape: [Number(g.shape[0]), Number(g.shape[1])],
      thread: matrix(g.thread),
      index: matrix(g.index),
      bank: matrix(g.bank ?? g.banks),
    },
  };
}

/** The colourings this grid supports, best first. */
export function colourings(grid: LayoutGrid): ColourBy[] {
  const out: ColourBy[] = [];
  if (grid.thread) {
    out.push("thread");
  }
  if (grid.bank) {
    out.push("bank");
  }
  if (grid.index) {
    out.push("index");
  }
  return out;
}

/** A stable, well-spread hue per value (golden-angle steps), so neighbouring threads contrast. */
export function colour(value: number): string {
  const hue = Math.round((value * 137.508) % 360);
  const light = 55 + (Math.floor(value / 32) % 3) * 10;
  return `hsl(${hue},65%,${light}%)`;
}

export const MAX_WIDTH_PX = 1100;
const LABEL_MIN_CELL = 30;

export function cellSize(cols: number): number {
  return Math.max(4, Math.min(40, Math.floor(MAX_WIDTH_PX / Math.max(1, cols))));
}

export function renderSvg(grid: LayoutGrid, by: ColourBy): string {
  const [rows, cols] = grid.shape;
  const values = by === "thread" ? grid.thread : by === "bank" ? grid.bank : grid.index;
  if (!values) {
    throw new Error(`this layout has no ${by} values`);
  }
  const cell = cellSize(cols);
  const labels = cell >= LABEL_MIN_CELL;
  const width = cols * cell;
  const height = rows * cell;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="layout" width="${width}" height="${height}" ` +
      `viewBox="0 0 ${width} ${height}" data-rows="${rows}" data-cols="${cols}" data-cell="${cell}">`,
  ];
  for (let r = 0; r < rows; r++) {
    const row = values[r] ?? [];
    for (let c = 0; c < cols; c++) {
      const v = row[c];
      const fill = v === undefined || v === null ? "#888" : colour(v);
      parts.push(`<rect x="${c * cell}" y="${r * cell}" width="${cell}" height="${cell}" fill="${fill}"/>`);
      if (labels) {
        const t = grid.thread?.[r]?.[c];
        const i = grid.index?.[r]?.[c];
        const top = by === "bank" ? `b${v}` : t !== undefined && t !== null ? `T${t}` : "";
        const bottom = i !== undefined && i !== null ? String(i) : "";
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
