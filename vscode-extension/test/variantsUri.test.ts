import assert from "node:assert/strict";
import { test } from "node:test";
import { parseVariantsQuery, variantsArgs, variantsPath, variantsQuery } from "../src/variantsUri";

test("a variants address carries the source file and kernel through its query", () => {
  const target = { source: "file:///w/gemm%20tuned.py", kernel: "tuned_gemm" };
  assert.deepEqual(parseVariantsQuery(variantsQuery(target)), target);
  assert.deepEqual(parseVariantsQuery(variantsQuery({ source: "file:///w/a.py", kernel: null })), {
    source: "file:///w/a.py",
    kernel: null,
  });
  assert.equal(variantsPath("tuned gemm"), "/tuned_gemm.variants");
  assert.throws(() => parseVariantsQuery("kernel=x"), /not a Tilescope variants address/);
});

test("the command line names the kernel only when one is given", () => {
  assert.deepEqual(variantsArgs("/w/a.py", "k"), ["variants", "/w/a.py", "--kernel", "k"]);
  assert.deepEqual(variantsArgs("/w/a.py", null), ["variants", "/w/a.py"]);
});
