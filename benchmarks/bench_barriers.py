"""The cost of the hazard check, barrier check included, on ``examples/gemm.py``: ``tilescope check`` with the
default hazard budget against ``--hazard-budget 0`` (no hazard check), median of a few runs each (target:
within 1.1x), and the barrier check of the final IR alone, timed in this process.

    python benchmarks/bench_barriers.py [--runs 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "examples" / "gemm.py"


def _cli_seconds(extra: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "tilescope", "check", str(GEMM), *extra], capture_output=True, check=False)
    return time.perf_counter() - start


def _barrier_check_seconds() -> float:
    """The barrier check alone on each kernel of the file, lowered for sm_90 here (TileLang's import not counted)."""
    import importlib.util

    from tilescope.core.interpret.hazards import barriers
    from tilescope.core.worker import lowering

    spec = importlib.util.spec_from_file_location("gemm", GEMM)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lowered = lowering.lower(module.matmul(1024, 1024, 1024), "sm_90")
    names = [p.name for p in lowered.passes]
    start = time.perf_counter()
    barriers.check(lowered.modules, names, str(GEMM), "matmul")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    _cli_seconds([])  # a first run warms TileLang's caches, which would otherwise count against one side
    pairs = [(_cli_seconds(["--hazard-budget", "0"]), _cli_seconds([])) for _ in range(args.runs)]
    off = statistics.median(p[0] for p in pairs)
    on = statistics.median(p[1] for p in pairs)
    alone = _barrier_check_seconds()
    result = {
        "check_s": round(on, 3),
        "no_hazards_s": round(off, 3),
        "ratio": round(on / off, 3),
        "barrier_check_s": round(alone, 4),
    }
    print(
        f"examples/gemm.py: check {on:.2f} s, --hazard-budget 0 {off:.2f} s ({on / off:.2f}x, target 1.1x); "
        f"barrier check alone {alone * 1000:.1f} ms"
    )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
