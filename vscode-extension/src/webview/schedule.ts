/**
 * The schedule webview: draws the server's schedule view, reveals the source line of a clicked row
 * or buffer, and, under the pointer, brings out a row's flag arrows and the rows at both their ends.
 */

import { renderSchedule } from "../scheduleHtml";
import type { ScheduleView } from "../scheduleModel";
import { byId, vscodeApi } from "./vscodeApi";

const root = byId<HTMLDivElement>("schedule");

function clearHot(): void {
  root.querySelectorAll(".hot").forEach((el) => el.classList.remove("hot"));
}

/** Brings out the arrows that match `selector` and the rows they join. */
function heat(selector: string): void {
  clearHot();
  root.querySelectorAll<HTMLElement | SVGElement>(selector).forEach((el) => {
    el.classList.add("hot");
    for (const end of [el.dataset.source, el.dataset.target]) {
      root.querySelector(`.row[data-row="${end}"]`)?.classList.add("hot");
    }
  });
}

window.addEventListener("message", (event: MessageEvent) => {
  const msg = event.data as { type: string; view?: ScheduleView; message?: string };
  if (msg.type === "schedule" && msg.view) {
    root.innerHTML = renderSchedule(msg.view);
  } else if (msg.type === "loading") {
    root.innerHTML = `<p class="loading">Lowering the kernel for Ascend…</p>`;
  } else if (msg.type === "error") {
    root.innerHTML = `<p class="error"></p>`;
    (root.firstChild as HTMLElement).textContent = msg.message ?? "error";
  }
});

function reveal(target: EventTarget | null): boolean {
  const el = (target as Element | null)?.closest<HTMLElement>("[data-line]");
  if (el?.dataset.line) {
    vscodeApi.postMessage({ type: "reveal", line: Number(el.dataset.line) });
    return true;
  }
  return false;
}

root.addEventListener("click", (e) => reveal(e.target));
root.addEventListener("keydown", (e) => {
  if ((e.key === "Enter" || e.key === " ") && reveal(e.target)) {
    e.preventDefault();
  }
});
root.addEventListener("mouseover", (e) => {
  const el = e.target as Element;
  const arrow = el.closest<HTMLElement | SVGElement>("[data-arrow]");
  const row = el.closest<HTMLElement>(".row[data-row]");
  if (arrow) {
    heat(`path[data-arrow="${arrow.dataset.arrow}"], .flaglist li[data-arrow="${arrow.dataset.arrow}"]`);
  } else if (row) {
    const r = row.dataset.row;
    heat(`path[data-source="${r}"], path[data-target="${r}"], .flaglist li[data-source="${r}"], .flaglist li[data-target="${r}"]`);
  } else {
    clearHot();
  }
});
vscodeApi.postMessage({ type: "ready" });
