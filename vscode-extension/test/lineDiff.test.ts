import assert from "node:assert/strict";
import { test } from "node:test";
import { diffLines, hunks, splitLines } from "../src/lineDiff";

test("identical texts have no changes and no hunks", () => {
  const lines = diffLines(["a", "b"], ["a", "b"]);
  assert.ok(lines.every((l) => l.op === "same"));
  assert.deepEqual(hunks(lines), []);
});

test("an inserted and a removed line are found in the middle", () => {
  const before = ["f()", "  x = 1", "  y = 2", "  z = 3", "end"];
  const after = ["f()", "  x = 1", "  w = 9", "  z = 3", "end"];
  const lines = diffLines(before, after);
  assert.equal(lines.filter((l) => l.op === "add").length, 1);
  assert.equal(lines.filter((l) => l.op === "del").length, 1);
  const del = lines.find((l) => l.op === "del");
  const add = lines.find((l) => l.op === "add");
  assert.equal(del?.oldLine, 2);
  assert.equal(add?.newLine, 2);
});

test("line numbers of unchanged lines track both sides after an insertion", () => {
  const lines = diffLines(["a", "b", "c"], ["a", "x", "y", "b", "c"]);
  const c = lines.find((l) => l.text === "c");
  assert.deepEqual([c?.oldLine, c?.newLine], [2, 4]);
  assert.deepEqual(
    lines.filter((l) => l.op === "add").map((l) => l.text),
    ["x", "y"],
  );
});

test("applying the diff to before yields after", () => {
  const before = splitLines("for i in range(4):\n  A[i] = 0\n  B[i] = 1\nreturn\n");
  const after = splitLines("A_shared = alloc\nfor i in range(4):\n  B[i] = 1\n  C[i] = 2\nreturn\n");
  const rebuilt = diffLines(before, after)
    .filter((l) => l.op !== "del")
    .map((l) => l.text);
  assert.deepEqual(rebuilt, after);
});

test("distant changes make separate hunks with three lines of context", () => {
  const before = Array.from({ length: 30 }, (_, k) => `line ${k}`);
  const after = [...before];
  after[2] = "changed 2";
  after[25] = "changed 25";
  const groups = hunks(diffLines(before, after));
  assert.equal(groups.length, 2);
  assert.equal(groups[0].lines[0].text, "line 0");
  assert.equal(groups[1].lines[0].text, "line 22");
  assert.equal(groups[1].lines.at(-1)?.text, "line 28");
});

test("splitLines drops the final newline and handles CRLF", () => {
  assert.deepEqual(splitLines("a\r\nb\n"), ["a", "b"]);
  assert.deepEqual(splitLines(""), []);
});
