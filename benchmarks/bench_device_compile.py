"""What compiling the device code (nvcc/ptxas, ``check --ptxas``) adds to ``check`` per kernel.

For every bundled example, each kernel is analysed by one warm worker without and then with the
device compile, ``ROUNDS`` times in turns (the Analyzer's result cache is emptied before each
analysis); printed: per kernel, the median seconds of each and the extra, then the medians over
all kernels and the ratio. ``check`` does not compile device code unless asked: these figures are
why, and its summary says so.

    python benchmarks/bench_device_compile.py [--rounds 3] [--target sm_90]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tilescope.core.compiler.discovery import discover
from tilescope.core.compiler.service import Analyzer
from tilescope.core.worker.ptxas import find_nvcc

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--target", default="sm_90")
    args = parser.parse_args()
    if find_nvcc() is None:
        raise SystemExit("no nvcc here: nothing to measure")
    rows = []
    with Analyzer(timeout_s=300) as analyzer:
        analyzer.warm()
        for path in sorted((ROOT / "examples").glob("*.py")):
            for ref in discover(path.read_text(), str(path)):
                times: dict[bool, list[float]] = {False: [], True: []}
                for _ in range(args.rounds):
                    for ptxas in (False, True):
                        analyzer._cache.clear()
                        start = time.perf_counter()
                        result = analyzer.analyze(str(path), kernel=ref.name, target=args.target, ptxas=ptxas)
                        times[ptxas].append(time.perf_counter() - start)
                model = result.kernel(ref.name)
                if model is None or not model.passes:
                    continue
                lower, full = statistics.median(times[False]), statistics.median(times[True])
                rows.append((f"{path.name}:{ref.name}", lower, full))
                print(
                    f"{path.name}:{ref.name:<28} check {lower:6.2f} s   with device compile {full:6.2f} s   "
                    f"extra {full - lower:6.2f} s",
                    flush=True,
                )
    lower = statistics.median(r[1] for r in rows)
    full = statistics.median(r[2] for r in rows)
    extra = statistics.median(r[2] - r[1] for r in rows)
    print(
        f"{len(rows)} kernels, {args.rounds} rounds, target {args.target}, load {os.getloadavg()[0]:.1f}: median "
        f"check {lower:.2f} s per kernel, with device compile {full:.2f} s (extra {extra:.2f} s, x{full / lower:.1f})"
    )


if __name__ == "__main__":
    main()
