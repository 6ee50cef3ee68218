import assert from "node:assert/strict";
import { test } from "node:test";
import { cellSize, colour, degreeColour, parsePlotLayout, renderView, views } from "../src/layoutSvg";

const fragment = {
  layout: { buffer: "C_local", kind: "fragment", thread: "_i % 2" },
  grid: {
    shape: [2, 2],
    thread: [
      [0, 1],
      [1, 0],
    ],
    index: [
      [0, 0],
      [1, 1],
    ],
  },
};

const shared = {
  layout: { buffer: "A_shared", kind: "layout" },
  grid: { shape: [1, 2], thread: null, index: [[0, 1]] },
  conflicts: [{ pattern: "column", description: "each thread reads one element down a column", degree: [[8, 1]], wavefronts: 16, ideal: 2 }],
};

test("a fragment is viewed by thread first, then by index", () => {
  assert.deepEqual(
    views(parsePlotLayout(fragment)).map((v) => v.id),
    ["thread", "index"],
  );
});

test("a shared buffer with measured conflicts offers one bank-conflict view per access pattern", () => {
  const answer = parsePlotLayout(shared);
  assert.deepEqual(
    views(answer).map((v) => v.label),
    ["by index", "bank conflicts: column"],
  );
  const { svg, caption } = renderView(answer, "conflict:column");
  assert.match(caption, /worst 8-way conflict, 16 wavefronts for 2 conflict-free \(8\.00× slower\)/);
  assert.match(svg, new RegExp(`fill="${degreeColour(8).replace(/[()]/g, "\\$&")}"`));
  assert.match(svg, />8×</);
});

test("conflict-free is green and 8-way is red", () => {
  assert.equal(degreeColour(1), "hsl(130,70%,50%)");
  assert.equal(degreeColour(8), "hsl(0,70%,50%)");
  assert.equal(degreeColour(32), "hsl(0,70%,50%)");
});

test("no grid from the server is kept as null, with the layout's facts", () => {
  const answer = parsePlotLayout({ layout: { kind: "layout" }, grid: null });
  assert.equal(answer.grid, null);
  assert.equal(answer.layout.kind, "layout");
  assert.deepEqual(views(answer), []);
});

test("the SVG has one cell per element, same thread same colour, labelled when large", () => {
  const { svg } = renderView(parsePlotLayout(fragment), "thread");
  assert.equal((svg.match(/<rect /g) ?? []).length, 4);
  const fills = [...svg.matchAll(/fill="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(fills[0], fills[3]);
  assert.notEqual(fills[0], fills[1]);
  assert.match(svg, />T1</);
  assert.match(svg, /data-rows="2" data-cols="2"/);
});

test("a 128-wide tile fits the view and drops labels", () => {
  assert.equal(cellSize(128), 8);
  const row = Array.from({ length: 128 }, (_, k) => k);
  const { svg } = renderView(parsePlotLayout({ layout: {}, grid: { shape: [1, 128], thread: [row], index: [row] } }), "thread");
  assert.doesNotMatch(svg, /<text/);
});

test("colours differ between neighbouring threads", () => {
  assert.notEqual(colour(0), colour(1));
  assert.notEqual(colour(31), colour(32));
});

test("asking for a view the answer lacks is an error", () => {
  assert.throws(() => renderView(parsePlotLayout(shared), "thread"), /no thread values/);
  assert.throws(() => renderView(parsePlotLayout(shared), "conflict:ldmatrix"), /no conflict measurement/);
});
