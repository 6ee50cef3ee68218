/** "Tilescope: Trace Passes": the pass list and per-pass IR diffs, fetched from the server. */

import * as vscode from "vscode";
import { SERVER_COMMANDS } from "./lensCommands";
import type { TilescopeServer } from "./server";
import { parsePassDiff, parseTrace, type PassTrace } from "./traceModel";
import { BASE_STYLES, revealLine, WebviewHost } from "./webviewPanel";

const STYLES =
  BASE_STYLES +
  `
header { display: flex; gap: 12px; align-items: center; flex-wrap: wrap; padding: 8px 0; border-bottom: 1px solid var(--vscode-panel-border); }
main { display: flex; gap: 12px; height: calc(100vh - 60px); }
#passes { list-style: none; margin: 0; padding: 0; flex: 0 0 min(380px, 42%); overflow-y: auto; }
#passes li { display: flex; gap: 8px; padding: 2px 6px; cursor: pointer; }
#passes li:hover { background: var(--vscode-list-hoverBackground); }
#passes li.selected { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
#passes li.unchanged { opacity: .55; }
#passes .idx { width: 2.5em; text-align: right; opacity: .7; }
#passes .name { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#passes .ms { opacity: .7; font-variant-numeric: tabular-nums; white-space: nowrap; }
#detail { flex: 1; min-width: 0; overflow: auto; }
.hunk code { white-space: pre; }
#detail h2 small { font-weight: normal; opacity: .7; }
.about.look { font-style: italic; opacity: .85; }
.hunk { margin: 8px 0; border: 1px solid var(--vscode-panel-border); }
.hh { background: var(--vscode-editorWidget-background); padding: 2px 6px; opacity: .8; font-family: var(--vscode-editor-font-family); }
.ln { display: flex; white-space: pre; font-family: var(--vscode-editor-font-family); }
.ln.add { background: var(--vscode-diffEditor-insertedLineBackground, rgba(80,200,80,.2)); }
.ln.del { background: var(--vscode-diffEditor-removedLineBackground, rgba(220,80,80,.2)); }
.ln .py { width: 4.5em; flex: none; opacity: .6; cursor: pointer; }
.ln .mark { width: 1.2em; flex: none; }
.plus { color: var(--vscode-gitDecoration-addedResourceForeground); }
.minus { color: var(--vscode-gitDecoration-deletedResourceForeground); }
`;

const BODY = `
<header>
  <div id="summary">Tracing passes…</div>
  <label><input type="checkbox" id="show-unchanged"> show unchanged passes</label>
  <button id="prev" title="Previous change (p)">◀ previous change</button>
  <button id="next" title="Next change (n)">next change ▶</button>
</header>
<main><ul id="passes"></ul><div id="detail"></div></main>`;

export class TracePanel implements vscode.Disposable {
  private readonly host: WebviewHost;
  private source: vscode.Uri | undefined;
  private trace: PassTrace | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly server: TilescopeServer,
  ) {
    this.host = new WebviewHost(extensionUri, { viewType: "tilescope.trace", script: "trace.js", styles: STYLES, body: BODY }, (m) =>
      this.onMessage(m),
    );
  }

  async show(uri: vscode.Uri, kernel: string | null): Promise<void> {
    this.source = uri;
    await this.host.reveal(`Passes: ${kernel ?? uri.path.split("/").pop()}`);
    try {
      this.trace = parseTrace(await this.server.execute(SERVER_COMMANDS.tracePasses, [uri.toString(), kernel]));
      this.host.post({ type: "trace", trace: this.trace });
    } catch (error) {
      this.host.post({ type: "error", message: `Tracing passes failed: ${errorText(error)}` });
    }
  }

  private async onMessage(message: { type: string } & Record<string, unknown>): Promise<void> {
    if (message.type === "select" && typeof message.index === "number" && this.source && this.trace) {
      const index = message.index;
      try {
        const diff = parsePassDiff(await this.server.execute(SERVER_COMMANDS.passIR, [this.source.toString(), this.trace.kernel, index]));
        this.host.post({ type: "ir", index, diff });
      } catch (error) {
        this.host.post({ type: "error", message: `The IR around pass ${index} is not available: ${errorText(error)}` });
      }
    } else if (message.type === "reveal" && typeof message.line === "number" && this.source) {
      await revealLine(this.source, message.line);
    }
  }

  dispose(): void {
    this.host.dispose();
  }
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
