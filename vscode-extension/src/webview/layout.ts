/**
 * The layout webview: draws the server's layout view as SVG, lets the user switch panels (by
 * thread, by register, by slot, bank conflicts per access pattern) and buffers, and reads out the
 * cell under the pointer.
 */

import { escapeHtml } from "../html";
import { type KernelLayout, readout, renderPanel } from "../layoutSvg";
import { byId, vscodeApi } from "./vscodeApi";

let answer: KernelLayout | undefined;
let panel = "";

const picker = byId<HTMLSelectElement>("buffer");
const modes = byId<HTMLDivElement>("modes");
const title = byId<HTMLDivElement>("title");
const facts = byId<HTMLDivElement>("facts");
const plot = byId<HTMLDivElement>("plot");
const legend = byId<HTMLDivElement>("legend");
const readoutLine = byId<HTMLDivElement>("readout");
const caption = byId<HTMLDivElement>("caption");

function render(): void {
  if (!answer) {
    return;
  }
  const view = answer.view;
  title.innerHTML = `<strong>${escapeHtml(view.title)}</strong><div class="hint">${escapeHtml(view.subtitle)}</div>`;
  facts.innerHTML = `<table>${view.facts.map((f) => `<tr><th>${escapeHtml(f.name)}</th><td><code>${escapeHtml(f.value)}</code></td></tr>`).join("")}</table>`;
  if (!view.panels.some((p) => p.id === panel)) {
    panel = view.panels[0].id;
  }
  modes.innerHTML = view.panels
    .map((p) => `<button class="mode${p.id === panel ? " active" : ""}" data-mode="${escapeHtml(p.id)}">${escapeHtml(p.label)}</button>`)
    .join("");
  const drawn = renderPanel(view, panel);
  caption.textContent = drawn.caption;
  legend.innerHTML = (view.panels.find((p) => p.id === panel)?.legend ?? [])
    .map((e) => `<span><span class="swatch" style="background:${escapeHtml(e.colour)}"></span>${escapeHtml(e.label)}</span>`)
    .join("");
  plot.innerHTML = drawn.svg;
}

window.addEventListener("message", (event: MessageEvent) => {
  const msg = event.data as { type: string; answer?: KernelLayout; message?: string };
  if (msg.type === "layout" && msg.answer) {
    answer = msg.answer;
    const chosen = answer.buffer;
    picker.innerHTML = answer.buffers.map((b) => `<option${b === chosen ? " selected" : ""}>${escapeHtml(b)}</option>`).join("");
    render();
  } else if (msg.type === "error") {
    plot.innerHTML = `<p class="error"></p>`;
    (plot.firstChild as HTMLElement).textContent = msg.message ?? "error";
  }
});

modes.addEventListener("click", (e) => {
  const mode = (e.target as HTMLElement).closest<HTMLElement>("[data-mode]")?.dataset.mode;
  if (mode) {
    panel = mode;
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
  readoutLine.textContent = readout(answer.view, Math.floor((e.clientY - box.top) / cell), Math.floor((e.clientX - box.left) / cell));
});
vscodeApi.postMessage({ type: "ready" });
