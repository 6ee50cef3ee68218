/**
 * The language server's lifecycle: picks the interpreter, checks that it has Tilescope and
 * TileLang before starting (so a missing install reads as a fix, not a stack trace), starts
 * `<python> -m tilescope lsp` over stdio, and keeps the server's settings and its knowledge of
 * VS Code's workspace trust in step with VS Code's.
 */

import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { stateFromServer, type StatusNotification } from "./analysisState";
import {
  compilerInterpreter,
  type Interpreter,
  missingMessage,
  notFoundMessage,
  parseMissing,
  pickInterpreter,
  PREFLIGHT_SCRIPT,
  serverArgs,
} from "./interpreter";
import { viewCommandFor } from "./lensCommands";
import { PYTHON_EXTENSION_ID, selectedInterpreter } from "./pythonExtension";
import {
  configurationChange,
  initializationOptions,
  serverSettings,
  type ServerSettings,
  trustChange,
  WORKSPACE_TRUST_NOTIFICATION,
} from "./settings";
import type { StatusBar } from "./statusBar";

export const STATUS_NOTIFICATION = "tilescope/status";

export function currentSettings(compilerPython?: string): ServerSettings {
  const config = vscode.workspace.getConfiguration("tilescope");
  return serverSettings((key, fallback) => config.get(key, fallback), compilerPython);
}

function activeResource(): vscode.Uri | undefined {
  return vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
}

export async function resolveInterpreter(): Promise<Interpreter> {
  const setting = vscode.workspace.getConfiguration("tilescope").get<string>("pythonPath");
  const fromExtension = setting?.trim() ? undefined : await selectedInterpreter(activeResource());
  return pickInterpreter(setting, fromExtension);
}

async function resolveCompilerInterpreter(server: Interpreter): Promise<string | undefined> {
  const setting = vscode.workspace.getConfiguration("tilescope").get<string>("compilerPythonPath");
  const fromExtension = setting?.trim() || server.source !== "setting" ? undefined : await selectedInterpreter(activeResource());
  return compilerInterpreter(setting, server, fromExtension);
}

type Preflight = { ok: true } | { ok: false; message: string };

function preflight(interpreter: Interpreter, compilerPython: string | undefined): Promise<Preflight> {
  return new Promise((resolve) => {
    execFile(interpreter.path, ["-c", PREFLIGHT_SCRIPT], { timeout: 30_000 }, (error, stdout) => {
      if (error && (error as NodeJS.ErrnoException).code === "ENOENT") {
        resolve({ ok: false, message: notFoundMessage(interpreter) });
      } else if (error) {
        resolve({ ok: false, message: `${notFoundMessage(interpreter)} (${error.message.split("\n")[0]})` });
      } else {
        // TileLang is needed in the server's interpreter only when the compiler tier runs there.
        const missing = parseMissing(stdout).filter((m) => m !== "tilelang" || !compilerPython);
        resolve(missing.length ? { ok: false, message: missingMessage(interpreter, missing) } : { ok: true });
      }
    });
  });
}

export class TilescopeServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private compilerPython: string | undefined;
  /** Starts and stops run one after another, so a settings change mid-start never leaves two servers. */
  private lifecycle: Promise<void> = Promise.resolve();

  constructor(
    private readonly output: vscode.LogOutputChannel,
    private readonly status: StatusBar,
  ) {}

  get python(): string | undefined {
    return this.interpreter?.path;
  }

  start(): Promise<void> {
    return this.serially(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serially(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.serially(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private serially(step: () => Promise<void>): Promise<void> {
    this.lifecycle = this.lifecycle.then(step, step);
    return this.lifecycle;
  }

  private async doStart(): Promise<void> {
    this.status.setServer("starting");
    this.interpreter = await resolveInterpreter();
    this.output.appendLine(`Interpreter: ${this.interpreter.path} (${this.interpreter.source})`);
    this.compilerPython = await resolveCompilerInterpreter(this.interpreter);
    if (this.compilerPython) {
      this.output.appendLine(`Compiler tier: ${this.compilerPython}`);
    }
    const check = await preflight(this.interpreter, this.compilerPython);
    if (!check.ok) {
      this.output.appendLine(check.message);
      this.status.setServer("error", check.message);
      void this.offerFix(check.message);
      return;
    }
    const serverOptions: ServerOptions = {
      command: this.interpreter.path,
      args: serverArgs(),
      transport: TransportKind.stdio,
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "python" },
        { scheme: "untitled", language: "python" },
      ],
      initializationOptions: initializationOptions(currentSettings(this.compilerPython), vscode.workspace.isTrusted),
      outputChannel: this.output,
      middleware: this.middleware(),
    };
    const client = new LanguageClient("tilescope", "Tilescope", serverOptions, clientOptions);
    client.onNotification(STATUS_NOTIFICATION, (params: StatusNotification) => {
      const state = stateFromServer(params.state ?? "");
      if (!state) {
        return;
      }
      if (params.uri) {
        this.status.setDocument(params.uri, state, params.message);
      } else {
        this.status.setServer(state, params.message);
      }
    });
    this.client = client;
    try {
      await client.start();
      this.status.setServer(vscode.workspace.isTrusted ? "ready" : "static", `Interpreter: ${this.interpreter.path} (${this.interpreter.source})`);
    } catch (error) {
      const message = `The Tilescope language server did not start: ${error instanceof Error ? error.message : String(error)}`;
      this.output.appendLine(message);
      this.status.setServer("error", message);
      void vscode.window.showErrorMessage(message, "Show Output").then((pick) => pick && this.output.show());
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`Stopping the server: ${String(error)}`);
      }
    }
    this.status.setServer("stopped");
  }

  /** Sends the whole `tilescope` section; the server replaces its settings with it. */
  async sendSettings(): Promise<void> {
    if (this.client?.isRunning()) {
      await this.client.sendNotification("workspace/didChangeConfiguration", configurationChange(currentSettings(this.compilerPython)));
    }
  }

  /** Tells the server VS Code's current trust verdict (it grants trust without a reload). */
  async sendTrust(): Promise<void> {
    if (this.client?.isRunning()) {
      await this.client.sendNotification(WORKSPACE_TRUST_NOTIFICATION, trustChange(vscode.workspace.isTrusted));
    }
  }

  /** Runs one of the server's `workspace/executeCommand` commands and returns its JSON answer. */
  async execute<T = unknown>(command: string, args: unknown[]): Promise<T> {
    if (!this.client?.isRunning()) {
      throw new Error("the Tilescope language server is not running (see the Tilescope output)");
    }
    return (await this.client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T;
  }

  private middleware(): Middleware {
    const rewrite = (lens: vscode.CodeLens): vscode.CodeLens => {
      if (lens.command) {
        lens.command = { ...lens.command, command: viewCommandFor(lens.command.command) };
      }
      return lens;
    };
    return {
      provideCodeLenses: async (document, token, next) => (await next(document, token))?.map(rewrite),
      resolveCodeLens: async (lens, token, next) => {
        const resolved = await next(lens, token);
        return resolved ? rewrite(resolved) : resolved;
      },
      workspace: {
        // The server may pull its settings; `python` is the interpreter the extension resolves, not a stored setting.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return params.items.map((item, k) => (item.section === "tilescope" ? currentSettings(this.compilerPython) : result[k]));
        },
      },
    };
  }

  private async offerFix(message: string): Promise<void> {
    const actions = ["Open Settings"];
    if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
      actions.push("Select Interpreter");
    }
    const pick = await vscode.window.showErrorMessage(message, ...actions);
    if (pick === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "tilescope.pythonPath");
    } else if (pick === "Select Interpreter") {
      await vscode.commands.executeCommand("python.setInterpreter");
    }
  }

  dispose(): void {
    void this.stop();
  }
}
