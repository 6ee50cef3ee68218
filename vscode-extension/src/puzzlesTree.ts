/**
 * "Tilescope: Puzzles": a tree of the puzzles with progress, backed by the `tilescope puzzles`
 * command line, and a check of the open file against its puzzle.
 */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { parseCheck, parsePuzzles, progress, type Puzzle, puzzleForFile } from "./puzzleModel";
import { errorText } from "./tracePanel";

export class PuzzlesTree implements vscode.TreeDataProvider<Puzzle>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Puzzle | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private puzzles: Puzzle[] = [];
  private readonly view: vscode.TreeView<Puzzle>;

  constructor(private readonly python: () => Promise<string>) {
    this.view = vscode.window.createTreeView("tilescope.puzzles", { treeDataProvider: this, showCollapseAll: false });
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  getTreeItem(p: Puzzle): vscode.TreeItem {
    const item = new vscode.TreeItem(`${p.number}. ${p.title}`, vscode.TreeItemCollapsibleState.None);
    item.contextValue = "puzzle";
    item.description = p.solved ? "solved" : "";
    item.tooltip = p.description ?? p.title;
    item.iconPath = new vscode.ThemeIcon(p.solved ? "pass-filled" : "circle-large-outline");
    if (p.path) {
      const uri = vscode.Uri.file(this.absolute(p.path));
      item.resourceUri = uri;
      item.command = { command: "vscode.open", title: "Open puzzle", arguments: [uri] };
    }
    return item;
  }

  async getChildren(element?: Puzzle): Promise<Puzzle[]> {
    if (element) {
      return [];
    }
    try {
      this.puzzles = parsePuzzles(await this.run(["puzzles", "list", "--json"]));
      this.view.message = this.puzzles.length ? progress(this.puzzles) : "No puzzles found.";
    } catch (error) {
      this.puzzles = [];
      this.view.message = `Listing puzzles failed: ${errorText(error)}`;
    }
    return this.puzzles;
  }

  /** Checks a puzzle: the given one against its file, or the active editor's file against its puzzle. */
  async check(puzzle?: Puzzle): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("Checking a puzzle runs its code: trust this workspace first.");
      return;
    }
    const editor = vscode.window.activeTextEditor;
    let target = puzzle;
    let file = puzzle?.path ? this.absolute(puzzle.path) : undefined;
    if (!target && editor) {
      await editor.document.save();
      file = editor.document.uri.fsPath;
      target = puzzleForFile(this.puzzles.length ? this.puzzles : parsePuzzles(await this.run(["puzzles", "list", "--json"])), file);
    }
    if (!target || !file) {
      void vscode.window.showWarningMessage("Open a puzzle's file, or pick a puzzle in the Puzzles view, to check it.");
      return;
    }
    const chosen = target;
    const path = file;
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Checking puzzle ${chosen.number}…` },
      async () => {
        try {
          return parseCheck(await this.run(["puzzles", "check", String(chosen.number), path, "--json"]));
        } catch (error) {
          return { passed: false, message: errorText(error) };
        }
      },
    );
    if (result.passed) {
      void vscode.window.showInformationMessage(`Puzzle ${chosen.number} solved: ${result.message}`);
    } else {
      void vscode.window.showErrorMessage(`Puzzle ${chosen.number}: ${result.message}`);
    }
    this.refresh();
  }

  private absolute(path: string): string {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return path.startsWith("/") || !root ? path : `${root}/${path}`;
  }

  /** Runs `<python> -m tilelang_core.cli ARGS` and parses its JSON stdout; a failing check still prints JSON. */
  private async run(args: string[]): Promise<unknown> {
    const python = await this.python();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return new Promise((resolve, reject) => {
      execFile(python, ["-m", "tilelang_core.cli", ...args], { cwd, timeout: 300_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error((stderr || error?.message || "no output").trim().split("\n").slice(-3).join(" ")));
        }
      });
    });
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}
