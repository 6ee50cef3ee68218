import assert from "node:assert/strict";
import { test } from "node:test";
import { viewCommandFor } from "../src/lensCommands";

test("code lenses open views instead of discarding the server's JSON", () => {
  assert.equal(viewCommandFor("tilescope.tracePasses"), "tilescope.openTrace");
  assert.equal(viewCommandFor("tilescope.plotLayout"), "tilescope.openLayout");
  assert.equal(viewCommandFor("tilescope.showCuda"), "tilescope.openCuda");
  assert.equal(viewCommandFor("tilescope.autotuneConfigs"), "tilescope.openVariants");
});

test("other commands pass through unchanged", () => {
  assert.equal(viewCommandFor("editor.action.showReferences"), "editor.action.showReferences");
});
