/**
 * The interpreter the Python extension (ms-python.python) has selected, when that extension is
 * installed; read through its public `environments` API, with the older `settings` API as fallback.
 */

import * as vscode from "vscode";

interface EnvironmentPath {
  path: string;
}

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

export const PYTHON_EXTENSION_ID = "ms-python.python";

async function api(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  return ext.isActive ? ext.exports : await ext.activate();
}

export async function selectedInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  try {
    const python = await api();
    if (python?.environments) {
      const envPath = python.environments.getActiveEnvironmentPath(resource);
      const env = await python.environments.resolveEnvironment(envPath);
      return env?.executable.uri?.fsPath ?? envPath.path;
    }
    return python?.settings?.getExecutionDetails(resource).execCommand?.[0];
  } catch {
    return undefined;
  }
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    return (await api())?.environments?.onDidChangeActiveEnvironmentPath(listener);
  } catch {
    return undefined;
  }
}
