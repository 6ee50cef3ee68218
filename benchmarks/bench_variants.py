"""``tilescope variants`` with parallel workers against lowering the same variants one after another.

The five default targets (sm_80, sm_90, sm_100, gfx942, metal) of ``examples/gemm.py``, through
``run_variants`` with ``-j 1`` and with ``-j N``. Warm: the workers are started before timing and
the file gets a new comment each round, so no cache answers. Cold: one round each including the
workers' start (each imports TileLang). Median of ``--repeat`` warm rounds; the ratio is of medians.

    python benchmarks/bench_variants.py [--repeat 3] [--jobs 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilescope.core.variants import DEFAULT_TARGETS, pool, run_variants  # noqa: E402


def _round(workers, path: Path, source: str, tag: str) -> float:  # type: ignore[no-untyped-def]
    path.write_text(f"{source}\n# round {tag}\n")
    start = time.perf_counter()
    report = run_variants(workers, str(path))
    elapsed = time.perf_counter() - start
    assert [v.status for v in report.variants] == ["fits"] * len(DEFAULT_TARGETS), report
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    options = parser.parse_args()
    source = (ROOT / "examples" / "gemm.py").read_text()
    results: dict[int, tuple[float, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gemm.py"
        for jobs in (1, options.jobs):
            start = time.perf_counter()
            with pool(jobs) as workers:
                _round(workers, path, source, f"cold {jobs}")
                cold = time.perf_counter() - start
                warm = [_round(workers, path, source, f"{jobs} {i}") for i in range(options.repeat)]
            results[jobs] = (cold, warm)
    print(f"{len(DEFAULT_TARGETS)} targets of examples/gemm.py ({', '.join(DEFAULT_TARGETS)})")
    for jobs, (cold, warm) in results.items():
        print(
            f"  -j {jobs}: warm median {statistics.median(warm):.2f} s (rounds {', '.join(f'{w:.2f}' for w in warm)}); "
            f"cold, with worker start {cold:.2f} s"
        )
    one, many = (statistics.median(results[j][1]) for j in (1, options.jobs))
    cold_one, cold_many = results[1][0], results[options.jobs][0]
    print(f"  ratio -j {options.jobs} / -j 1: warm {many / one:.2f}x, cold {cold_many / cold_one:.2f}x (goal <= 0.65x)")


if __name__ == "__main__":
    main()
