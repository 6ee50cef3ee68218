/**
 * A single reusable webview panel per view kind, whose script announces itself with `ready`
 * before the extension posts data to it.
 */

import * as vscode from "vscode";
import { page } from "./html";

export interface PanelSpec {
  viewType: string;
  script: string;
  styles: string;
  body: string;
}

export class WebviewHost implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready: Promise<void> = Promise.resolve();
  private readonly listeners: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly spec: PanelSpec,
    private readonly onMessage: (message: { type: string } & Record<string, unknown>) => void,
  ) {}

  /** Shows the panel (creating it if needed) and resolves once its script can take messages. */
  async reveal(title: string): Promise<void> {
    if (this.panel) {
      this.panel.title = title;
      this.panel.reveal(vscode.ViewColumn.Beside, false);
      return this.ready;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, "dist", "webview");
    const panel = vscode.window.createWebviewPanel(this.spec.viewType, title, vscode.ViewColumn.Beside, {
      enableScripts: true,
      retainContextWhenHidden: true,
      localResourceRoots: [media],
    });
    let markReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.listeners.push(
      panel.webview.onDidReceiveMessage((message) => {
        if (message?.type === "ready") {
          markReady();
        } else {
          this.onMessage(message);
        }
      }),
      panel.onDidDispose(() => {
        this.panel = undefined;
      }),
    );
    panel.webview.html = page({
      title,
      cspSource: panel.webview.cspSource,
      scriptUri: panel.webview.asWebviewUri(vscode.Uri.joinPath(media, this.spec.script)).toString(),
      styles: this.spec.styles,
      body: this.spec.body,
    });
    this.panel = panel;
    return this.ready;
  }

  post(message: unknown): void {
    void this.panel?.webview.postMessage(message);
  }

  dispose(): void {
    this.panel?.dispose();
    this.listeners.forEach((l) => l.dispose());
  }
}

/** Shows `line` (1-based) of `uri` in the first editor column, selected: where a view's row came from. */
export async function revealLine(uri: vscode.Uri, line: number): Promise<void> {
  const at = Math.max(0, line - 1);
  const editor = await vscode.window.showTextDocument(uri, { viewColumn: vscode.ViewColumn.One, preserveFocus: false });
  editor.selection = new vscode.Selection(at, 0, at, 0);
  editor.revealRange(new vscode.Range(at, 0, at, 0), vscode.TextEditorRevealType.InCenter);
}

export const BASE_STYLES = `
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground); padding: 0 12px; }
code, pre { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
button { background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); border: none; padding: 3px 10px; cursor: pointer; }
button:hover, button.active { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.error { color: var(--vscode-errorForeground); white-space: pre-wrap; }
.hint, .loading { opacity: .75; }
`;
