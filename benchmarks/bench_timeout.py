"""``--timeout`` as the user's clock: answer time / timeout for a module whose top level never
finishes, through ``tilescope check`` (worker start included), on the machine as it is and with
``--busy`` extra processes spinning on the CPU. Target: at most 1.2 both ways.

    .venv/bin/python benchmarks/bench_timeout.py [--timeout 20] [--busy 2] [--runs 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOREVER = ROOT / "tests" / "core" / "fixtures" / "top_level_forever.py"


def answer_time(timeout: float) -> float:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "tilescope", "check", str(FOREVER), "--timeout", f"{timeout:g}", "--json"],
        cwd=ROOT,
        capture_output=True,
        check=False,
        timeout=timeout * 10,
    )
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes for the loaded case")
    parser.add_argument("--runs", type=int, default=1)
    options = parser.parse_args()
    for label, busy in (("as is", 0), (f"+{options.busy} busy", options.busy)):
        spinners = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL) for _ in range(busy)
        ]
        try:
            times = [answer_time(options.timeout) for _ in range(options.runs)]
            load = os.getloadavg()[0]
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        worst = max(times)
        print(
            f"{label:>10}: answered after {worst:5.1f} s with --timeout {options.timeout:g}: "
            f"{worst / options.timeout:.2f}x (load average {load:.1f} on {os.cpu_count()} cores)"
        )


if __name__ == "__main__":
    main()
