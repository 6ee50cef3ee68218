/**
 * The layout webview: draws the chosen buffer's layout as SVG, lets the user switch the view
 * (by thread, by index, bank conflicts per access pattern) and the buffer, and reads out the
 * cell under the pointer.
 */

import { escapeHtml } from "../html";
import { type PlotLayoutAnswer, renderView, views } from "../layoutSvg";
import { byId, vscodeApi } from "./vscodeApi";

let answer: PlotLayoutAnswer | undefined;
let view = "thread";

const picker = byId<HTMLSelectElement>("buffer");
const modes = byId<HTMLDivElement>("modes");
const facts = byId<HTMLDivElement>("facts");
const plot = byId<HTMLDivElement>("plot");
const readout = byId<HTMLDivElement>("readout");
const caption = byId<HTMLDivElement>("caption");

const FACT_KEYS = ["kind", "input_shape", "output_shape", "thread_extent", "elements_per_thread", "replicate", "swizzle", "thread", "index", "text"];

function renderFacts(layout: Record<string, unknown>): string {
  const rows = FACT_KEYS.filter((k) => layout[k] !== undefined && layout[k] !== null && layout[k] !== "").map((k) => {
    const v = layout[k];
    const text = Array.isArray(v) ? (k.endsWith("shape") ? v.join(" × ") : v.join(", ")) : String(v);
    return `<tr><th>${escapeHtml(k.replace(/_/g, " "))}</th><td><code>${escapeHtml(text)}</code></td></tr>`;
  });
  return `<table>${rows.join("")}</table>`;
}

function render(): void {
  if (!answer) {
    return;
  }
  facts.innerHTML = renderFacts(answer.layout);
  const available = views(answer);
  if (!available.some((v) => v.id === view)) {
    view = available[0]?.id ?? "";
  }
  modes.innerHTML = available
    .map((v) => `<button class="mode${v.id === view ? " active" : ""}" data-mode="${escapeHtml(v.id)}">${escapeHtml(v.label)}</button>`)
    .join("");
  if (!view) {
    caption.textContent = "";
    plot.innerHTML = `<p class="hint">The server gave no element grid for this layout.</p>`;
    return;
  }
  const drawn = renderView(answer, view);
  caption.textContent = drawn.caption;
  plot.innerHTML = drawn.svg;
}

window.addEventListener("message", (event: MessageEvent) => {
  const msg = event.data as { type: string; buffer?: string; buffers?: string[]; answer?: PlotLayoutAnswer; message?: string };
  if (msg.type === "layout" && msg.answer) {
    answer = msg.answer;
    picker.innerHTML = (msg.buffers ?? [msg.buffer ?? ""])
      .map((b) => `<option${b === msg.buffer ? " selected" : ""}>${escapeHtml(b)}</option>`)
      .join("");
    render();
  } else if (msg.type === "error") {
    plot.innerHTML = `<p class="error"></p>`;
    (plot.firstChild as HTMLElement).textContent = msg.message ?? "error";
  }
});

modes.addEventListener("click", (e) => {
  const mode = (e.target as HTMLElement).closest<HTMLElement>("[data-mode]")?.dataset.mode;
  if (mode) {
    view = mode;
    render();
  }
});
picker.addEventListener("change", () => vscodeApi.postMessage({ type: "buffer", name: picker.value }));
plot.addEventListener("mousemove", (e) => {
  const svg = plot.querySelector("svg");
  if (!svg || !answer) {
    return;
  }
  const box = svg.getBoundingClientRect();
  const cell = Number(svg.dataset.cell);
  const r = Math.floor((e.clientY - box.top) / cell);
  const c = Math.floor((e.clientX - box.left) / cell);
  if (r < 0 || c < 0 || r >= Number(svg.dataset.rows) || c >= Number(svg.dataset.cols)) {
    readout.textContent = "";
    return;
  }
  const parts = [`[${r}, ${c}]`];
  const conflict = answer.conflicts.find((x) => `conflict:${x.pattern}` === view);
  if (conflict) {
    parts.push(`${conflict.degree[r][c]}-way`);
  } else {
    if (answer.grid?.thread) {
      parts.push(`thread ${answer.grid.thread[r][c]}`);
    }
    if (answer.grid?.index) {
      parts.push(`index ${answer.grid.index[r][c]}`);
    }
  }
  readout.textContent = parts.join(" · ");
});
vscodeApi.postMessage({ type: "ready" });
