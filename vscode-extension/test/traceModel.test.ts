import assert from "node:assert/strict";
import { test } from "node:test";
import { renderPassDiff, renderPassList } from "../src/traceHtml";
import { nextChange, parsePassDiff, parseTrace, visiblePasses } from "../src/traceModel";
import { CORE_VIEWS } from "./coreViews";

const trace = parseTrace(CORE_VIEWS.tracePasses);
const diff = parsePassDiff(CORE_VIEWS.passIR);

test("the trace shows the core's labels and catalogue words", () => {
  assert.equal(trace.kernel, "fixture");
  assert.equal(trace.passes[0].label, "pass_fn (tl.FragmentLoopChecker)");
  assert.match(trace.passes[1].what ?? "", /layout/i);
  assert.equal(trace.passes[2].what, null);
  assert.match(renderPassList(trace.passes, undefined), /pass_fn \(tl\.FragmentLoopChecker\)/);
});

test("an answer without passes is rejected with a reason", () => {
  assert.throws(() => parseTrace({ kernel: "main" }), /no passes list/);
  assert.throws(() => parsePassDiff({ before: "a", after: "b" }), /no diff rows/);
});

test("unchanged passes are hidden unless asked for", () => {
  assert.deepEqual(
    visiblePasses(trace, false).map((p) => p.index),
    [1, 2],
  );
  assert.equal(visiblePasses(trace, true).length, 3);
});

test("next and previous change step over unchanged passes and wrap", () => {
  assert.equal(nextChange(trace, undefined, 1), 1);
  assert.equal(nextChange(trace, 1, 1), 2);
  assert.equal(nextChange(trace, 2, 1), 1);
  assert.equal(nextChange(trace, 0, -1), 2);
  assert.equal(nextChange({ ...trace, passes: [trace.passes[0]] }, undefined, 1), undefined);
});

test("the pass list marks the selection and escapes names", () => {
  const html = renderPassList([{ ...trace.passes[1], index: 7, label: "a<b>" }], 7);
  assert.match(html, /class="pass changed selected" data-index="7"/);
  assert.match(html, /a&lt;b&gt;/);
});

test("a pass diff draws the core's rows: hunks, added and removed lines with their Python lines", () => {
  const html = renderPassDiff(trace.passes[2], diff);
  assert.equal((html.match(/class="hunk"/g) ?? []).length, diff.rows.filter((r) => r.kind === "hunk").length);
  assert.match(html, /<div class="hh">@@ -1,3 \+1,4 @@<\/div>/);
  assert.match(html, /class="ln del"><span class="py" data-line="7">py 7<\/span><span class="mark">-<\/span><code> {4}b\[i\] = a<\/code>/);
  assert.match(html, /class="ln add"><span class="py" data-line="8">py 8<\/span><span class="mark">\+<\/span><code> {4}c\[i\] = b\[i\]<\/code>/);
  assert.match(html, /\+2<\/span> <span class="minus">−1/);
});

test("a pass that changed nothing says so", () => {
  const html = renderPassDiff(trace.passes[0], { ...diff, rows: [], added: 0, removed: 0 });
  assert.match(html, /left the IR unchanged/);
  assert.match(html, /Look for: /);
});
