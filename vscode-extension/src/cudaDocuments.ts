/**
 * "Tilescope: Show Generated CUDA": the kernel's device source as a read-only virtual
 * document, re-fetched when its Python file is saved.
 */

import * as vscode from "vscode";
import { CUDA_SCHEME, cudaPath, cudaQuery, parseCudaQuery } from "./cudaUri";
import { SERVER_COMMANDS } from "./lensCommands";
import type { TilescopeServer } from "./server";
import { errorText } from "./tracePanel";

export class CudaDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Set<string>();
  private readonly subscriptions: vscode.Disposable[];

  constructor(private readonly server: TilescopeServer) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(CUDA_SCHEME, this),
      vscode.workspace.onDidSaveTextDocument((doc) => {
        for (const key of this.open) {
          const uri = vscode.Uri.parse(key);
          if (parseCudaQuery(uri.query).source === doc.uri.toString()) {
            this.changed.fire(uri);
          }
        }
      }),
      vscode.workspace.onDidCloseTextDocument((doc) => this.open.delete(doc.uri.toString())),
    ];
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const target = parseCudaQuery(uri.query);
    this.open.add(uri.toString());
    try {
      const answer = await this.server.execute<{ source?: string | null }>(SERVER_COMMANDS.showCuda, [target.source, target.kernel]);
      return answer?.source ?? `// No device source for ${target.kernel}: the kernel did not lower (see the Problems panel).\n`;
    } catch (error) {
      return `// Generating CUDA for ${target.kernel} failed: ${errorText(error)}\n`;
    }
  }

  async show(source: vscode.Uri, kernel: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: CUDA_SCHEME, path: cudaPath(kernel), query: cudaQuery({ source: source.toString(), kernel }) });
    let doc = await vscode.workspace.openTextDocument(uri);
    const languages = await vscode.languages.getLanguages();
    const language = ["cuda-cpp", "cpp", "c"].find((l) => languages.includes(l));
    if (language && doc.languageId !== language) {
      doc = await vscode.languages.setTextDocumentLanguage(doc, language);
    }
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  dispose(): void {
    this.subscriptions.forEach((s) => s.dispose());
    this.changed.dispose();
  }
}
