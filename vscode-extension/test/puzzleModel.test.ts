import assert from "node:assert/strict";
import { test } from "node:test";
import { parseCheck, parsePuzzles, parseSubmit, progress, puzzleForFile } from "../src/puzzleModel";

const listed = parsePuzzles({
  puzzles: [
    { number: 1, title: "Copy one block", solved: true, path: "puzzles/content/01_copy_one_block/starter.py" },
    { number: 2, title: "Copy ragged", status: "unsolved", path: "puzzles/content/02_copy_ragged/starter.py" },
  ],
});

test("the puzzle list keeps number, title, progress and file", () => {
  assert.equal(listed.length, 2);
  assert.deepEqual(
    listed.map((p) => [p.number, p.title, p.solved]),
    [
      [1, "Copy one block", true],
      [2, "Copy ragged", false],
    ],
  );
  assert.equal(progress(listed), "1/2 solved");
});

test("the open file is matched to its puzzle by path or by folder number", () => {
  assert.equal(puzzleForFile(listed, "/w/puzzles/content/02_copy_ragged/starter.py")?.number, 2);
  assert.equal(puzzleForFile(listed, "/home/u/work/01_mine/attempt.py")?.number, 1);
  assert.equal(puzzleForFile(listed, "/w/examples/gemm.py"), undefined);
});

test("check results read pass or fail with the checker's message", () => {
  assert.deepEqual(parseCheck({ passed: true, message: "3/3 cases" }), { passed: true, message: "3/3 cases" });
  assert.deepEqual(parseCheck({ passed: false, detail: "max abs error 0.5" }), { passed: false, message: "max abs error 0.5" });
  assert.equal(parseCheck("garbage").passed, false);
});

test("a grading server's verdict reads pass or fail and says where it was graded", () => {
  const graded = { id: 3, state: "done", verdict: { passed: false, summary: "case one: out of bounds", graded_on: "GPU" } };
  assert.deepEqual(parseSubmit(graded), { passed: false, message: "case one: out of bounds Graded on GPU." });
  assert.equal(parseSubmit({ id: 3, state: "done", verdict: { passed: true, summary: "all 8 case runs match" } }).passed, true);
  assert.deepEqual(parseSubmit({ id: 4, state: "queued", verdict: null }), {
    passed: false,
    message: "the grading server has no verdict yet (queued)",
  });
});
