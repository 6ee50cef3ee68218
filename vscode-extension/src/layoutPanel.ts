/** "Tilescope: Plot Layout": the chosen buffer's inferred layout drawn from the server's grid. */

import * as vscode from "vscode";
import { kernelsOf, pickKernel } from "./kernelModel";
import { parsePlotLayout } from "./layoutSvg";
import { SERVER_COMMANDS } from "./lensCommands";
import type { TilescopeServer } from "./server";
import { errorText } from "./tracePanel";
import { BASE_STYLES, WebviewHost } from "./webviewPanel";

const STYLES =
  BASE_STYLES +
  `
header { display: flex; gap: 12px; align-items: center; padding: 8px 0; }
#modes { display: flex; gap: 4px; }
#facts table { border-collapse: collapse; margin: 6px 0; }
#facts th { text-align: left; padding: 1px 10px 1px 0; font-weight: normal; opacity: .75; vertical-align: top; }
#facts code { white-space: pre-wrap; word-break: break-all; line-height: 1.5; }
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
<div id="facts"></div>
<div id="caption" class="hint"></div>
<div id="readout"></div>
<div id="plot"><p class="loading">Loading the layout…</p></div>`;

export class LayoutPanel implements vscode.Disposable {
  private readonly host: WebviewHost;
  private source: vscode.Uri | undefined;
  private kernel: string | undefined;
  private buffers: string[] = [];

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
    await this.host.reveal(`Layout: ${buffer ?? kernel ?? uri.path.split("/").pop()}`);
    try {
      const found = pickKernel(kernelsOf(await this.server.execute(SERVER_COMMANDS.kernelModel, [uri.toString()])), kernel);
      if (!found) {
        throw new Error(
          "no compiled kernel in this file yet (layouts come from the compiler tier: the workspace must be trusted and the file must build)",
        );
      }
      this.kernel = found.name;
      this.buffers = found.layoutBuffers;
      const chosen = buffer ?? this.buffers[0];
      if (!chosen) {
        throw new Error(`kernel ${found.name} has no buffer with an inferred layout`);
      }
      await this.plot(chosen);
    } catch (error) {
      this.host.post({ type: "error", message: `Plotting the layout failed: ${errorText(error)}` });
    }
  }

  private async plot(buffer: string): Promise<void> {
    if (!this.source || !this.kernel) {
      return;
    }
    try {
      const answer = parsePlotLayout(await this.server.execute(SERVER_COMMANDS.plotLayout, [this.source.toString(), this.kernel, buffer]));
      const buffers = this.buffers.includes(buffer) ? this.buffers : [buffer, ...this.buffers];
      this.host.post({ type: "layout", buffer, buffers, answer });
    } catch (error) {
      this.host.post({ type: "error", message: `The layout of ${buffer} is not available: ${errorText(error)}` });
    }
  }

  dispose(): void {
    this.host.dispose();
  }
}
