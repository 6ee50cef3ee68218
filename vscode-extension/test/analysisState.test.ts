import assert from "node:assert/strict";
import { test } from "node:test";
import { present, stateFromServer } from "../src/analysisState";

test("server state names map onto the four visible states", () => {
  assert.equal(stateFromServer("static"), "static");
  assert.equal(stateFromServer("Analyzing"), "analysing");
  assert.equal(stateFromServer("up-to-date"), "ready");
  assert.equal(stateFromServer("error"), "error");
  assert.equal(stateFromServer("something-new"), undefined);
});

test("each state reads as the user expects in the status bar", () => {
  assert.match(present("static").text, /static only/);
  assert.match(present("analysing").text, /analysing/);
  assert.match(present("ready").text, /up to date/);
  assert.match(present("error").text, /error/);
  assert.equal(present("error").isError, true);
  assert.equal(present("ready").isError, false);
});

test("a detail from the server reaches the tooltip", () => {
  assert.match(present("error", "gemm.py: timeout after 60 s").tooltip, /timeout after 60 s/);
});
