"""Wall time of ``tilescope puzzles check`` from the shell, as a learner runs it.

``--never``: puzzle 01's ``never_loads.py`` (an endless loop at import) with ``--timeout S``: when
the report arrived and when the process was gone, both from the command's launch, and whether the
report says the limit. ``--warm N``: N checks of puzzle 01's reference through the grading service
(started once before, stopped after), each a fresh shell process. Prints one JSON object.

    .venv/bin/python benchmarks/bench_check_cli.py --never [--timeout 60] [--cpu]
    .venv/bin/python benchmarks/bench_check_cli.py --warm 3 [--cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tilescope.puzzles import catalog, service


def _command(file: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tilescope", "puzzles", "check", "1", str(file), "--json", *extra]


def _timed(command: list[str]) -> tuple[dict, float, float]:
    """The report, when its last line arrived and when the process ended (seconds from launch)."""
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines: list[str] = []
    while not lines or lines[-1] != "}\n":
        line = process.stdout.readline()
        if not line:
            raise SystemExit(f"no report from {' '.join(command)}")
        lines.append(line)
    answered = time.monotonic() - start
    process.wait()
    return json.loads("".join(lines)), answered, time.monotonic() - start


def never(timeout: float, cpu: bool) -> dict:
    file = catalog.get(1).folder / "wrong" / "never_loads.py"
    extra = ["--timeout", f"{timeout:g}", "--no-service", *(["--cpu"] if cpu else [])]
    report, answered, ended = _timed(_command(file, *extra))
    return {
        "timeout_s": timeout,
        "failure": report["failure"],
        "summary": report["summary"],
        "answered_s": round(answered, 2),
        "ended_s": round(ended, 2),
        "within": answered <= timeout,
    }


def warm(runs: int, cpu: bool) -> dict:
    file = catalog.get(1).solution_path
    extra = ["--service", *(["--cpu"] if cpu else [])]
    try:
        first = _timed(_command(file, *extra))
        times = []
        for _ in range(runs):
            report, _, ended = _timed(_command(file, *extra))
            assert report["passed"], report["summary"]
            times.append(ended)
    finally:
        service.stop()
    return {"cold_s": round(first[2], 2), "warm_s": [round(t, 2) for t in times], "median_s": statistics.median(times)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--never", action="store_true")
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        os.environ["TILESCOPE_DATA_DIR"] = data  # the learner's progress is not touched
        result: dict = {"load_average": os.getloadavg()[0]}
        if args.never:
            result["never_loads"] = never(args.timeout, args.cpu)
        if args.warm:
            result["warm_service"] = warm(args.warm, args.cpu)
        result["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
