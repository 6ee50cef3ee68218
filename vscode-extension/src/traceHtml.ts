/**
 * HTML fragments of the pass-trace view: the pass list and one pass's IR diff, drawn from the
 * core's rows as the server sent them. Pure, so the webview script stays a thin event loop and
 * the markup is unit-tested.
 */

import { escapeHtml } from "./html";
import type { DiffRow, PassDiff, PassTrace, PassView } from "./traceModel";

export function renderPassList(passes: PassView[], selected: number | undefined): string {
  if (passes.length === 0) {
    return `<li class="empty">No pass changed the IR.</li>`;
  }
  return passes
    .map((p) => {
      const classes = ["pass", p.changed ? "changed" : "unchanged", p.index === selected ? "selected" : ""].join(" ").trim();
      return (
        `<li class="${classes}" data-index="${p.index}" tabindex="0" title="${escapeHtml(p.phase)}">` +
        `<span class="idx">${p.index}</span><span class="name">${escapeHtml(p.label)}</span>` +
        `<span class="ms">${p.duration_ms.toFixed(2)} ms</span></li>`
      );
    })
    .join("");
}

export function renderSummary(trace: PassTrace, shown: number): string {
  const changed = trace.passes.filter((p) => p.changed).length;
  return (
    `<strong>${escapeHtml(trace.kernel || "kernel")}</strong>: ${trace.passes.length} passes, ` +
    `${changed} changed the IR (${shown} listed)`
  );
}

function pyLine(row: DiffRow): string {
  return row.source === null ? `<span class="py"></span>` : `<span class="py" data-line="${row.source}">py ${row.source}</span>`;
}

const MARKS: Record<DiffRow["kind"], string> = { same: " ", add: "+", del: "-", hunk: "" };

/** The diff of one pass with the catalogue's words; rows that map to Python lines are clickable. */
export function renderPassDiff(pass: PassView, diff: PassDiff): string {
  const head =
    `<h2>${pass.index}. ${escapeHtml(pass.label)} <small>${escapeHtml(pass.phase)} · ${pass.duration_ms.toFixed(2)} ms</small></h2>` +
    (pass.what ? `<p class="about">${escapeHtml(pass.what)}</p>` : "") +
    (pass.look_for ? `<p class="about look">Look for: ${escapeHtml(pass.look_for)}</p>` : "");
  if (diff.rows.length === 0) {
    return head + `<p class="nochange">This pass left the IR unchanged.</p>`;
  }
  const hunks: string[] = [];
  let open = false;
  for (const row of diff.rows) {
    if (row.kind === "hunk") {
      hunks.push(`${open ? "</div>" : ""}<div class="hunk"><div class="hh">${escapeHtml(row.text)}</div>`);
      open = true;
      continue;
    }
    hunks.push(`<div class="ln ${row.kind}">${pyLine(row)}<span class="mark">${MARKS[row.kind]}</span><code>${escapeHtml(row.text)}</code></div>`);
  }
  if (open) {
    hunks.push("</div>");
  }
  return head + `<p class="stat"><span class="plus">+${diff.added}</span> <span class="minus">−${diff.removed}</span> lines</p>` + hunks.join("");
}
