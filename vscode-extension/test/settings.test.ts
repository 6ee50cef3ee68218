import assert from "node:assert/strict";
import { test } from "node:test";
import { configurationChange, type ConfigGetter, serverSettings } from "../src/settings";

function getter(values: Record<string, unknown>): ConfigGetter {
  return <T>(key: string, fallback: T): T => (key in values ? (values[key] as T) : fallback);
}

test("defaults give every hint kind, sm_90 and a 60 s timeout", () => {
  assert.deepEqual(serverSettings(getter({}), true), {
    trusted: true,
    target: "sm_90",
    hints: { buffers: true, parameters: true, launch: true, layouts: true, pipelines: true },
    timeout: 60,
    ptxas: false,
    idle: 0.5,
    python: "",
  });
});

test("the compiler tier's interpreter travels as the server's python setting", () => {
  assert.equal(serverSettings(getter({}), true, "/proj/.venv/bin/python").python, "/proj/.venv/bin/python");
});

test("user settings and trust flow into the server's options", () => {
  const s = serverSettings(getter({ target: " sm_80 ", "hints.layouts": false, timeout: 5, ptxas: true, idle: 0 }), false);
  assert.equal(s.trusted, false);
  assert.equal(s.target, "sm_80");
  assert.equal(s.hints.layouts, false);
  assert.equal(s.hints.buffers, true);
  assert.equal(s.timeout, 5);
  assert.equal(s.ptxas, true);
  assert.equal(s.idle, 0);
});

test("a blank target, a non-positive timeout or a negative idle time falls back to the defaults", () => {
  const s = serverSettings(getter({ target: "  ", timeout: 0, idle: -1 }), true);
  assert.equal(s.target, "sm_90");
  assert.equal(s.timeout, 60);
  assert.equal(s.idle, 0.5);
});

test("didChangeConfiguration carries the settings under the tilescope section", () => {
  const s = serverSettings(getter({}), true);
  assert.deepEqual(configurationChange(s), { settings: { tilescope: s } });
});
