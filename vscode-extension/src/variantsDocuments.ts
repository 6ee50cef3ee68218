/**
 * "Tilescope: Show Variants": the `tilescope variants` table of a kernel (every default target and
 * autotune config, side by side) as a read-only virtual document, run again when its file is saved.
 * It runs the user's code, so only in a trusted workspace.
 */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { commandArgs } from "./interpreter";
import { errorText } from "./tracePanel";
import { parseVariantsQuery, VARIANTS_SCHEME, variantsArgs, variantsPath, variantsQuery } from "./variantsUri";

export class VariantsDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly python: () => Promise<string>) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(VARIANTS_SCHEME, this),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        for (const key of this.open) {
          const uri = vscode.Uri.parse(key);
          if (parseVariantsQuery(uri.query).source === doc.uri.toString()) {
            this.changed.fire(uri);
          }
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.open.delete(doc.uri.toString())),
    ];
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const target = parseVariantsQuery(uri.query);
    this.open.add(uri.toString());
    if (!vscode.workspace.isTrusted) {
      return "Listing variants runs the kernel file's code: trust this workspace first.\n";
    }
    const file = vscode.Uri.parse(target.source).fsPath;
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "Tilescope: lowering variants…" },
        () => this.run(variantsArgs(file, target.kernel)),
      );
    } catch (error) {
      return `Listing variants of ${target.kernel ?? file} failed: ${errorText(error)}\n`;
    }
  }

  async show(source: vscode.Uri, kernel: string | null): Promise<void> {
    const query = variantsQuery({ source: source.toString(), kernel });
    const uri = vscode.Uri.from({ scheme: VARIANTS_SCHEME, path: variantsPath(kernel), query });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  /** `tilescope ARGS` in `<python>`: its table, which is printed even when no variant can run. */
  private async run(args: string[]): Promise<string> {
    const python = await this.python();
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return new Promise((resolve, reject) => {
      execFile(python, commandArgs(args), { cwd, timeout: 600_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        if (stdout.trim()) {
          resolve(stdout);
        } else {
          reject(new Error(stderr.trim().split("\n").slice(-3).join(" ") || error?.message || "no output"));
        }
      });
    });
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.changed.dispose();
  }
}
