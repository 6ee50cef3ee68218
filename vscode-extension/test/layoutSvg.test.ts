import assert from "node:assert/strict";
import { test } from "node:test";
import { cellSize, colour, colourings, parsePlotLayout, renderSvg } from "../src/layoutSvg";

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

test("a fragment grid is coloured by thread first", () => {
  const { grid } = parsePlotLayout(fragment);
  assert.ok(grid);
  assert.deepEqual(colourings(grid), ["thread", "index"]);
});

test("a shared grid with banks offers the bank-conflict view", () => {
  const { grid } = parsePlotLayout({ layout: {}, grid: { shape: [1, 2], index: [[0, 1]], banks: [[0, 0]] } });
  assert.ok(grid);
  assert.deepEqual(colourings(grid), ["bank", "index"]);
  assert.match(renderSvg(grid, "bank"), />b0</);
});

test("no grid from the server is kept as null, with the layout's facts", () => {
  const answer = parsePlotLayout({ layout: { kind: "layout" }, grid: null });
  assert.equal(answer.grid, null);
  assert.equal(answer.layout.kind, "layout");
});

test("the SVG has one cell per element, same thread same colour, labelled when large", () => {
  const { grid } = parsePlotLayout(fragment);
  assert.ok(grid);
  const svg = renderSvg(grid, "thread");
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
  const svg = renderSvg({ shape: [1, 128], thread: [row] }, "thread");
  assert.doesNotMatch(svg, /<text/);
});

test("colours differ between neighbouring threads", () => {
  assert.notEqual(colour(0), colour(1));
  assert.notEqual(colour(31), colour(32));
});

test("asking for a colouring the grid lacks is an error", () => {
  assert.throws(() => renderSvg({ shape: [1, 1], index: [[0]] }, "thread"), /no thread values/);
});
