/** The status bar item: the analysis state of the active Python file (or of the server). */

import * as vscode from "vscode";
import { type AnalysisState, present } from "./analysisState";

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("tilescope.status", vscode.StatusBarAlignment.Left, 10);
  private readonly perDocument = new Map<string, AnalysisState>();
  private serverState: AnalysisState = "starting";
  private detail: string | undefined;
  private readonly subscription: vscode.Disposable;

  constructor(outputCommand: string) {
    this.item.name = "Tilescope";
    this.item.command = outputCommand;
    this.subscription = vscode.window.onDidChangeActiveTextEditor(() => this.render());
    this.render();
    this.item.show();
  }

  /** The state of the whole server (starting, static only, error...); clears per-file states. */
  setServer(state: AnalysisState, detail?: string): void {
    this.serverState = state;
    this.detail = detail;
    this.perDocument.clear();
    this.render();
  }

  /** A state the server reported for one file. */
  setDocument(uri: string, state: AnalysisState, detail?: string): void {
    this.perDocument.set(uri, state);
    this.detail = detail;
    this.render();
  }

  private render(): void {
    const active = vscode.window.activeTextEditor?.document.uri.toString();
    const state = (active && this.perDocument.get(active)) || this.serverState;
    const p = present(state, this.detail);
    this.item.text = p.text;
    this.item.tooltip = p.tooltip;
    this.item.backgroundColor = p.isError ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
