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

/**
 * `python -m tilescope lsp` would put the working directory (the workspace) first on `sys.path`,
 * where a folder named like one of Tilescope's modules would shadow it; this bootstrap drops that
 * entry first, on every Python version (`-P` exists only from 3.11). It needs no console script.
 * Every `tilescope` command the extension runs (the server, puzzles, variants) starts through it.
 */
export const COMMAND_BOOTSTRAP =
  "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n" +
  "from tilescope.core.cli.main import main\nsys.exit(main(sys.argv[1:]))";

/** The interpreter's arguments that run `tilescope ARGS` from any working directory. */
export function commandArgs(args: string[]): string[] {
  return ["-c", COMMAND_BOOTSTRAP, ...args];
}

export function serverArgs(): string[] {
  return commandArgs(["lsp"]);
}

/**
 * Which Python the compiler tier runs in, or undefined for the server's own. The explicit
 * `tilescope.compilerPythonPath` wins; when the server runs from `tilescope.pythonPath` (a
 * Tilescope environment), the project's interpreter selected in the Python extension supplies
 * TileLang, as Pylance analyses with the project's interpreter. That one needs only TileLang.
 */
export function compilerInterpreter(
  setting: string | undefined,
  server: Interpreter,
  pythonExtension: string | undefined,
): string | undefined {
  const configured = setting?.trim();
  if (configured) {
    return configured;
  }
  const selected = pythonExtension?.trim();
  return server.source === "setting" && selected && selected !== server.path ? selected : undefined;
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
    `(\`${interpreter.path} -m pip install "tilelang>=0.1.10,<0.2" "pygls>=2.1,<3"\`), set tilescope.pythonPath, ` +
    "or point tilescope.compilerPythonPath at your project's interpreter with TileLang."
  );
}

export function notFoundMessage(interpreter: Interpreter): string {
  return (
    `Tilescope could not run ${describe(interpreter)}. Set tilescope.pythonPath to a Python 3.10+ ` +
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
