import assert from "node:assert/strict";
import { test } from "node:test";
import { missingMessage, notFoundMessage, parseMissing, pickInterpreter, serverArgs } from "../src/interpreter";

test("the setting wins over the Python extension's interpreter", () => {
  assert.deepEqual(pickInterpreter("/opt/venv/bin/python", "/usr/bin/python3.11"), { path: "/opt/venv/bin/python", source: "setting" });
});

test("a blank setting defers to the Python extension's interpreter", () => {
  assert.deepEqual(pickInterpreter("  ", "/home/u/.venv/bin/python"), { path: "/home/u/.venv/bin/python", source: "python-extension" });
});

test("with neither, python3 from PATH", () => {
  assert.deepEqual(pickInterpreter(undefined, undefined), { path: "python3", source: "default" });
});

test("the server runs as a module of the chosen interpreter", () => {
  assert.deepEqual(serverArgs(), ["-m", "tilescope", "lsp"]);
});

test("preflight output lists missing modules", () => {
  assert.deepEqual(parseMissing("\n"), []);
  assert.deepEqual(parseMissing("tilelang,pygls\n"), ["tilelang", "pygls"]);
});

test("a missing Tilescope names the interpreter and the fix", () => {
  const msg = missingMessage({ path: "/v/bin/python", source: "setting" }, ["tilescope"]);
  assert.match(msg, /not installed in the interpreter from tilescope\.pythonPath \(\/v\/bin\/python\)/);
  assert.match(msg, /\/v\/bin\/python -m pip install/);
});

test("a missing TileLang names the package to install", () => {
  const msg = missingMessage({ path: "python3", source: "default" }, ["tilelang"]);
  assert.match(msg, /python3 from PATH lacks tilelang/);
  assert.match(msg, /tilelang==0\.1\.15/);
});

test("an interpreter that cannot run points at the setting", () => {
  assert.match(notFoundMessage({ path: "/nope", source: "python-extension" }), /Python extension's selected interpreter \(\/nope\).*tilescope\.pythonPath/);
});
