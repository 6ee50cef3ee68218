/** "Tilescope: Show Ascend Schedule": an Ascend kernel's Cube and Vector lanes with the flags between, from the server. */

import * as vscode from "vscode";
import { SERVER_COMMANDS } from "./lensCommands";
import { parseSchedule } from "./scheduleModel";
import type { TilescopeServer } from "./server";
import { errorText } from "./tracePanel";
import { BASE_STYLES, revealLine, WebviewHost } from "./webviewPanel";

const STYLES =
  BASE_STYLES +
  `
:root { --cube: var(--vscode-charts-blue, #3794ff); --vector: var(--vscode-charts-orange, #d18616); --across: var(--vscode-charts-purple, #b180d7);
  --rule: var(--vscode-editorIndentGuide-background1, rgba(128,128,128,.35)); }
header { display: flex; flex-direction: column; gap: 4px; padding: 8px 0; border-bottom: 1px solid var(--vscode-panel-border); }
.legend { display: flex; gap: 14px; flex-wrap: wrap; font-size: .9em; opacity: .9; }
.key::before { content: ""; display: inline-block; vertical-align: middle; margin-right: 5px; }
.key.lane-cube::before, .key.lane-vector::before { width: .8em; height: .8em; background: var(--cube); }
.key.lane-vector::before { background: var(--vector); }
.key.line::before { width: 26px; border-top: 2px solid var(--across); }
.key.line.again::before { border-top-style: dashed; }
.key.line.after::before { border-top-style: dotted; }
h3 { margin: 10px 0 4px; font-size: 1em; }
.levels { display: flex; gap: 18px; flex-wrap: wrap; }
.level { flex: 1 1 0; min-width: 180px; max-width: 420px; }
.bar { height: 6px; max-width: 260px; background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-panel-border); margin: 3px 0; }
.bar span { display: block; height: 100%; background: var(--vscode-charts-green, #89d185); }
.level.over .bar span { background: var(--vscode-errorForeground); }
.level ul { margin: 2px 0; padding-left: 16px; font-size: .92em; }
.lanes { display: grid; grid-template-columns: 40px minmax(180px, 46ch) 170px minmax(180px, 46ch) 40px; justify-content: start;
  margin: 12px 0; font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
.lanehead { font-weight: bold; padding: 4px 6px; border-bottom: 2px solid var(--cube); }
.lanehead.lane-vector { border-bottom-color: var(--vector); }
.row { position: relative; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; line-height: 24px;
  padding-left: calc(var(--depth) * 12px + 8px); background-image: repeating-linear-gradient(to right, var(--rule) 0 1px, transparent 1px 12px);
  background-size: calc(var(--depth) * 12px) 100%; background-repeat: no-repeat; background-position: 8px 0; }
.row.lane-cube { border-left: 3px solid var(--cube); }
.row.lane-vector { border-left: 3px solid var(--vector); }
.row.kind-loop { font-weight: bold; background-color: var(--vscode-editorWidget-background); }
.row.kind-control { opacity: .8; }
.row.kind-flag, .row.kind-slot { font-style: italic; opacity: .85; }
.row.kind-flag.across { color: var(--across); opacity: 1; }
.row[data-line] { cursor: pointer; }
.row[data-line]:hover, .row.hot, .flaglist li.hot { background-color: var(--vscode-list-hoverBackground); }
.ln { opacity: .6; margin-right: 6px; font-size: .9em; font-style: normal; }
svg { pointer-events: none; overflow: visible; z-index: 1; }
svg path.arrow { fill: none; stroke-width: 1.6; pointer-events: visibleStroke; }
svg.gutter path.arrow { stroke: var(--across); }
svg.margin.cube path.arrow { stroke: var(--cube); }
svg.margin.vector path.arrow { stroke: var(--vector); }
svg path.again { stroke-dasharray: 5 3; }
svg path.after { stroke-dasharray: 1.5 3; }
svg path.hot { stroke-width: 3.2; }
marker.across path { fill: var(--across); }
marker.cube path { fill: var(--cube); }
marker.vector path { fill: var(--vector); }
svg text { font: 10.5px var(--vscode-font-family); fill: var(--vscode-foreground); }
svg text.from-vector { text-anchor: end; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.flaglist ol { font-family: var(--vscode-editor-font-family); font-size: .92em; padding-left: 28px; }
.memory li[data-line] { cursor: pointer; }
`;

const BODY = `<div id="schedule" aria-live="polite"><p class="loading">Lowering the kernel for Ascend…</p></div>`;

export class SchedulePanel implements vscode.Disposable {
  private readonly host: WebviewHost;
  private source: vscode.Uri | undefined;

  constructor(
    extensionUri: vscode.Uri,
    private readonly server: TilescopeServer,
  ) {
    this.host = new WebviewHost(extensionUri, { viewType: "tilescope.schedule", script: "schedule.js", styles: STYLES, body: BODY }, (m) => {
      if (m.type === "reveal" && typeof m.line === "number" && this.source) {
        void revealLine(this.source, m.line);
      }
    });
  }

  async show(uri: vscode.Uri, kernel: string | null): Promise<void> {
    this.source = uri;
    await this.host.reveal(`Schedule: ${kernel ?? uri.path.split("/").pop()}`);
    this.host.post({ type: "loading" });
    try {
      const view = parseSchedule(await this.server.execute(SERVER_COMMANDS.schedule, [uri.toString(), kernel]));
      this.host.post({ type: "schedule", view });
    } catch (error) {
      this.host.post({ type: "error", message: `The schedule is not available: ${errorText(error)}` });
    }
  }

  dispose(): void {
    this.host.dispose();
  }
}
