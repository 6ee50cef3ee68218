/** "Tilescope: Plot Layout": the server's view of the chosen buffer's inferred layout. */

import * as vscode from "vscode";
import { parseKernelLayout } from "./layoutSvg";
import { SERVER_COMMANDS } from "./lensCommands";
import type { TilescopeServer } from "./server";
import { errorText } from "./tracePanel";
import { BASE_STYLES, WebviewHost } from "./webviewPanel";

const STYLES =
  BASE_STYLES +
  `
header { display: flex; gap: 12px; align-items: center; padding: 8px 0; }
#modes { display: flex; gap: 4px; flex-wrap: wrap; }
#facts table { border-collapse: collapse; margin: 6px 0; }
#facts th { text-align: left; padding: 1px 10px 1px 0; font-weight: normal; opacity: .75; vertical-align: top; }
#facts code { white-space: pre-wrap; word-break: break-all; line-height: 1.5; }
#legend { display: flex; gap: 10px; flex-wrap: wrap; margin: 4px 0; }
#legend .swatch { display: inline-block; width: .9em; height: .9em; margin-right: 4px; vertical-align: middle; }
#readout { height: 1.4em; font-family: var(--vscode-editor-font-family); }
#plot { overflow: auto; }
svg.layout text { font: 9px var(--vscode-editor-font-family); text-anchor: middle; fill: #111; pointer-events: none; }
svg.layout rect { stroke: rgba(0,0,0,.25); stroke-width: .5; }
`;

const BODY = `
<header>
  <label>Buffer <select id="buffer"></select></label>
  <div id="modes"></div>
</header>
<div id="title"></div>
<div id="facts"></div>
<div id="caption" class="hint"></div>
<div id="legend"></div>
<div id="readout"></div>
<div id="plot"><p class="loading">Loading the layout…</p></div>`;

export class LayoutPanel implements vscode.Disposable {
  private readonly host: WebviewHost;
  private source: vscode.Uri | undefined;
  private kernel: string | null = null;

  constructor(
    extensionUri: vscode.Uri,
    private readonly server: TilescopeServer,
  ) {
    this.host = new WebviewHost(extensionUri, { viewType: "tilescope.layout", script: "layout.js", styles: STYLES, body: BODY }, (m) => {
      if (m.type === "buffer" && typeof m.name === "string") {
        void this.plot(m.name);
      }
    });
  }

  async show(uri: vscode.Uri, kernel: string | null, buffer: string | null): Promise<void> {
    this.source = uri;
    this.kernel = kernel;
    await this.host.reveal(`Layout: ${buffer ?? kernel ?? uri.path.split("/").pop()}`);
    await this.plot(buffer);
  }

  /** Asks the server for one buffer's view (its first buffer when `null`), with the kernel's buffer list. */
  private async plot(buffer: string | null): Promise<void> {
    if (!this.source) {
      return;
    }
    try {
      const answer = parseKernelLayout(await this.server.execute(SERVER_COMMANDS.plotLayout, [this.source.toString(), this.kernel, buffer]));
      this.kernel = answer.kernel;
      this.host.post({ type: "layout", answer });
    } catch (error) {
      this.host.post({ type: "error", message: `The layout${buffer ? ` of ${buffer}` : ""} is not available: ${errorText(error)}` });
    }
  }

  dispose(): void {
    this.host.dispose();
  }
}
