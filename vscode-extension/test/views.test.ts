import assert from "node:assert/strict";
import { test } from "node:test";
import { cudaPath, cudaQuery, parseCudaQuery } from "../src/cudaUri";
import { escapeHtml, page } from "../src/html";

test("a CUDA document address round-trips the source file and kernel", () => {
  const target = { source: "file:///w/examples/gemm%20v2.py", kernel: "matmul" };
  assert.deepEqual(parseCudaQuery(cudaQuery(target)), target);
  assert.equal(cudaPath("matmul"), "/matmul.cu");
  assert.equal(cudaPath("a/b c"), "/a_b_c.cu");
  assert.throws(() => parseCudaQuery("kernel=x"), /not a Tilescope CUDA address/);
});

test("webview pages load only their own nonce'd script", () => {
  const html = page({ title: "T<1>", cspSource: "vscode-resource:", scriptUri: "https://x/trace.js", styles: "", body: "<ul></ul>" });
  const n = /script-src 'nonce-([A-Za-z0-9]+)'/.exec(html)?.[1];
  assert.ok(n);
  assert.match(html, new RegExp(`<script nonce="${n}" src="https://x/trace.js">`));
  assert.match(html, /default-src 'none'/);
  assert.match(html, /<title>T&lt;1&gt;<\/title>/);
  assert.equal(escapeHtml(`"&'`), "&quot;&amp;&#39;");
});
