/**
 * The puzzle list and check results as the `tilescope puzzles` command prints them with
 * `--json`, read tolerantly so that an added field never breaks the tree.
 */

export interface Puzzle {
  number: number;
  title: string;
  solved: boolean;
  /** The file the user edits, when the command names one. */
  path?: string;
  description?: string;
}

export interface CheckResult {
  passed: boolean;
  message: string;
}

export function parsePuzzles(value: unknown): Puzzle[] {
  const items = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.puzzles) ? value.puzzles : [];
  return items.filter(isObject).map((p, k) => {
    const number = Number(p.number ?? p.id ?? p.index ?? k + 1);
    const status = typeof p.status === "string" ? p.status.toLowerCase() : "";
    const path = [p.path, p.file, p.starter].find((v) => typeof v === "string") as string | undefined;
    return {
      number,
      title: String(p.title ?? p.name ?? p.slug ?? `Puzzle ${number}`),
      solved: p.solved === true || p.passed === true || p.done === true || status === "solved" || status === "passed",
      path,
      description: typeof p.summary === "string" ? p.summary : typeof p.description === "string" ? p.description : undefined,
    };
  });
}

export function parseCheck(value: unknown): CheckResult {
  if (!isObject(value)) {
    return { passed: false, message: "the puzzle checker printed no result" };
  }
  const passed = value.passed === true || value.ok === true || value.solved === true || value.status === "passed";
  const text = [value.message, value.summary, value.detail, value.error].find((v) => typeof v === "string" && v.length > 0);
  return { passed, message: typeof text === "string" ? text : passed ? "All checks passed." : "The check failed." };
}

/** What `tilescope puzzles submit N FILE --json` printed: the grading server's verdict and where it was graded. */
export function parseSubmit(value: unknown): CheckResult {
  const verdict = isObject(value) && isObject(value.verdict) ? value.verdict : undefined;
  if (!verdict) {
    const state = isObject(value) && typeof value.state === "string" ? value.state : "not answered";
    return { passed: false, message: `the grading server has no verdict yet (${state})` };
  }
  const summary = typeof verdict.summary === "string" ? verdict.summary : "no summary";
  const where = typeof verdict.graded_on === "string" ? ` Graded on ${verdict.graded_on}.` : "";
  return { passed: verdict.passed === true, message: `${summary}${where}` };
}

/** The puzzle whose file is `fsPath`, matched by path suffix or by the `NN_` folder prefix. */
export function puzzleForFile(puzzles: Puzzle[], fsPath: string): Puzzle | undefined {
  const normal = fsPath.replace(/\\/g, "/");
  const byPath = puzzles.find((p) => p.path && (normal.endsWith(p.path.replace(/\\/g, "/")) || p.path.endsWith(normal)));
  if (byPath) {
    return byPath;
  }
  const match = /(?:^|\/)(\d+)_[^/]*\/[^/]+\.py$/.exec(normal) ?? /(?:^|\/)(?:puzzle_?)?(\d+)[^/]*\.py$/.exec(normal);
  return match ? puzzles.find((p) => p.number === Number(match[1])) : undefined;
}

export function progress(puzzles: Puzzle[]): string {
  return `${puzzles.filter((p) => p.solved).length}/${puzzles.length} solved`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
