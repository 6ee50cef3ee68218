"""On a GPU machine: ``tilescope puzzles check N FILE`` through the warm grading service, timed.

The first check starts the service (not counted); then ``--runs`` checks of the same file, each a
fresh CLI process, as a learner runs them; prints the median and p95 of the wall time and the
verdicts, writes them as JSON.

    python benchmarks/gpu/puzzle_check_warm.py OUT_JSON [--puzzle 07] [--runs 10]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check(puzzle: str, path: Path) -> tuple[float, dict[str, object]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", "puzzles", "check", puzzle, str(path), "--json", "--service"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    took = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
    except ValueError:
        report = {"raw": (done.stdout + done.stderr)[-800:]}
    return took, {k: report.get(k) for k in ("passed", "failure", "summary", "device", "raw")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--puzzle", default="07")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    folder = next((ROOT / "puzzles" / "content").glob(f"{args.puzzle}_*"))
    solution = folder / "solution.py"
    cold, first = _check(args.puzzle, solution)
    print(f"cold (service start): {cold:.2f} s {first}", flush=True)
    times, verdicts = [], []
    for _ in range(args.runs):
        took, verdict = _check(args.puzzle, solution)
        times.append(took)
        verdicts.append(verdict)
        print(f"warm: {took:.2f} s {verdict.get('passed')} {verdict.get('summary')}", flush=True)
    ordered = sorted(times)
    result = {
        "puzzle": folder.name,
        "cold_s": round(cold, 2),
        "runs": args.runs,
        "median_s": round(statistics.median(times), 3),
        "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "times_s": [round(t, 3) for t in times],
        "verdicts": verdicts,
    }
    print(f"median {result['median_s']} s, p95 {result['p95_s']} s over {args.runs} warm checks", flush=True)
    args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
