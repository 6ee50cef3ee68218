/**
 * "Tilescope: Puzzles": a tree of the puzzles with progress, backed by the `tilescope puzzles`
 * command line, and a check of the open file against its puzzle.
 */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { type CheckResult, parseCheck, parsePuzzles, parseSubmit, progress, type Puzzle, puzzleForFile } from "./puzzleModel";
import { commandArgs } from "./interpreter";
import { errorText } from "./tracePanel";

const TOKEN_KEY = "tilescope.gradingToken";
/** How long a `tilescope puzzles` command may take: a check compiles and runs every case. */
const COMMAND_MS = 300_000;
/** `puzzles submit` waits up to 1,800 s for the server's verdict (its `--wait`), then says it is still queued. */
const SUBMIT_MS = 1_900_000;

interface Exec {
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

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
    const { target, file } = puzzle ? { target: puzzle, file: undefined } : await this.editorPuzzle();
    if (!target) {
      void vscode.window.showWarningMessage("Open a puzzle's file, or pick a puzzle in the Puzzles view, to check it.");
      return;
    }
    const args = ["puzzles", "check", String(target.number), ...(file ? [file] : []), "--json"];
    const result = await this.runShown(`Checking puzzle ${target.number}…`, args, parseCheck);
    if (result.passed) {
      void vscode.window.showInformationMessage(`Puzzle ${target.number} solved: ${result.message}`);
    } else {
      void vscode.window.showErrorMessage(`Puzzle ${target.number}: ${result.message}`);
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
    const { target, file } = puzzle
      ? { target: puzzle, file: puzzle.path ? this.absolute(puzzle.path) : undefined }
      : await this.editorPuzzle();
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
    const args = ["puzzles", "submit", String(target.number), file, "--server", server, "--json"];
    const result = await this.runShown(`Submitting puzzle ${target.number} to ${server}…`, args, parseSubmit, {
      env: { ...process.env, TILESCOPE_TOKEN: token },
      timeoutMs: SUBMIT_MS,
    });
    if (result.passed) {
      void vscode.window.showInformationMessage(`Puzzle ${target.number} passed on the server: ${result.message}`);
    } else {
      void vscode.window.showErrorMessage(`Puzzle ${target.number} on the server: ${result.message}`);
    }
  }

  /** The active editor's file, saved, and the puzzle it belongs to (undefined when none or no editor). */
  private async editorPuzzle(): Promise<{ target: Puzzle | undefined; file: string | undefined }> {
    const editor = vscode.window.activeTextEditor;
    if (!editor) {
      return { target: undefined, file: undefined };
    }
    await editor.document.save();
    const file = editor.document.uri.fsPath;
    const known = this.puzzles.length ? this.puzzles : parsePuzzles(await this.run(["puzzles", "list", "--json"]));
    return { target: puzzleForFile(known, file), file };
  }

  /** Runs `tilescope ARGS` under a progress notification; a failure to run becomes a failed result. */
  private runShown(title: string, args: string[], parse: (value: unknown) => CheckResult, how: Exec = {}): Thenable<CheckResult> {
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, async () => {
      try {
        return parse(await this.run(args, how));
      } catch (error) {
        return { passed: false, message: errorText(error) };
      }
    });
  }

  private absolute(path: string): string {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return path.startsWith("/") || !root ? path : `${root}/${path}`;
  }

  /** Runs `tilescope ARGS` in `<python>` and parses its JSON stdout; a failing check still prints JSON. */
  private async run(args: string[], how: Exec = {}): Promise<unknown> {
    const { stdout, stderr, error } = await this.exec(args, how);
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

  private async exec(args: string[], how: Exec = {}): Promise<{ stdout: string; stderr: string; error: Error | null }> {
    const python = await this.python();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const options = { cwd, env: how.env, timeout: how.timeoutMs ?? COMMAND_MS, maxBuffer: 16 << 20 };
    return new Promise((resolve) => {
      execFile(python, commandArgs(args), options, (error, stdout, stderr) =>
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
