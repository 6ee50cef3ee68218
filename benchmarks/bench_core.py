"""Analysis cost against plain TileLang, for every bundled example.

For each example, in this (warm) process: ``lower``, plain ``tilelang.lower`` of a prebuilt
PrimFunc; ``from source``, what plain TileLang spends to get there from the file (execute the
module, build the PrimFunc, lower), which is the work an analysis of source cannot skip. Then
Tilescope's model (buffers, launch, layouts, pass list) through the warm worker, the source changed
by a comment each round so no cache answers; the same with the hazard check the analysis runs by
default (an editor shows the model before it ends); every pass's IR printed on demand, in one request;
and, for reference, TileLang's own Lower Trace (HTML report) around the plain lowering. Median and p95
of ``--repeat`` rounds; ratios are of medians.

    python benchmarks/bench_core.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilescope.core.compiler.service import HAZARD_BUDGET_S, Analyzer  # noqa: E402

EXAMPLES: list[tuple[str, Callable[[Any], Any]]] = [
    ("gemm.py", lambda m: m.matmul(1024, 1024, 1024)),
    ("elementwise_add.py", lambda m: m.elementwise_add.get_tir(1 << 20)),
    ("softmax.py", lambda m: m.softmax(4096, 256)),
    ("flash_attention.py", lambda m: m.flash_attention.get_tir(batch=1, heads=8, seq_len=1024, dim=64)),
    ("dequant_gemm.py", lambda m: m.dequant_gemm(1024, 1024, 1024)),
]


def _import(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(Path(name).stem, ROOT / "examples" / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def _time(fn: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import tilelang
    import tvm
    from tilelang.tools import lower_trace

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90"})

    def plain(func: Any) -> None:
        with target:
            tilelang.lower(func, target=target)

    def traced(func: Any, out: str) -> None:
        lower_trace.enable(mode="html", trace_dir=out)
        try:
            plain(func)
        finally:
            lower_trace.disable()
            lower_trace.reset()

    header = (
        f"{'example':<20} {'lower':>14} {'from source':>14} {'model':>14} {'/lower':>7} {'/source':>8} "
        f"{'+ hazards':>14} {'all IR':>14} {'Lower Trace':>14} {'/lower':>7} {'passes':>6}"
    )
    print(f"median / p95 in ms over {args.repeat} rounds, warm")
    print(header)
    print("-" * len(header))
    with Analyzer(timeout_s=300) as analyzer, tempfile.TemporaryDirectory() as tmp:
        analyzer.warm()
        for name, build in EXAMPLES:
            path = ROOT / "examples" / name
            source = path.read_text()
            func = build(_import(name))
            plain(func)  # first lowering in a process pays one-off set-up
            lower = _stats(_time(lambda func=func: plain(func), args.repeat))
            source_total = _stats(_time(lambda name=name, build=build: plain(build(_import(name))), args.repeat))

            rounds = iter(range(10**6))

            def analyse(path: Path = path, source: str = source, rounds: Any = rounds, hazards_s: float = 0.0) -> None:
                result = analyzer.analyze(str(path), f"{source}\n# round {next(rounds)}\n", hazards_s=hazards_s)
                assert result.ok, result.all_diagnostics()

            analyse()
            ours = _stats(_time(analyse, args.repeat))
            checked = _stats(_time(lambda analyse=analyse: analyse(hazards_s=HAZARD_BUDGET_S), args.repeat))
            model = analyzer.analyze(str(path)).kernels[0]
            passes = len(model.passes)

            def print_all(
                path: Path = path,
                source: str = source,
                rounds: Any = rounds,
                kernel: str = model.kernel,
                passes: int = passes,
            ) -> None:
                changed = f"{source}\n# round {next(rounds)}\n"  # the worker keeps answers to a request it saw
                analyzer.pass_irs(str(path), changed, kernel=kernel, indices=range(-1, passes))

            print_all()
            everything = _stats(_time(print_all, args.repeat))
            try:
                trace = _stats(_time(lambda func=func: traced(func, tmp), args.repeat))
                trace_text = f"{trace[0]:>6.0f} / {trace[1]:>5.0f}"
                trace_ratio = f"{trace[0] / lower[0]:>6.2f}x"
            except Exception as err:  # reference only: report, don't fail the benchmark
                trace_text, trace_ratio = f"n/a ({type(err).__name__})", ""
            print(
                f"{name:<20} {lower[0]:>6.0f} / {lower[1]:>5.0f} {source_total[0]:>6.0f} / {source_total[1]:>5.0f} "
                f"{ours[0]:>6.0f} / {ours[1]:>5.0f} {ours[0] / lower[0]:>6.2f}x {ours[0] / source_total[0]:>7.2f}x "
                f"{checked[0]:>6.0f} / {checked[1]:>5.0f} {everything[0]:>6.0f} / {everything[1]:>5.0f} "
                f"{trace_text:>14} {trace_ratio:>7} {passes:>6}"
            )


if __name__ == "__main__":
    main()
