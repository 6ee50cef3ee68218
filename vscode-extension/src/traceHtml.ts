/**
 * HTML fragments of the pass-trace view: the pass list and one pass's IR diff. Pure, so the
 * webview script stays a thin event loop and the markup is unit-tested.
 */

import { escapeHtml } from "./html";
import { diffLines, hunks, splitLines } from "./lineDiff";
import { describePass, type PassInfo, type PassIR, passLabel, type PassTrace } from "./traceModel";

export function renderPassList(passes: PassInfo[], selected: number | undefined): string {
  if (passes.length === 0) {
    return `<li class="empty">No pass changed the IR.</li>`;
  }
  return passes
    .map((p) => {
      const classes = ["pass", p.changed ? "changed" : "unchanged", p.index === selected ? "selected" : ""].join(" ").trim();
      return (
        `<li class="${classes}" data-index="${p.index}" tabindex="0" title="${escapeHtml(p.phase)}">` +
        `<span class="idx">${p.index}</span><span class="name">${escapeHtml(passLabel(p))}</span>` +
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

function pyLine(lines: (number | null)[], k: number | undefined): string {
  const line = k === undefined ? null : lines[k];
  return line === null || line === undefined ? `<span class="py"></span>` : `<span class="py" data-line="${line}">py ${line}</span>`;
}

/** The diff of one pass with its catalog description; rows that map to Python lines are clickable. */
export function renderPassDiff(trace: PassTrace, pass: PassInfo, ir: PassIR): string {
  const description = describePass(trace, pass);
  const recorded = passLabel(pass) === pass.name ? "" : ` (recorded as ${escapeHtml(pass.name)})`;
  const head =
    `<h2>${pass.index}. ${escapeHtml(passLabel(pass))} <small>${escapeHtml(pass.phase)} · ${pass.duration_ms.toFixed(2)} ms${recorded}</small></h2>` +
    (description ? `<p class="about">${escapeHtml(description)}</p>` : "");
  const lines = diffLines(splitLines(ir.before), splitLines(ir.after));
  const groups = hunks(lines);
  if (groups.length === 0) {
    return head + `<p class="nochange">This pass left the IR unchanged.</p>`;
  }
  const body = groups
    .map((h) => {
      const first = h.lines[0];
      const header = `@@ -${(first.oldLine ?? 0) + 1} +${(first.newLine ?? 0) + 1} @@`;
      const rows = h.lines
        .map((l) => {
          const mark = l.op === "add" ? "+" : l.op === "del" ? "-" : " ";
          const py = l.op === "del" ? pyLine(ir.before_lines, l.oldLine) : pyLine(ir.after_lines, l.newLine);
          return `<div class="ln ${l.op}">${py}<span class="mark">${mark}</span><code>${escapeHtml(l.text)}</code></div>`;
        })
        .join("");
      return `<div class="hunk"><div class="hh">${header}</div>${rows}</div>`;
    })
    .join("");
  const added = lines.filter((l) => l.op === "add").length;
  const removed = lines.filter((l) => l.op === "del").length;
  return head + `<p class="stat"><span class="plus">+${added}</span> <span class="minus">−${removed}</span> lines</p>` + body;
}
