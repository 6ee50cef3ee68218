import assert from "node:assert/strict";
import { test } from "node:test";
import { viewCommandFor } from "../src/lensCommands";

test("code lenses open views instead of discarding the server's JSON", () => {
  assert.equal(viewCommandFor("tilescope.show.passes"), "tilescope.openTrace");
  assert.equal(viewCommandFor("tilescope.show.layout"), "tilescope.openLayout");
  assert.equal(viewCommandFor("tilescope.show.cuda"), "tilescope.openCuda");
  assert.equal(viewCommandFor("tilescope.show.autotune"), "tilescope.openVariants");
  assert.equal(viewCommandFor("tilescope.show.schedule"), "tilescope.openSchedule");
});

test("other commands pass through unchanged", () => {
  assert.equal(viewCommandFor("editor.action.showReferences"), "editor.action.showReferences");
});
