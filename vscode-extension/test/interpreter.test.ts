import assert from "node:assert/strict";
import { test } from "node:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  compilerInterpreter,
  missingMessage,
  notFoundMessage,
  parseMissing,
  pickInterpreter,
  COMMAND_BOOTSTRAP,
  commandArgs,
  serverArgs,
} from "../src/interpreter";

test("the setting wins over the Python extension's interpreter", () => {
  assert.deepEqual(pickInterpreter("/opt/venv/bin/python", "/usr/bin/python3.11"), { path: "/opt/venv/bin/python", source: "setting" });
});

test("a blank setting defers to the Python extension's interpreter", () => {
  assert.deepEqual(pickInterpreter("  ", "/home/u/.venv/bin/python"), { path: "/home/u/.venv/bin/python", source: "python-extension" });
});

test("with neither, python3 from PATH", () => {
  assert.deepEqual(pickInterpreter(undefined, undefined), { path: "python3", source: "default" });
});

test("the server and every command start through a bootstrap, not -m", () => {
  assert.deepEqual(serverArgs(), ["-c", COMMAND_BOOTSTRAP, "lsp"]);
  assert.deepEqual(commandArgs(["puzzles", "list", "--json"]), ["-c", COMMAND_BOOTSTRAP, "puzzles", "list", "--json"]);
});

test("the bootstrap drops the working directory from sys.path", () => {
  // A workspace with a folder named like a Tilescope module must not shadow it.
  const workspace = mkdtempSync(join(tmpdir(), "tilescope-ws-"));
  mkdirSync(join(workspace, "tilescope"));
  writeFileSync(join(workspace, "tilescope", "__init__.py"), "raise SystemExit('shadowed')\n");
  const probe = COMMAND_BOOTSTRAP.split("\nfrom tilescope")[0] + "\nprint('' in sys.path)";
  const python = process.env.TILESCOPE_PYTHON ?? "python3";
  assert.equal(execFileSync(python, ["-c", probe], { cwd: workspace }).toString().trim(), "False");
});

test("the compiler tier's interpreter: the setting, else the project's when the server has its own", () => {
  const server = { path: "/tools/bin/python", source: "setting" as const };
  assert.equal(compilerInterpreter(" /p/bin/python ", server, "/x/bin/python"), "/p/bin/python");
  assert.equal(compilerInterpreter("", server, "/proj/.venv/bin/python"), "/proj/.venv/bin/python");
  assert.equal(compilerInterpreter("", server, "/tools/bin/python"), undefined);
  assert.equal(compilerInterpreter("", { path: "/proj/.venv/bin/python", source: "python-extension" }, "/proj/.venv/bin/python"), undefined);
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
  assert.match(msg, /tilelang>=0\.1\.10,<0\.2/);
});

test("an interpreter that cannot run points at the setting", () => {
  assert.match(notFoundMessage({ path: "/nope", source: "python-extension" }), /Python extension's selected interpreter \(\/nope\).*tilescope\.pythonPath/);
});
