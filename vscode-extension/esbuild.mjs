// Bundles the extension (Node, CommonJS, `vscode` external), the webview scripts (browser) and,
// with --tests, the unit tests into out/test/ so `node --test` runs them without a TS loader.
import * as esbuild from "esbuild";
import { readdirSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");
const common = { bundle: true, sourcemap: !production, minify: production, logLevel: "warning" };

const builds = [
  esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  }),
  esbuild.build({
    ...common,
    entryPoints: ["src/webview/trace.ts", "src/webview/layout.ts", "src/webview/schedule.ts"],
    outdir: "dist/webview",
    platform: "browser",
    format: "iife",
    target: "es2022",
  }),
];
if (tests) {
  builds.push(
    esbuild.build({
      ...common,
      entryPoints: readdirSync("test").filter((f) => f.endsWith(".test.ts")).map((f) => `test/${f}`),
      outdir: "out/test",
      platform: "node",
      format: "cjs",
      target: "node20",
      external: ["vscode"],
    }),
  );
}
await Promise.all(builds);
