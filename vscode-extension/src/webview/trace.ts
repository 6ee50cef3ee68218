/**
 * The pass-trace webview: lists passes (unchanged ones hidden unless asked), steps through
 * changes with n/p or the buttons, and shows the selected pass's IR diff, which the extension
 * fetches from the server on demand.
 */

import { renderPassDiff, renderPassList, renderSummary } from "../traceHtml";
import { nextChange, type PassDiff, type PassTrace, visiblePasses } from "../traceModel";
import { byId, vscodeApi } from "./vscodeApi";

let trace: PassTrace | undefined;
let selected: number | undefined;
let showUnchanged = false;

const list = byId<HTMLUListElement>("passes");
const detail = byId<HTMLDivElement>("detail");
const summary = byId<HTMLDivElement>("summary");
const unchangedBox = byId<HTMLInputElement>("show-unchanged");

function renderList(): void {
  if (!trace) {
    return;
  }
  const hadFocus = list.contains(document.activeElement);
  const shown = visiblePasses(trace, showUnchanged);
  list.innerHTML = renderPassList(shown, selected);
  summary.innerHTML = renderSummary(trace, shown.length);
  const current = list.querySelector<HTMLElement>(".selected");
  current?.scrollIntoView({ block: "nearest" });
  if (hadFocus) {
    current?.focus();
  }
}

function select(index: number | undefined): void {
  if (index === undefined || !trace) {
    return;
  }
  selected = index;
  renderList();
  detail.innerHTML = `<p class="loading">Loading the IR around pass ${index}…</p>`;
  vscodeApi.postMessage({ type: "select", index });
}

function step(direction: 1 | -1): void {
  if (trace) {
    select(nextChange(trace, selected, direction));
  }
}

window.addEventListener("message", (event: MessageEvent) => {
  const msg = event.data as { type: string; trace?: PassTrace; index?: number; diff?: PassDiff; message?: string };
  if (msg.type === "trace" && msg.trace) {
    trace = msg.trace;
    selected = undefined;
    renderList();
    detail.innerHTML = `<p class="hint">Pick a pass, or press <kbd>n</kbd> for the first change.</p>`;
  } else if (msg.type === "ir" && msg.diff && trace && msg.index === selected) {
    const pass = trace.passes.find((p) => p.index === msg.index);
    if (pass) {
      detail.innerHTML = renderPassDiff(pass, msg.diff);
    }
  } else if (msg.type === "error") {
    detail.innerHTML = `<p class="error"></p>`;
    (detail.firstChild as HTMLElement).textContent = msg.message ?? "error";
  }
});

list.addEventListener("click", (e) => {
  const item = (e.target as HTMLElement).closest<HTMLElement>("li.pass");
  if (item?.dataset.index) {
    select(Number(item.dataset.index));
  }
});
list.addEventListener("keydown", (e) => {
  const item = (e.target as HTMLElement).closest<HTMLElement>("li.pass");
  if (item?.dataset.index && (e.key === "Enter" || e.key === " ")) {
    e.preventDefault();
    select(Number(item.dataset.index));
  }
});
detail.addEventListener("click", (e) => {
  const py = (e.target as HTMLElement).closest<HTMLElement>(".py[data-line]");
  if (py?.dataset.line) {
    vscodeApi.postMessage({ type: "reveal", line: Number(py.dataset.line) });
  }
});
unchangedBox.addEventListener("change", () => {
  showUnchanged = unchangedBox.checked;
  renderList();
});
byId("next").addEventListener("click", () => step(1));
byId("prev").addEventListener("click", () => step(-1));
window.addEventListener("keydown", (e) => {
  if (e.key === "n" || e.key === "j") {
    step(1);
  } else if (e.key === "p" || e.key === "k") {
    step(-1);
  }
});
vscodeApi.postMessage({ type: "ready" });
