/**
 * Which Python runs the language server. The order is the user's explicit setting, then the
 * interpreter the Python extension has selected for the workspace, then `python3` on PATH: the
 * compiler tier must import the same TileLang the user's kernels import.
 */

export type InterpreterSource = "setting" | "python-extension" | "default";

export interface Interpreter {
  path: string;
  source: InterpreterSource;
}

export const FALLBACK_PYTHON = "python3";

export function pickInterpreter(setting: string | undefined, pythonExtension: string | undefined): Interpreter {
  const configured = setting?.trim();
  if (configured) {
    return { path: configured, source: "setting" };
  }
  const selected = pythonExtension?.trim();
  if (selected) {
    return { path: selected, source: "python-extension" };
  }
  return { path: FALLBACK_PYTHON, source: "default" };
}

/** `<python> -m tilescope lsp`: the module form needs no console script on PATH. */
export function serverArgs(): string[] {
  return ["-m", "tilescope", "lsp"];
}

/** Modules the server needs; looked up with `find_spec`, which imports nothing. */
export const REQUIRED_MODULES = ["tilescope", "pygls", "tilelang"] as const;

export const PREFLIGHT_SCRIPT =
  "import importlib.util as u\n" +
  `print(",".join(m for m in ${JSON.stringify(REQUIRED_MODULES)} if u.find_spec(m) is None))`;

/** Parses the preflight script's output into the missing module names. */
export function parseMissing(stdout: string): string[] {
  return stdout
    .trim()
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
}

/** What the user reads when the server cannot start, with the command that fixes it. */
export function missingMessage(interpreter: Interpreter, missing: string[]): string {
  const where = describe(interpreter);
  if (missing.includes("tilescope")) {
    return (
      `Tilescope is not installed in ${where}. Install it there (\`${interpreter.path} -m pip install -e <tilescope checkout>\`) ` +
      "or point the setting tilescope.pythonPath at an interpreter that has it."
    );
  }
  return (
    `${where} lacks ${missing.join(", ")}. Install Tilescope's dependencies there ` +
    `(\`${interpreter.path} -m pip install tilelang==0.1.15 "pygls>=2.1,<3"\`) or set tilescope.pythonPath.`
  );
}

export function notFoundMessage(interpreter: Interpreter): string {
  return (
    `Tilescope could not run ${describe(interpreter)}. Set tilescope.pythonPath to a Python 3.11+ ` +
    "interpreter with Tilescope and TileLang installed, or select one with the Python extension."
  );
}

function describe(interpreter: Interpreter): string {
  switch (interpreter.source) {
    case "setting":
      return `the interpreter from tilescope.pythonPath (${interpreter.path})`;
    case "python-extension":
      return `the Python extension's selected interpreter (${interpreter.path})`;
    default:
      return `${interpreter.path} from PATH`;
  }
}
