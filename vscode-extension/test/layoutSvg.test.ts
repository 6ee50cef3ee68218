import assert from "node:assert/strict";
import { test } from "node:test";
import { cellSize, parseKernelLayout, readout, renderPanel } from "../src/layoutSvg";
import { CORE_VIEWS } from "./coreViews";

const answers = CORE_VIEWS.plotLayout.map(parseKernelLayout);
const [first, rowFragment, transposed, staged] = answers;

function fills(svg: string): string[] {
  return [...svg.matchAll(/<rect [^>]*fill="([^"]+)"/g)].map((m) => m[1]);
}

test("the default buffer and the buffer order are the core's", () => {
  assert.equal(first.buffer, "r_frag");
  for (const answer of answers) {
    assert.deepEqual(answer.buffers, ["r_frag", "t_frag", "S_shared"]);
  }
});

test("every panel draws the core's fold with the core's colour for each cell", () => {
  for (const { view } of answers) {
    for (const panel of view.panels) {
      const { svg, caption } = renderPanel(view, panel.id);
      assert.match(svg, new RegExp(`data-rows="${view.rows}" data-cols="${view.cols}"`));
      assert.deepEqual(
        fills(svg),
        panel.values.flat().map((v) => panel.colours[v]),
        `${view.buffer} ${panel.id}`,
      );
      assert.equal(caption, panel.caption);
    }
  }
});

test("a 64-element fragment is 4×16 and a 3-stage 16×32 shared buffer is its first 16×32 stage", () => {
  assert.deepEqual([rowFragment.view.rows, rowFragment.view.cols], [4, 16]);
  assert.deepEqual([staged.view.rows, staged.view.cols, staged.view.stages], [16, 32, 3]);
  for (const conflict of staged.view.conflicts) {
    const panel = staged.view.panels.find((p) => p.id === conflict.panel);
    assert.equal(panel?.values.length, 16);
  }
});

test("small tiles carry the core's labels; the readout names every panel's value", () => {
  const { svg } = renderPanel(transposed.view, "thread");
  assert.equal(cellSize(8), 40);
  assert.match(svg, />T8</);
  assert.match(svg, />r0</);
  assert.equal(readout(transposed.view, 1, 0), "[1, 0] · by thread: 1 · by register: 0 · T1 r0");
  assert.equal(readout(transposed.view, 9, 0), "");
});

test("a 128-wide tile fits the view and drops labels", () => {
  assert.equal(cellSize(128), 8);
  const values = [Array.from({ length: 128 }, (_, k) => k % 2)];
  const view = { ...transposed.view, rows: 1, cols: 128, labels: [], panels: [{ ...transposed.view.panels[0], values, colours: ["#000000", "#ffffff"] }] };
  assert.doesNotMatch(renderPanel(view, "thread").svg, /<text/);
});

test("an answer that does not fit its own grid is refused with the reason", () => {
  const broken = structuredClone(CORE_VIEWS.plotLayout[2]) as { view: { panels: { values: number[][] }[] } };
  broken.view.panels[0].values.pop();
  assert.throws(() => parseKernelLayout(broken), /8×8 values for thread/);
  assert.throws(() => parseKernelLayout({ kernel: "k" }), /no view/);
  assert.throws(() => renderPanel(transposed.view, "slot"), /no slot panel/);
});
