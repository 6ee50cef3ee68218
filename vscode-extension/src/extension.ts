/**
 * Entry point: starts the Tilescope language server and registers the views that render its
 * JSON (pass trace, layout plot, Ascend schedule, generated CUDA, variants, puzzles). Every fact shown comes from the
 * server or the `tilescope` command line; the extension holds no TileLang knowledge.
 */

import * as vscode from "vscode";
import { CudaDocuments } from "./cudaDocuments";
import { LayoutPanel } from "./layoutPanel";
import { SERVER_COMMANDS, VIEW_COMMANDS } from "./lensCommands";
import { onInterpreterChange } from "./pythonExtension";
import type { Puzzle } from "./puzzleModel";
import { PuzzlesTree } from "./puzzlesTree";
import { SchedulePanel } from "./schedulePanel";
import { resolveInterpreter, TilescopeServer } from "./server";
import { StatusBar } from "./statusBar";
import { errorText, TracePanel } from "./tracePanel";
import { VariantsDocuments } from "./variantsDocuments";

const SHOW_OUTPUT = "tilescope.showOutput";

let running: TilescopeServer | undefined;

/** The Python file a command is about: the lens's argument, else the active editor's. */
function sourceUri(arg: unknown): vscode.Uri | undefined {
  if (arg instanceof vscode.Uri) {
    return arg;
  }
  if (typeof arg === "string" && arg.length > 0) {
    return vscode.Uri.parse(arg);
  }
  const doc = vscode.window.activeTextEditor?.document;
  return doc?.languageId === "python" ? doc.uri : undefined;
}

function optionalString(arg: unknown): string | null {
  return typeof arg === "string" && arg.length > 0 ? arg : null;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Tilescope", { log: true });
  const status = new StatusBar(SHOW_OUTPUT);
  const server = new TilescopeServer(output, status);
  running = server;
  const trace = new TracePanel(context.extensionUri, server);
  const layout = new LayoutPanel(context.extensionUri, server);
  const schedule = new SchedulePanel(context.extensionUri, server);
  const cuda = new CudaDocuments(server);
  const tilescopePython = async (): Promise<string> => server.python ?? (await resolveInterpreter()).path;
  const puzzles = new PuzzlesTree(tilescopePython);
  const variants = new VariantsDocuments(tilescopePython);
  context.subscriptions.push(output, status, server, trace, layout, schedule, cuda, puzzles, variants);

  const needFile = (): undefined => {
    void vscode.window.showWarningMessage("Open a TileLang Python file first.");
    return undefined;
  };
  /** The named kernel, or the first one the server's model of the file (`kernelModel`) has compiled. */
  const firstKernel = async (uri: vscode.Uri, kernel: string | null): Promise<string> => {
    if (kernel) {
      return kernel;
    }
    const answer = await server.execute<{ kernels?: { kernel?: unknown }[] }>(SERVER_COMMANDS.kernelModel, [uri.toString()]);
    const first = answer?.kernels?.[0]?.kernel;
    if (typeof first !== "string") {
      throw new Error("no kernel of this file has been compiled yet (see the Problems panel)");
    }
    return first;
  };

  context.subscriptions.push(
    vscode.commands.registerCommand(SHOW_OUTPUT, () => output.show()),
    vscode.commands.registerCommand(VIEW_COMMANDS.openTrace, async (uri?: unknown, kernel?: unknown) => {
      const source = sourceUri(uri);
      return source ? trace.show(source, optionalString(kernel)) : needFile();
    }),
    vscode.commands.registerCommand(VIEW_COMMANDS.openLayout, async (uri?: unknown, kernel?: unknown, buffer?: unknown) => {
      const source = sourceUri(uri);
      return source ? layout.show(source, optionalString(kernel), optionalString(buffer)) : needFile();
    }),
    vscode.commands.registerCommand(VIEW_COMMANDS.openSchedule, async (uri?: unknown, kernel?: unknown) => {
      const source = sourceUri(uri);
      return source ? schedule.show(source, optionalString(kernel)) : needFile();
    }),
    vscode.commands.registerCommand(VIEW_COMMANDS.openCuda, async (uri?: unknown, kernel?: unknown) => {
      const source = sourceUri(uri);
      if (!source) {
        return needFile();
      }
      try {
        await cuda.show(source, await firstKernel(source, optionalString(kernel)));
      } catch (error) {
        void vscode.window.showErrorMessage(`Tilescope: ${errorText(error)}`);
      }
    }),
    vscode.commands.registerCommand(VIEW_COMMANDS.openVariants, async (uri?: unknown, kernel?: unknown) => {
      const source = sourceUri(uri);
      return source ? variants.show(source, optionalString(kernel)) : needFile();
    }),
    vscode.commands.registerCommand("tilescope.openPuzzles", () => vscode.commands.executeCommand("workbench.view.extension.tilescope")),
    vscode.commands.registerCommand("tilescope.openPuzzle", (puzzle: Puzzle) => puzzles.open(puzzle)),
    vscode.commands.registerCommand("tilescope.checkPuzzle", (puzzle?: Puzzle) => puzzles.check(puzzle)),
    vscode.commands.registerCommand("tilescope.submitPuzzle", (puzzle?: Puzzle) => puzzles.submit(context.secrets, puzzle)),
    vscode.commands.registerCommand("tilescope.refreshPuzzles", () => puzzles.refresh()),
    vscode.commands.registerCommand("tilescope.restartServer", () => server.restart()),
    vscode.workspace.onDidGrantWorkspaceTrust(async () => {
      // The compiler tier turns on in place: the server hears VS Code's new verdict, no reload.
      await server.sendTrust();
      status.setServer("ready");
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("tilescope.pythonPath") || event.affectsConfiguration("tilescope.compilerPythonPath")) {
        await server.restart();
      } else if (event.affectsConfiguration("tilescope")) {
        await server.sendSettings();
      }
    }),
  );
  const interpreterWatch = await onInterpreterChange(() => {
    // The Python extension's interpreter runs the server, or the compiler tier, unless both are set.
    const config = vscode.workspace.getConfiguration("tilescope");
    if (!config.get<string>("pythonPath")?.trim() || !config.get<string>("compilerPythonPath")?.trim()) {
      void server.restart();
    }
  });
  if (interpreterWatch) {
    context.subscriptions.push(interpreterWatch);
  }
  // Not awaited: activation (and so every command) need not wait for the server to initialize.
  void server.start();
}

/** Waits for the server to exit, so VS Code does not kill it mid-shutdown. */
export function deactivate(): Promise<void> | undefined {
  return running?.stop();
}
