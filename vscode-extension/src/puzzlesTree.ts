/**
 * "Tilescope: Puzzles": a tree of the puzzles with progress, backed by the `tilescope puzzles`
 * command line, and a check of the open file against its puzzle.
 */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { parseCheck, parsePuzzles, parseSubmit, progress, type Puzzle, puzzleForFile } from "./puzzleModel";
import { commandArgs } from "./interpreter";
import { errorText } from "./tracePanel";

const TOKEN_KEY = "tilescope.gradingToken";

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
    item.command = { command: "tilescope.openPuzzle", title: "Open puzzle", arguments: [p] };
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

  /** Opens the learner's file of a puzzle, created from its starter by `puzzles start` when new. */
  async open(puzzle: Puzzle): Promise<void> {
    try {
      const printed = (await this.output(["puzzles", "start", String(puzzle.number)])).trim().split("\n").pop() ?? "";
      const file = printed || (puzzle.path ? this.absolute(puzzle.path) : "");
      await vscode.window.showTextDocument(vscode.Uri.file(file));
    } catch (error) {
      void vscode.window.showErrorMessage(`Opening puzzle ${puzzle.number} failed: ${errorText(error)}`);
    }
  }

  /** Checks a puzzle: the given one against its file, or the active editor's file against its puzzle. */
  async check(puzzle?: Puzzle): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("Checking a puzzle runs its code: trust this workspace first.");
      return;
    }
    // From the tree: the learner's own file (the command line knows where it is);
    // from the editor: the open file, matched to its puzzle.
    let target = puzzle;
    let file: string | undefined;
    const editor = vscode.window.activeTextEditor;
    if (!target && editor) {
      await editor.document.save();
      file = editor.document.uri.fsPath;
      target = puzzleForFile(this.puzzles.length ? this.puzzles : parsePuzzles(await this.run(["puzzles", "list", "--json"])), file);
    }
    if (!target) {
      void vscode.window.showWarningMessage("Open a puzzle's file, or pick a puzzle in the Puzzles view, to check it.");
      return;
    }
    const chosen = target;
    const args = ["puzzles", "check", String(chosen.number), ...(file ? [file] : []), "--json"];
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Checking puzzle ${chosen.number}…` },
      async () => {
        try {
          return parseCheck(await this.run(args));
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

  /** Sends the open file (or the puzzle's own) to the class's grading server (`tilescope.gradingServer`) with
   * the learner's token, asked once and kept in the editor's secret storage; nothing runs here. */
  async submit(secrets: vscode.SecretStorage, puzzle?: Puzzle): Promise<void> {
    const server = vscode.workspace.getConfiguration("tilescope").get<string>("gradingServer", "").trim();
    if (!server) {
      void vscode.window.showWarningMessage("Set tilescope.gradingServer to your class's server (http://host:8765) first.");
      return;
    }
    let target = puzzle;
    let file = puzzle?.path ? this.absolute(puzzle.path) : undefined;
    const editor = vscode.window.activeTextEditor;
    if (!target && editor) {
      await editor.document.save();
      file = editor.document.uri.fsPath;
      target = puzzleForFile(this.puzzles.length ? this.puzzles : parsePuzzles(await this.run(["puzzles", "list", "--json"])), file);
    }
    if (!target || !file) {
      void vscode.window.showWarningMessage("Open a puzzle's file, or pick a started puzzle in the Puzzles view, to submit it.");
      return;
    }
    let token = await secrets.get(TOKEN_KEY);
    if (!token) {
      token = await vscode.window.showInputBox({ prompt: "Your grading server token (from your teacher)", password: true, ignoreFocusOut: true });
      if (!token) {
        return;
      }
      await secrets.store(TOKEN_KEY, token);
    }
    const chosen = target;
    const args = ["puzzles", "submit", String(chosen.number), file, "--server", server, "--json"];
    const env = { ...process.env, TILESCOPE_TOKEN: token };
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Submitting puzzle ${chosen.number} to ${server}…` },
      async () => {
        try {
          return parseSubmit(await this.run(args, env));
        } catch (error) {
          return { passed: false, message: errorText(error) };
        }
      },
    );
    if (result.passed) {
      void vscode.window.showInformationMessage(`Puzzle ${chosen.number} passed on the server: ${result.message}`);
    } else {
      void vscode.window.showErrorMessage(`Puzzle ${chosen.number} on the server: ${result.message}`);
    }
  }

  private absolute(path: string): string {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return path.startsWith("/") || !root ? path : `${root}/${path}`;
  }

  /** Runs `tilescope ARGS` in `<python>` and parses its JSON stdout; a failing check still prints JSON. */
  private async run(args: string[], env?: NodeJS.ProcessEnv): Promise<unknown> {
    const { stdout, stderr, error } = await this.exec(args, env);
    try {
      return JSON.parse(stdout);
    } catch {
      throw new Error(lastLines(stderr || error?.message || "no output"));
    }
  }

  private async output(args: string[]): Promise<string> {
    const { stdout, stderr, error } = await this.exec(args);
    if (error) {
      throw new Error(lastLines(stderr || error.message));
    }
    return stdout;
  }

  private async exec(args: string[], env?: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string; error: Error | null }> {
    const python = await this.python();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return new Promise((resolve) => {
      execFile(python, commandArgs(args), { cwd, env, timeout: 1_900_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
        resolve({ stdout, stderr, error }),
      );
    });
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

function lastLines(text: string): string {
  return text.trim().split("\n").slice(-3).join(" ");
}
