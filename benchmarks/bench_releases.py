"""The compiler tier on each TileLang release environment that ``.ci/releases`` prepared.

For each release: the worker's start in that interpreter (it imports TileLang), then the GEMM's
full analysis, warm, the source changed by a comment each round so no cache answers (median of
``--repeat``), and its pass count; and plain ``tilelang.lower`` of the same GEMM in that
interpreter, for scale (median of as many rounds, after one warm-up).

    python benchmarks/bench_releases.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path

from tilescope.core.compiler.service import Analyzer

ROOT = Path(__file__).resolve().parent.parent
GEMM = ROOT / "examples" / "gemm.py"
PLAIN = """
import sys, time, statistics, importlib.util
spec = importlib.util.spec_from_file_location("gemm", sys.argv[1])
gemm = importlib.util.module_from_spec(spec); spec.loader.exec_module(gemm)
import tilelang, tvm
func = gemm.matmul(1024, 1024, 1024)
target = tvm.target.Target({"kind": "cuda", "arch": "sm_90"})
with target:
    tilelang.lower(func, target=target)
times = []
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    with target:
        tilelang.lower(func, target=target)
    times.append((time.perf_counter() - start) * 1000)
print(statistics.median(times))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--envs", type=Path, default=ROOT / ".venv-releases")
    args = parser.parse_args()
    source = GEMM.read_text()
    print(f"median of {args.repeat} rounds, examples/gemm.py for sm_90")
    print(f"{'release':<9}{'worker start':>14}{'tilescope':>12}{'plain lower':>13}{'passes':>8}")
    for env in sorted(args.envs.iterdir(), key=lambda p: tuple(int(n) for n in p.name.split("."))):
        python = str(env / "bin" / "python")
        with Analyzer(python=python, timeout_s=300) as analyzer:
            start = time.perf_counter()
            analyzer.warm()
            started = time.perf_counter() - start
            times, passes = [], 0
            for i in range(args.repeat + 1):
                begin = time.perf_counter()
                result = analyzer.analyze(str(GEMM), source + f"\n# round {i}\n")
                if i:
                    times.append((time.perf_counter() - begin) * 1000)
                passes = len(result.kernels[0].passes)
        plain = subprocess.run(
            [python, "-c", PLAIN, str(GEMM), str(args.repeat)], capture_output=True, text=True, check=False, cwd="/"
        )
        if plain.returncode:
            raise SystemExit(f"plain lowering failed in {python}: {plain.stderr[-2000:]}")
        print(
            f"{env.name:<9}{started:>12.1f} s{statistics.median(times):>9.0f} ms"
            f"{float(plain.stdout.split()[-1]):>10.0f} ms{passes:>8}"
        )


if __name__ == "__main__":
    main()
