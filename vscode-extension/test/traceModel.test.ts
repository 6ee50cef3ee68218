import assert from "node:assert/strict";
import { test } from "node:test";
import { renderPassDiff, renderPassList } from "../src/traceHtml";
import { describePass, nextChange, parsePassIR, parseTrace, passLabel, visiblePasses } from "../src/traceModel";

const answer = {
  kernel: "main",
  passes: [
    {
      index: 0,
      name: "pass_fn",
      phase: "frontend",
      duration_ms: 0.1,
      changed: false,
      resolved_name: "tl.CheckTileOps",
      description: "Rejects tile ops the target lacks.",
    },
    { index: 1, name: "tl.LayoutInference", phase: "layout", duration_ms: 3.25, changed: true },
    { index: 2, name: "tl.Simplify", phase: "lower", duration_ms: 0.4, changed: false },
    { index: 3, name: "tl.LowerTileOp", phase: "lower", duration_ms: 1.5, changed: true },
  ],
  catalog: { LayoutInference: "Chooses a layout for every fragment & shared buffer." },
};

test("the trace keeps every pass and its catalog", () => {
  const trace = parseTrace(answer);
  assert.equal(trace.passes.length, 4);
  assert.equal(describePass(trace, trace.passes[1]), "Chooses a layout for every fragment & shared buffer.");
  assert.equal(describePass(trace, trace.passes[3]), undefined);
});

test("anonymous passes show the catalogue's name and their own description", () => {
  const trace = parseTrace(answer);
  assert.equal(passLabel(trace.passes[0]), "tl.CheckTileOps");
  assert.equal(passLabel(trace.passes[1]), "tl.LayoutInference");
  assert.equal(describePass(trace, trace.passes[0]), "Rejects tile ops the target lacks.");
  assert.match(renderPassList(trace.passes, undefined), /tl\.CheckTileOps/);
  assert.match(renderPassDiff(trace, trace.passes[0], parsePassIR({ before: "a", after: "a" })), /recorded as pass_fn/);
});

test("an answer without passes is rejected with a reason", () => {
  assert.throws(() => parseTrace({ kernel: "main" }), /no passes list/);
});

test("unchanged passes are hidden unless asked for", () => {
  const trace = parseTrace(answer);
  assert.deepEqual(
    visiblePasses(trace, false).map((p) => p.index),
    [1, 3],
  );
  assert.equal(visiblePasses(trace, true).length, 4);
});

test("next and previous change step over unchanged passes and wrap", () => {
  const trace = parseTrace(answer);
  assert.equal(nextChange(trace, undefined, 1), 1);
  assert.equal(nextChange(trace, 1, 1), 3);
  assert.equal(nextChange(trace, 3, 1), 1);
  assert.equal(nextChange(trace, 2, -1), 1);
  assert.equal(nextChange(trace, 1, -1), 3);
  assert.equal(nextChange(parseTrace({ passes: [answer.passes[0]] }), undefined, 1), undefined);
});

test("the pass list marks the selection and escapes names", () => {
  const html = renderPassList([{ index: 7, name: "a<b>", phase: "x", duration_ms: 1, changed: true }], 7);
  assert.match(html, /class="pass changed selected" data-index="7"/);
  assert.match(html, /a&lt;b&gt;/);
});

test("a pass diff shows added and removed IR lines with their Python lines", () => {
  const trace = parseTrace(answer);
  const ir = parsePassIR({
    before: "x = 1\ny = 2\n",
    after: "x = 1\ny = 3\n",
    before_lines: [10, 11],
    after_lines: [10, 12],
  });
  const html = renderPassDiff(trace, trace.passes[1], ir);
  assert.match(html, /Chooses a layout for every fragment &amp; shared buffer\./);
  assert.match(html, /class="ln del"><span class="py" data-line="11">py 11<\/span><span class="mark">-<\/span><code>y = 2<\/code>/);
  assert.match(html, /class="ln add"><span class="py" data-line="12">py 12<\/span><span class="mark">\+<\/span><code>y = 3<\/code>/);
  assert.match(html, /\+1<\/span> <span class="minus">−1/);
});

test("a pass that changed nothing says so", () => {
  const trace = parseTrace(answer);
  const html = renderPassDiff(trace, trace.passes[0], parsePassIR({ before: "a", after: "a" }));
  assert.match(html, /left the IR unchanged/);
});
