/**
 * The layout webview: draws the chosen buffer's layout as SVG, lets the user switch the
 * colouring (thread, bank, index) and the buffer, and reads out the cell under the pointer.
 */

import { escapeHtml } from "../html";
import { type ColourBy, colourings, type PlotLayoutAnswer, renderSvg } from "../layoutSvg";
import { byId, vscodeApi } from "./vscodeApi";

let answer: PlotLayoutAnswer | undefined;
let by: ColourBy = "thread";

const picker = byId<HTMLSelectElement>("buffer");
const modes = byId<HTMLDivElement>("modes");
const facts = byId<HTMLDivElement>("facts");
const plot = byId<HTMLDivElement>("plot");
const readout = byId<HTMLDivElement>("readout");

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
  const grid = answer.grid;
  if (!grid) {
    modes.innerHTML = "";
    plot.innerHTML = `<p class="hint">The server gave no element grid for this layout.</p>`;
    return;
  }
  const available = colourings(grid);
  if (!available.includes(by)) {
    by = available[0] ?? "index";
  }
  modes.innerHTML = available
    .map((m) => `<button class="mode${m === by ? " active" : ""}" data-mode="${m}">${m === "bank" ? "bank conflicts" : `by ${m}`}</button>`)
    .join("");
  plot.innerHTML = available.length ? renderSvg(grid, by) : `<p class="hint">No values to draw.</p>`;
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
    by = mode as ColourBy;
    render();
  }
});
picker.addEventListener("change", () => vscodeApi.postMessage({ type: "buffer", name: picker.value }));
plot.addEventListener("mousemove", (e) => {
  const svg = plot.querySelector("svg");
  const grid = answer?.grid;
  if (!svg || !grid) {
    return;
  }
  const box = svg.getBoundingClientRect();
  const cell = Number(svg.dataset.cell);
  const r = Math.floor((e.clientY - box.top) / cell);
  const c = Math.floor((e.clientX - box.left) / cell);
  if (r < 0 || c < 0 || r >= grid.shape[0] || c >= grid.shape[1]) {
    readout.textContent = "";
    return;
  }
  const parts = [`[${r}, ${c}]`];
  if (grid.thread) {
    parts.push(`thread ${grid.thread[r][c]}`);
  }
  if (grid.index) {
    parts.push(`index ${grid.index[r][c]}`);
  }
  if (grid.bank) {
    parts.push(`bank ${grid.bank[r][c]}`);
  }
  readout.textContent = parts.join(" · ");
});
vscodeApi.postMessage({ type: "ready" });
