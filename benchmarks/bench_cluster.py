"""``tilescope check DIR --ray`` against ``-j 1`` and ``-j 2`` on one machine: the same report, and what Ray costs.

Runs ``tilescope check`` three times over the same folder (default: the shared corpus of TileLang's
examples): with one local worker, with two, and with two slots of a new local Ray cluster. Prints each
wall time, the ratio of ``--ray -j 2`` to ``-j 2``, and whether each report is the one ``-j 1`` printed
(stdout, byte for byte). Time budgets are switched off (``--no-dry-run``, ``--hazard-budget 0``): what
a budget cuts short depends on the machine's load, not on where a file was analysed; for the same reason
each kernel may take 600 s (``--timeout``), and each report is kept under ``--keep`` for a diff.

    nice -n 10 .venv/bin/python benchmarks/bench_cluster.py [--folder DIR] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "tilelang-examples"


def check(folder: Path, *extra: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    command = [sys.executable, "-m", "tilescope", "check", str(folder), "--no-dry-run", "--hazard-budget", "0"]
    command += ["--timeout", "600"]
    started = time.perf_counter()
    done = subprocess.run([*command, *extra], cwd=folder, capture_output=True, text=True, timeout=7200)
    return time.perf_counter() - started, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=Path(os.environ.get("TILESCOPE_CORPUS", CORPUS)))
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--keep", type=Path, help="write each run's report and stderr to this folder")
    args = parser.parse_args()
    folder = args.folder.resolve()
    runs = {
        name: check(folder, *extra)
        for name, extra in (("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"]), ("--ray -j 2", ["--ray", "-j", "2"]))
    }
    reference = runs["-j 1"][1]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for name, (_, done) in runs.items():
            stem = name.replace(" ", "").replace("-", "")
            (args.keep / f"{stem}.out").write_text(done.stdout)
            (args.keep / f"{stem}.err").write_text(done.stderr)
    figures: dict[str, object] = {"folder": str(folder), "load_average": os.getloadavg()}
    for name, (seconds, done) in runs.items():
        same = done.stdout == reference.stdout and done.returncode == reference.returncode
        summary = (done.stdout.strip().splitlines() or [""])[-1]
        print(f"check {name:<11} {seconds:8.1f} s  exit {done.returncode}  same report as -j 1: {same}  ({summary})")
        lost = [line for line in done.stderr.splitlines() if "was lost" in line]
        figures[name] = {"seconds": round(seconds, 1), "exit": done.returncode, "same_as_j1": same, "lost": lost}
    ratio = runs["--ray -j 2"][0] / runs["-j 2"][0]
    figures["ray_over_j2"] = round(ratio, 3)
    print(f"--ray -j 2 / -j 2 wall time: {ratio:.2f}x  (load average at the end {os.getloadavg()[0]:.1f})")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
