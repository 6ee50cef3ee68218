"""``tilescope variants`` with parallel workers against lowering the same variants one after another.

The five default targets (sm_80, sm_90, sm_100, gfx942, metal) of ``examples/gemm.py``, through
``run_variants`` with ``-j 1`` and with ``-j N``. Warm: the workers are started before timing and
the file gets a new comment each round, so no cache answers. The first round of each includes the
workers' start (each imports TileLang). Warm rounds alternate between the two so both see the same
load from other work on the machine; medians of ``--repeat`` rounds, the ratio is of medians.

    python benchmarks/bench_variants.py [--repeat 5] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilescope.core.compiler.variants import DEFAULT_TARGETS, pool, run_variants  # noqa: E402


def _round(workers, path: Path, source: str, tag: str) -> float:  # type: ignore[no-untyped-def]
    path.write_text(f"{source}\n# round {tag}\n")
    start = time.perf_counter()
    report = run_variants(workers, str(path))
    elapsed = time.perf_counter() - start
    assert [v.status for v in report.variants] == ["fits"] * len(DEFAULT_TARGETS), report
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args()
    source = (ROOT / "examples" / "gemm.py").read_text()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        path = Path(tmp) / "gemm.py"
        cold: dict[int, float] = {}
        pools = {}
        for jobs in (1, options.jobs):
            start = time.perf_counter()
            pools[jobs] = stack.enter_context(pool(jobs))
            pools[jobs].warm()
            _round(pools[jobs], path, source, f"cold {jobs}")
            cold[jobs] = time.perf_counter() - start
        warm: dict[int, list[float]] = {1: [], options.jobs: []}
        for i in range(options.repeat):  # interleaved, so both see the same load from other work
            for jobs in (1, options.jobs):
                warm[jobs].append(_round(pools[jobs], path, source, f"{jobs} {i}"))
    print(
        f"{len(DEFAULT_TARGETS)} targets of examples/gemm.py ({', '.join(DEFAULT_TARGETS)}); "
        f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores"
    )
    for jobs, rounds in warm.items():
        print(
            f"  -j {jobs}: warm median {statistics.median(rounds):.2f} s "
            f"(rounds {', '.join(f'{w:.2f}' for w in rounds)}); "
            f"first round with worker start {cold[jobs]:.2f} s"
        )
    one, many = (statistics.median(warm[j]) for j in (1, options.jobs))
    print(
        f"  ratio -j {options.jobs} / -j 1: warm {many / one:.2f}x, "
        f"with worker start {cold[options.jobs] / cold[1]:.2f}x (goal <= 0.65x)"
    )


if __name__ == "__main__":
    main()
