import assert from "node:assert/strict";
import { test } from "node:test";
import { GUTTER, MARGIN, renderFlagList, renderGutter, renderLanes, renderMargin, renderMemory, renderSchedule, ROW_HEIGHT } from "../src/scheduleHtml";
import { loopEnds, parseSchedule, tracks } from "../src/scheduleModel";
import { CORE_VIEWS } from "./coreViews";

const view = parseSchedule(CORE_VIEWS.schedule);

test("the schedule keeps the core's rows, lanes and arrows", () => {
  assert.equal(view.kernel, "gemm");
  assert.equal(view.lens, "Schedule · Cube + Vector · 17 flags");
  assert.deepEqual(
    view.rows.filter((r) => r.kind === "op").map((r) => [r.lane, r.text, r.line]),
    [
      ["cube", "copy X → x_l1", 77],
      ["cube", "copy W → w_l1", 78],
      ["cube", "gemm(x_l1, w_l1, res)", 79],
      ["cube", "copy res → temp", 81],
      ["vector", "copy temp → C", 82],
    ],
  );
  assert.equal(view.arrows.filter((a) => a.across).length, 8);
  assert.equal(view.lanes.cube, "Cube (AIC)");
});

test("an answer that is not a schedule is rejected with a reason", () => {
  assert.throws(() => parseSchedule({ kernel: "gemm" }), /no rows list/);
  const rows = [{ lane: "cube", kind: "op", text: "gemm", depth: 0 }];
  assert.throws(() => parseSchedule({ rows, levels: [], placed: [], arrows: [{ source: 0, target: 3, when: "next" }] }), /arrow between rows it does not have/);
  assert.throws(() => parseSchedule({ rows: [{ lane: "npu", kind: "op", text: "x" }], levels: [], placed: [], arrows: [] }), /malformed row 0/);
});

test("a loop holds the deeper rows right after it", () => {
  const ends = loopEnds(view.rows);
  assert.deepEqual([...ends.entries()], [
    [3, 19],
    [4, 11],
  ]);
});

test("arcs over overlapping rows take separate tracks", () => {
  assert.deepEqual(
    tracks([
      [0, 5],
      [1, 5],
      [8, 9],
      [11, 5],
      [11, 20],
    ]),
    [0, 1, 0, 2, 0],
  );
});

test("each lane's rows sit in its column at a fixed height, with their source line", () => {
  const html = renderLanes(view);
  assert.match(html, /class="row lane-cube kind-op" data-row="10" data-line="79" tabindex="0" style="grid-row:12;grid-column:2;--depth:2"/);
  assert.match(html, /<span class="sr">Cube \(AIC\): <\/span><span class="ln">L79<\/span><span class="tx">gemm\(x_l1, w_l1, res\)<\/span>/);
  assert.match(html, /class="row lane-vector kind-op" data-row="18" data-line="82"[^>]*grid-column:4/);
  assert.match(html, /class="row lane-both kind-loop" data-row="4" data-line="76" tabindex="0" data-end="11" style="grid-row:6;grid-column:2 \/ 5;--depth:1"/);
  assert.match(html, /┌ for kt in 2 · 2 stages · multi-buffered x_l1, w_l1/);
  assert.match(html, new RegExp(`grid-template-rows:auto repeat\\(${view.rows.length}, ${ROW_HEIGHT}px\\)`));
});

test("a Cube-Vector flag is a curve across the gutter from the setting row to the waiting one", () => {
  const svg = renderGutter(view);
  const y = (row: number) => row * ROW_HEIGHT + ROW_HEIGHT / 2;
  // Cube row 15 (arrive FIX flag 1) to Vector row 17 (wait MTE3 flag 1): left edge to right edge.
  assert.match(svg, new RegExp(`data-source="15" data-target="17" marker-end="url\\(#head-across\\)" d="M2,${y(15)} C${GUTTER / 2},${y(15)} ${GUTTER / 2},${y(17)} ${GUTTER - 3},${y(17)}"`));
  assert.match(svg, /<title>Cube \(AIC\) arrive FIX flag 1 → Vector \(AIV\) wait MTE3 flag 1 \(AIV 0\)<\/title>/);
  assert.match(svg, /class="from-cube">FIX→MTE3 #1 · AIV 0<\/text>/);
  // The Vector cores' release: back up to the loop's next iteration (dashed) and on after the loop (dotted).
  assert.match(svg, /class="arrow again" data-arrow="\d+" data-source="19" data-target="12"/);
  assert.match(svg, /class="arrow after" data-arrow="\d+" data-source="19" data-target="22"/);
  assert.match(svg, /class="from-vector">MTE3→FIX #0<\/text>/); // one label for arrows to both Vector cores
  assert.equal((svg.match(/<path class="arrow/g) ?? []).length, 8);
  assert.match(svg, /aria-hidden="true"/);
});

test("a pipe flag of one core is an arc in that lane's outer margin", () => {
  const cube = renderMargin(view, "cube");
  assert.equal((cube.match(/<path class="arrow/g) ?? []).length, 6);
  const y = (row: number) => row * ROW_HEIGHT + ROW_HEIGHT / 2;
  assert.match(cube, new RegExp(`data-source="8" data-target="9" marker-end="url\\(#head-cube\\)" d="M${MARGIN - 2},${y(8)} C${MARGIN - 10},${y(8)}`));
  assert.equal((renderMargin(view, "vector").match(/<path class="arrow/g) ?? []).length, 0);
});

test("the memory plan lists each level's use and where its buffers were placed", () => {
  const html = renderMemory(view);
  assert.match(html, /<strong>L1<\/strong> 256 KB of 512 KB/);
  assert.match(html, /role="meter" aria-label="L1 256 KB of 512 KB" aria-valuemin="0" aria-valuemax="524288" aria-valuenow="262144"><span style="width:50.0%">/);
  assert.match(html, /<li data-line="67" tabindex="0"><code>w_l1<\/code> 256×256 float8_e4m3fn · at buf_dyn_l1\+128 KB, 2 × 64 KB<\/li>/);
});

test("every arrow is also a line of text", () => {
  const html = renderFlagList(view);
  assert.equal((html.match(/<li /g) ?? []).length, view.arrows.length);
  assert.match(html, /Vector \(AIV\) arrive MTE3 flag 0 → Cube \(AIC\) wait FIX flag 16 \(AIV 1\), next iteration/);
  const page = renderSchedule(view);
  assert.match(page, /flags in the AscendC: 17 \(Cube 14, Vector 3\)/);
  assert.ok(page.indexOf("Memory plan") < page.indexOf('class="lanes"'));
});

test("names are escaped", () => {
  const odd = parseSchedule({ ...(CORE_VIEWS.schedule as object), kernel: "<k>", title: "a<b>" });
  assert.match(renderSchedule(odd), /a&lt;b&gt;/);
  assert.doesNotMatch(renderSchedule(odd), /<b>/);
});
