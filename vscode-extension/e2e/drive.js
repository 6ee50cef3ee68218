// Drives code-server's VS Code in headless Chromium and checks what a user would see of the
// Tilescope extension. Usage: node drive.js URL SCREENSHOT_DIR [trusted|restricted]
// (playwright-core via NODE_PATH). "restricted" starts untrusted and grants trust midway;
// "missing" has an interpreter without Tilescope.
const { chromium } = require("playwright-core");
const path = require("path");

const url = process.argv[2];
const shots = process.argv[3];
const mode = process.argv[4] || "trusted";
const results = [];
const t0 = Date.now();

function check(name, ok, detail) {
  results.push({ name, ok });
  console.log(`${ok ? "ok" : "FAIL"}: ${name}${detail ? ` (${detail})` : ""} [${((Date.now() - t0) / 1000).toFixed(1)} s]`);
}

/** Polls `probe` until it returns a truthy value or `ms` pass; returns that value or null. */
async function until(probe, ms, every = 500) {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await probe();
      if (v) {
        return v;
      }
    } catch {
      // the DOM changes under us while VS Code renders; try again
    }
    if (Date.now() > end) {
      return null;
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

async function openFile(page, name) {
  // The explorer, not quick open: keys typed while a webview has focus never reach the workbench.
  await page.getByRole("treeitem", { name, exact: true }).first().click({ timeout: 15000 });
  await page.waitForSelector(`.tab.active[aria-label*="${name}"]`, { timeout: 15000 });
}

/** The text of the editor line that contains `needle` (inlay hints are part of it). */
async function lineWith(page, needle) {
  return page.evaluate((n) => {
    const lines = [...document.querySelectorAll(".editor-instance .monaco-editor .view-line")];
    return lines.map((l) => l.textContent.replace(/\u00a0/g, " ")).find((t) => t.includes(n)) ?? null;
  }, needle);
}

/** The screen box of `token` in the editor line containing `lineNeedle`, or null. */
function tokenBox(page, lineNeedle, token) {
  return page.evaluate(
    ([needle, tok]) => {
      for (const line of document.querySelectorAll(".editor-instance .monaco-editor .view-line")) {
        if (!line.textContent.replace(/\u00a0/g, " ").includes(needle)) {
          continue;
        }
        const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const at = n.textContent.indexOf(tok);
          if (at >= 0) {
            const range = document.createRange();
            range.setStart(n, at);
            range.setEnd(n, at + tok.length);
            const r = range.getBoundingClientRect();
            return { x: r.x, y: r.y, width: r.width, height: r.height };
          }
        }
      }
      return null;
    },
    [lineNeedle, token],
  );
}

/** Rests the mouse on `token` in the editor line containing `lineNeedle`; returns the visible hover's text. */
async function hoverToken(page, lineNeedle, token) {
  const box = await tokenBox(page, lineNeedle, token);
  if (!box) {
    return null;
  }
  await page.mouse.move(box.x + box.width / 2, box.y + 250);
  await page.waitForTimeout(300);
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 3 });
  return until(
    () =>
      page.evaluate(() =>
        [...document.querySelectorAll(".monaco-hover")]
          .filter((h) => !h.classList.contains("hidden") && h.getBoundingClientRect().width > 0)
          .map((h) => h.innerText)
          .join("\n"),
      ),
    4000,
    250,
  );
}

/** The inner text of the webview frame whose body matches `pattern`. */
async function webviewText(page, pattern) {
  for (const frame of page.frames()) {
    const text = await frame.evaluate(() => document.body?.innerText ?? "").catch(() => "");
    if (pattern.test(text)) {
      return text;
    }
  }
  return null;
}

async function clickLens(page, pattern) {
  const lens = page.locator(".editor-instance .codelens-decoration a", { hasText: pattern }).first();
  await lens.click({ timeout: 10000 });
}

function statusText(page) {
  return until(async () => {
    const t = await page.locator("[id$='tilescope.status']").first().innerText();
    return /Tilescope/.test(t) ? t.trim() : null;
  }, 30000);
}

async function allocationHint(page, ms) {
  return until(async () => {
    const t = await lineWith(page, "A_shared = T.alloc_shared");
    return t && /float16/.test(t) && /shared/.test(t.split("alloc_shared")[1] ?? "") && /\d+\s*[×x]\s*\d+/.test(t) ? t : null;
  }, ms);
}

/** Everything, in a trusted workspace: both tiers, the views and the diagnostics. */
async function trusted(page, shot) {
  const hinted = await allocationHint(page, 60000);
  check("shape·dtype·scope inlay hint on an allocation line", Boolean(hinted), hinted?.trim());

  const lens = await until(async () => {
    const t = await page.locator(".editor-instance .codelens-decoration").allInnerTexts();
    return t.some((x) => /trace passes/i.test(x)) ? t.join(" | ") : null;
  }, 30000);
  check("code lens on the kernel", Boolean(lens), lens);
  await shot("inlay-hints-and-lens");

  const hover = await until(async () => {
    const t = await hoverToken(page, "C_local = T.alloc_fragment", "C_local");
    return t && /layout/i.test(t) && /thread/i.test(t) ? t : null;
  }, 90000, 1500);
  check("hover on a fragment shows its layout", Boolean(hover), hover?.replace(/\s+/g, " ").slice(0, 160));
  await shot("hover-layout");
  await page.keyboard.press("Escape");

  if (lens) {
    await clickLens(page, /trace passes/i);
  }
  const trace = await until(() => webviewText(page, /LayoutInference/), 90000, 1000);
  const passes = trace ? /(\d+) passes/.exec(trace) : null;
  check("trace webview lists the passes", Boolean(trace), passes ? passes[0] : undefined);
  if (trace) {
    // Step to the first change so the screenshot shows a diff.
    for (const frame of page.frames()) {
      const next = frame.locator("#next");
      if (await next.count().catch(() => 0)) {
        await next.click().catch(() => undefined);
      }
    }
    const diff = await until(() => webviewText(page, /@@ -\d+(,\d+)? \+\d+(,\d+)? @@/), 30000, 500);
    check("trace webview shows the first change's IR diff", Boolean(diff), diff ? /\d+\. \S+/.exec(diff)?.[0] : undefined);
  }
  await shot("trace-passes");

  if (lens) {
    await page.locator(".tab", { hasText: "gemm.py" }).first().click();
    await clickLens(page, /plot layout/i).catch(() => undefined);
  }
  const layout = await until(
    async () => {
      for (const frame of page.frames()) {
        const n = await frame.locator("svg.layout rect").count().catch(() => 0);
        if (n > 0) {
          return n;
        }
      }
      return null;
    },
    60000,
    1000,
  );
  check("layout webview draws the buffer's cells", Boolean(layout), layout ? `${layout} cells` : undefined);
  await shot("plot-layout");
  let shared = null;
  for (const frame of page.frames()) {
    const picker = frame.locator("#buffer");
    if (await picker.count().catch(() => 0)) {
      await picker.selectOption("A_shared").catch(() => undefined);
      shared = await until(async () => {
        const text = await frame.locator("#caption").innerText();
        const cells = await frame.locator("svg.layout rect").count();
        return /16-byte slot/.test(text) && cells > 0 ? `${cells} cells by 16-byte slot` : null;
      }, 30000);
    }
  }
  check("layout webview switches to a shared buffer", Boolean(shared), shared);

  await page.locator(".tab", { hasText: "gemm.py" }).first().click();
  await clickLens(page, /show cuda/i).catch(() => undefined);
  const cuda = await until(async () => {
    const tab = await page.locator('.tab.active[aria-label*=".cu"]').count();
    const text = (await page.locator(".editor-instance .monaco-editor .view-lines").allInnerTexts()).join("\n");
    return tab && /__global__/.test(text) ? "__global__ kernel shown" : null;
  }, 30000);
  check("generated CUDA opens in a read-only document", Boolean(cuda), cuda);
  await shot("show-cuda");

  await openFile(page, "broken_gemm.py");
  const squiggle = await until(async () => (await page.locator(".editor-instance .monaco-editor .squiggly-error").count()) > 0, 60000);
  check("squiggle on the broken file", Boolean(squiggle));
  await page.keyboard.press("Control+Shift+M");
  const problem = await until(async () => {
    const t = await page.locator(".markers-panel").innerText();
    return /broken_gemm\.py/.test(t) && /gemm/i.test(t.split("broken_gemm.py")[1] ?? "") ? t : null;
  }, 30000);
  check("Problems panel lists the diagnostic", Boolean(problem), problem?.replace(/\s+/g, " ").slice(0, 200));
  await shot("problems");

  // Symbols, completion and signature help, last since they edit the file.
  await openFile(page, "gemm.py");
  const outlineHeader = page.locator(".pane-header", { hasText: /^Outline/ }).first();
  await outlineHeader.click();
  const outline = await until(async () => {
    const t = (await page.locator(".pane", { has: outlineHeader }).locator(".pane-body").allInnerTexts()).join(" ");
    return /matmul/.test(t) && /A_shared/.test(t) ? t.replace(/\s+/g, " ") : null;
  }, 30000);
  check("document symbols: the outline lists the kernel and its buffers", Boolean(outline), outline?.slice(0, 120));
  await shot("outline");
  await outlineHeader.click();
  const anchor = await until(() => tokenBox(page, "T.clear(C_local)", "clear"), 10000);
  if (anchor) {
    await page.mouse.click(anchor.x + anchor.width / 2, anchor.y + anchor.height / 2);
    await page.keyboard.press("End");
    await page.keyboard.press("Enter");
    await page.keyboard.type("T.alloc_fr", { delay: 40 });
  }
  const suggested = await until(async () => {
    const t = (await page.locator(".editor-widget.suggest-widget").allInnerTexts()).join(" ");
    return /alloc_fragment/.test(t) ? t.replace(/\s+/g, " ") : null;
  }, 20000);
  check("completion offers T.* members", Boolean(suggested), suggested?.slice(0, 100));
  await page.keyboard.press("Escape");
  await page.keyboard.type("agment(", { delay: 40 });
  const signature = await until(async () => {
    const t = (await page.locator(".editor-widget.parameter-hints-widget").allInnerTexts()).join(" ");
    return /shape/.test(t) ? t.replace(/\s+/g, " ") : null;
  }, 20000);
  check("signature help shows T.alloc_fragment's parameters", Boolean(signature), signature?.slice(0, 100));
  await shot("completion-signature");
  await page.keyboard.press("Escape");

  await ascendSchedule(page, shot);
}

/** The frame of the schedule webview once it has drawn both lanes and its flag arrows, with what it drew. */
async function scheduleFrame(page) {
  for (const frame of page.frames()) {
    const drawn = await frame
      .evaluate(() => {
        const lanes = document.querySelector(".lanes");
        if (!lanes) {
          return null;
        }
        const rows = [...lanes.querySelectorAll(".row")];
        return {
          heads: [...lanes.querySelectorAll(".lanehead")].map((h) => h.textContent),
          cube: rows.filter((r) => r.classList.contains("lane-cube")).length,
          vector: rows.filter((r) => r.classList.contains("lane-vector")).length,
          across: lanes.querySelectorAll("svg.gutter path.arrow").length,
          along: lanes.querySelectorAll("svg.margin path.arrow").length,
          listed: document.querySelectorAll(".flaglist li").length,
          text: document.body.innerText,
        };
      })
      .catch(() => null);
    if (drawn) {
      return { frame, drawn };
    }
  }
  return null;
}

/** The corpus's mixed Cube+Vector GEMM (copied in by run.sh when the corpus is there): its schedule lens and view. */
async function ascendSchedule(page, shot) {
  const file = page.getByRole("treeitem", { name: "example_gemm.py", exact: true });
  if (!(await file.count())) {
    console.log("skip: example_gemm.py is not in the workspace (no Ascend corpus; see TILESCOPE_ASCEND_CORPUS in run.sh)");
    return;
  }
  // Room for the two lanes beside the source: a larger window, no side bar, no panel.
  await page.setViewportSize({ width: 1920, height: 1080 });
  await openFile(page, "example_gemm.py");
  await runCommand(page, "View: Close Primary Side Bar");
  await runCommand(page, "View: Hide Panel");
  const lens = await until(async () => {
    const t = await page.locator(".editor-instance .codelens-decoration").allInnerTexts();
    return t.find((x) => /Schedule · Cube \+ Vector · \d+ flags/.test(x)) ?? null;
  }, 240000, 2000);
  check("schedule lens on the Ascend GEMM says its cores and flags", Boolean(lens), lens?.trim());
  if (!lens) {
    return;
  }
  await clickLens(page, /Schedule · Cube/);
  const found = await until(async () => {
    const s = await scheduleFrame(page);
    return s && s.drawn.cube > 0 && s.drawn.vector > 0 && s.drawn.across > 0 ? s : null;
  }, 120000, 1000);
  const drawn = found?.drawn;
  check(
    "schedule view draws the Cube and Vector lanes side by side",
    Boolean(drawn) && drawn.heads.join(" | ") === "Cube (AIC) | Vector (AIV)",
    drawn ? `${drawn.heads.join(" | ")}: ${drawn.cube} Cube rows, ${drawn.vector} Vector rows` : undefined,
  );
  check(
    "schedule view draws the flags between them as arrows, each also listed as text",
    Boolean(drawn) && drawn.across > 0 && drawn.listed === drawn.across + drawn.along && /arrive FIX flag \d+ → Vector \(AIV\) wait MTE3 flag \d+/.test(drawn.text),
    drawn ? `${drawn.across} across, ${drawn.along} along a core, ${drawn.listed} listed` : undefined,
  );
  check("schedule view shows the memory plan per level", Boolean(drawn) && /L1 \d+ KB of 512 KB/.test(drawn.text) && /UB \d+ KB of/.test(drawn.text));
  if (found) {
    // The source beside the view then shows the kernel's body, the lines the rows come from.
    await found.frame.locator(".row", { hasText: "gemm(x_l1, w_l1, res)" }).first().click();
    const revealed = await until(async () => {
      const t = await page.locator("[id='status.editor.selection']").first().innerText();
      return /Ln 79\b/.test(t) ? t.trim() : null;
    }, 15000, 500);
    check("clicking a row reveals its source line", Boolean(revealed), revealed);
  }
  await page.mouse.move(0, 0);
  await shot("ascend-schedule");
}

/** Runs a workbench command by its title from the command palette (focus must be outside a webview). */
async function runCommand(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 10000 });
  await page.keyboard.type(title, { delay: 20 });
  // Enter only once the list has filtered down to the command, or it runs whatever was first.
  const listed = await until(async () => (await page.locator(".quick-input-list .monaco-list-row").first().innerText()).includes(title.split(": ").pop()), 15000, 200);
  await page.keyboard.press(listed ? "Enter" : "Escape");
}

/** A restricted workspace: the static tier alone, then trust granted without a reload. */
async function restricted(page, shot) {
  const hinted = await allocationHint(page, 60000);
  check("restricted: static-tier inlay hint", Boolean(hinted), hinted?.trim());
  const before = await statusText(page);
  check("restricted: status bar says static only", /static only/.test(before ?? ""), before);
  const staticHover = await until(() => hoverToken(page, "C_local = T.alloc_fragment", "C_local"), 20000, 1000);
  check("restricted: hover from source alone", Boolean(staticHover) && !/compiled/i.test(staticHover), staticHover?.replace(/\s+/g, " ").slice(0, 120));
  const lensTexts = () => page.locator(".editor-instance .codelens-decoration").allInnerTexts();
  const lensBefore = (await lensTexts()).filter((t) => /trace passes/i.test(t)).length;
  check("restricted: no compiler code lenses", lensBefore === 0, `${lensBefore} found`);
  await shot("restricted-static-only");
  await page.keyboard.press("Escape");

  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { timeout: 10000 });
  await page.keyboard.type("Manage Workspace Trust", { delay: 20 });
  // Enter only once the list has filtered down to the command, or it runs whatever was first.
  await until(async () => /Manage Workspace Trust/.test(await page.locator(".quick-input-list .monaco-list-row").first().innerText()), 15000, 200);
  await page.keyboard.press("Enter");
  await page.locator(".workspace-trust-editor .monaco-button", { hasText: /^Trust$/ }).first().click({ timeout: 15000 });
  await shot("trust-editor");
  // The trust editor opens as a modal: close it to get back to the file.
  await page
    .locator(".monaco-modal-editor-block a.codicon-close, .monaco-modal-editor-block [aria-label^='Close']")
    .first()
    .click({ timeout: 5000 })
    .catch(() => page.keyboard.press("Escape"));
  await page.locator(".monaco-modal-editor-block").waitFor({ state: "detached", timeout: 5000 }).catch(() => undefined);
  await openFile(page, "gemm.py");
  const after = await until(async () => {
    const t = await statusText(page);
    return t && !/static only/.test(t) ? t : null;
  }, 30000);
  check("trust granted: status bar leaves static only", Boolean(after), after);
  const compiledHover = await until(async () => {
    const t = await hoverToken(page, "C_local = T.alloc_fragment", "C_local");
    return t && /compiled/i.test(t) ? t : null;
  }, 120000, 2000);
  check("trust granted: hover shows compiled facts without a reload", Boolean(compiledHover), compiledHover?.replace(/\s+/g, " ").slice(0, 120));
  const lensAfter = await until(async () => ((await lensTexts()).some((t) => /trace passes/i.test(t)) ? "Trace passes" : null), 30000);
  check("trust granted: code lenses appear", Boolean(lensAfter), lensAfter);
  await shot("trust-granted");
}

(async () => {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on("console", (m) => {
    if (m.type() === "error" && /tilescope/i.test(m.text())) {
      console.log("[browser error]", m.text().slice(0, 300));
    }
  });
  const shot = (name) => page.screenshot({ path: path.join(shots, `${name}.png`) });
  await page.goto(url);
  await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
  console.log(`workbench up after ${Date.now() - t0} ms`);
  await page.waitForSelector(".explorer-folders-view .monaco-list-row", { timeout: 30000 });

  await openFile(page, "gemm.py");
  const status = await statusText(page);
  if (mode === "restricted") {
    await restricted(page, shot);
  } else if (mode === "missing") {
    const failed = await until(async () => {
      const t = await statusText(page);
      return /error/.test(t ?? "") ? t : null;
    }, 30000);
    check("missing install: status bar shows the error", Boolean(failed), failed ?? status);
    const toast = await until(async () => {
      const t = (await page.locator(".notifications-toasts").allInnerTexts()).join(" ");
      return /interpreter from tilescope\.pythonPath/.test(t) && /pip install/.test(t) ? t : null;
    }, 30000);
    check("missing install: a message names the interpreter and the fix", Boolean(toast), toast?.replace(/\s+/g, " ").slice(0, 160));
    await shot("missing-install");
  } else {
    check("extension activated and its server started (status bar)", Boolean(status) && !/error/.test(status), status ?? "no Tilescope status item");
    if (!status || /error/.test(status)) {
      await shot("server-error");
    } else {
      await trusted(page, shot);
    }
  }
  await browser.close();
  const failed = results.filter((r) => !r.ok).length;
  console.log(`${mode} session took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`${mode}: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error(e);
  process.exit(2);
});
