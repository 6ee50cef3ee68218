/**
 * HTML of the schedule view: the Cube lane and the Vector lane as two columns of rows at fixed
 * heights, loops and scalar control across both, and three SVG strips drawn over the same rows: the
 * gutter between the lanes holds the Cube-Vector flags as arrows, each lane's outer margin the flags
 * between two pipes of that core. Every row and every arrow is also text (the rows themselves, the
 * list of flags below), so the drawing is never the only way to read it. Pure, so the webview script
 * only sets it and wires clicks, and the markup is unit-tested.
 */

import { escapeHtml } from "./html";
import { type FlagArrow, loopEnds, type ScheduleRow, type ScheduleView, tracks } from "./scheduleModel";

/** Pixels: one row, the gutter between the lanes, each lane's outer margin. */
export const ROW_HEIGHT = 24;
export const GUTTER = 170;
export const MARGIN = 40;
const TRACK = 8;
const WHEN_CLASS: Record<FlagArrow["when"], string> = { next: "next", "next iteration": "again", "after the loop": "after" };

function centre(row: number): number {
  return row * ROW_HEIGHT + ROW_HEIGHT / 2;
}

function arrowTitle(a: FlagArrow): string {
  return `<title>${escapeHtml(a.text)}</title>`;
}

function marker(id: string, cls: string): string {
  return (
    `<marker id="${id}" class="${cls}" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">` +
    `<path d="M0,0 L8,4 L0,8 z"/></marker>`
  );
}

function arrowAttributes(a: FlagArrow, index: number, head: string): string {
  return `class="arrow ${WHEN_CLASS[a.when]}" data-arrow="${index}" data-source="${a.source}" data-target="${a.target}" marker-end="url(#${head})"`;
}

/**
 * The Cube-Vector flags, as curves across the gutter from the setting lane to the waiting one; one label
 * per setting row, naming the Vector core when all its arrows are for the same one.
 */
export function renderGutter(view: ScheduleView): string {
  const height = view.rows.length * ROW_HEIGHT;
  const across = view.arrows.map((a, k) => ({ a, k })).filter(({ a }) => a.across);
  const cores = new Map<number, Set<number | null>>();
  across.forEach(({ a }) => cores.set(a.source, (cores.get(a.source) ?? new Set()).add(a.vector_core)));
  const paths: string[] = [];
  const labels = new Map<number, string>();
  for (const { a, k } of across) {
    const fromCube = view.rows[a.source].lane === "cube";
    const [x0, x1] = fromCube ? [2, GUTTER - 3] : [GUTTER - 2, 3];
    const [y0, y1] = [centre(a.source), centre(a.target)];
    const mid = GUTTER / 2;
    paths.push(`<path ${arrowAttributes(a, k, "head-across")} d="M${x0},${y0} C${mid},${y0} ${mid},${y1} ${x1},${y1}">${arrowTitle(a)}</path>`);
    if (!labels.has(a.source)) {
      const only = [...(cores.get(a.source) ?? [])];
      const label = a.label + (only.length === 1 && only[0] !== null ? ` · AIV ${only[0]}` : "");
      const x = fromCube ? 6 : GUTTER - 6;
      labels.set(a.source, `<text x="${x}" y="${y0 - 4}" class="${fromCube ? "from-cube" : "from-vector"}">${escapeHtml(label)}</text>`);
    }
  }
  return (
    `<svg class="gutter" width="${GUTTER}" height="${height}" viewBox="0 0 ${GUTTER} ${height}" aria-hidden="true" ` +
    `style="grid-column:3;grid-row:2 / span ${Math.max(1, view.rows.length)}">` +
    `<defs>${marker("head-across", "head across")}</defs>${paths.join("")}${[...labels.values()].join("")}</svg>`
  );
}

/** The flags between two pipes of one core, as arcs in that lane's outer margin, side by side where they overlap. */
export function renderMargin(view: ScheduleView, lane: "cube" | "vector"): string {
  const height = view.rows.length * ROW_HEIGHT;
  const along = view.arrows.map((a, k) => ({ a, k })).filter(({ a }) => !a.across && view.rows[a.source].lane === lane);
  const taken = tracks(along.map(({ a }) => [a.source, a.target]));
  const head = `head-${lane}`;
  const paths = along.map(({ a, k }, i) => {
    const depth = Math.min(10 + TRACK * taken[i], MARGIN - 4);
    const [edge, bulge] = lane === "cube" ? [MARGIN - 2, MARGIN - depth] : [2, depth];
    const [y0, y1] = [centre(a.source), centre(a.target)];
    return `<path ${arrowAttributes(a, k, head)} d="M${edge},${y0} C${bulge},${y0} ${bulge},${y1} ${edge},${y1}">${arrowTitle(a)}</path>`;
  });
  return (
    `<svg class="margin ${lane}" width="${MARGIN}" height="${height}" viewBox="0 0 ${MARGIN} ${height}" aria-hidden="true" ` +
    `style="grid-column:${lane === "cube" ? 1 : 5};grid-row:2 / span ${Math.max(1, view.rows.length)}">` +
    `<defs>${marker(head, `head ${lane}`)}</defs>${paths.join("")}</svg>`
  );
}

const LANE_COLUMN: Record<ScheduleRow["lane"], string> = { cube: "2", vector: "4", both: "2 / 5" };

function rowHtml(view: ScheduleView, r: ScheduleRow, end: number | undefined): string {
  const classes = ["row", `lane-${r.lane}`, `kind-${r.kind}`];
  if (r.flag) {
    classes.push(r.flag.kind.endsWith("set") ? "set" : "wait", r.flag.across ? "across" : "along");
  }
  // A flag's line is the loop or statement the compiler put it at: kept for the click, not shown (as in the text).
  const line = r.line === null || r.flag ? "" : `<span class="ln">L${r.line}</span>`;
  const glyph = r.kind === "loop" ? "┌ " : "";
  const lane = `<span class="sr">${escapeHtml(view.lanes[r.lane] ?? r.lane)}: </span>`;
  const data = [`data-row="${r.row}"`, r.line === null ? "" : `data-line="${r.line}" tabindex="0"`, end === undefined ? "" : `data-end="${end}"`]
    .filter(Boolean)
    .join(" ");
  const style = `grid-row:${r.row + 2};grid-column:${LANE_COLUMN[r.lane]};--depth:${r.depth}`;
  return `<div class="${classes.join(" ")}" ${data} style="${style}" title="${escapeHtml(r.text)}">${lane}${line}<span class="tx">${glyph}${escapeHtml(r.text)}</span></div>`;
}

/** The two lanes, their rows and the arrows between them. */
export function renderLanes(view: ScheduleView): string {
  if (view.rows.length === 0) {
    return `<p class="hint">The schedule has no statements.</p>`;
  }
  const ends = loopEnds(view.rows);
  const head =
    `<div class="lanehead lane-cube" style="grid-row:1;grid-column:2">${escapeHtml(view.lanes.cube)}</div>` +
    `<div class="lanehead lane-vector" style="grid-row:1;grid-column:4">${escapeHtml(view.lanes.vector)}</div>`;
  const rows = view.rows.map((r) => rowHtml(view, r, ends.get(r.row))).join("");
  return (
    `<div class="lanes" style="grid-template-rows:auto repeat(${view.rows.length}, ${ROW_HEIGHT}px)" ` +
    `aria-label="${escapeHtml(`Schedule of ${view.kernel}: ${view.lanes.cube} on the left, ${view.lanes.vector} on the right`)}">` +
    head +
    rows +
    renderMargin(view, "cube") +
    renderGutter(view) +
    renderMargin(view, "vector") +
    `</div>`
  );
}

/** Each on-chip level's use against its capacity, with the buffers in it and where they were placed. */
export function renderMemory(view: ScheduleView): string {
  const byName = new Map(view.placed.map((b) => [b.name, b]));
  const levels = view.levels.map((level) => {
    const share = level.capacity > 0 ? Math.min(100, (100 * level.used) / level.capacity) : 0;
    const buffers = level.buffers
      .map((name) => {
        const b = byName.get(name);
        const line = b?.line ? ` data-line="${b.line}" tabindex="0"` : "";
        const what = b ? ` ${escapeHtml(b.shape)} ${escapeHtml(b.dtype)} · ${escapeHtml(b.placement)}` : "";
        return `<li${line}><code>${escapeHtml(name)}</code>${what}</li>`;
      })
      .join("");
    const over = level.fits ? "" : ` <span class="error">over capacity</span>`;
    return (
      `<div class="level${level.fits ? "" : " over"}"><div class="lh"><strong>${escapeHtml(level.level)}</strong> ${escapeHtml(level.text)}${over}</div>` +
      `<div class="bar" role="meter" aria-label="${escapeHtml(`${level.level} ${level.text}`)}" aria-valuemin="0" aria-valuemax="${level.capacity}" aria-valuenow="${level.used}">` +
      `<span style="width:${share.toFixed(1)}%"></span></div><ul>${buffers}</ul></div>`
    );
  });
  const simt = view.simt_threads.length ? `<p class="hint">SimtVF regions: ${view.simt_threads.join(", ")} threads</p>` : "";
  return `<section class="memory"><h3>Memory plan</h3><div class="levels">${levels.join("")}</div>${simt}</section>`;
}

/** Every arrow in words, in the order of the rows that set them. */
export function renderFlagList(view: ScheduleView): string {
  if (view.arrows.length === 0) {
    return "";
  }
  const items = view.arrows
    .map((a, k) => `<li class="${a.across ? "across" : "along"}" data-arrow="${k}" data-source="${a.source}" data-target="${a.target}">${escapeHtml(a.text)}</li>`)
    .join("");
  return `<section class="flaglist"><h3>Flags, set → wait</h3><ol>${items}</ol></section>`;
}

export function renderHeader(view: ScheduleView): string {
  const legend =
    `<span class="key lane-cube">${escapeHtml(view.lanes.cube)}</span><span class="key lane-vector">${escapeHtml(view.lanes.vector)}</span>` +
    `<span class="key line next">same pass</span><span class="key line again">next iteration</span><span class="key line after">after the loop</span>`;
  const unscheduled = view.scheduled ? "" : `<p class="error">Lowering stopped before tl.InsertSync: no flags were placed.</p>`;
  return (
    `<header><div><strong>${escapeHtml(view.title)}</strong> · ${escapeHtml(view.flags_text)}</div>` +
    `<div class="legend">${legend}</div>${unscheduled}</header>`
  );
}

export function renderSchedule(view: ScheduleView): string {
  return renderHeader(view) + renderMemory(view) + renderLanes(view) + renderFlagList(view);
}
