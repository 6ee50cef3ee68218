"""Search for the fastest configuration of each puzzle reference on a CUDA GPU, against torch.

For every candidate (a kernel file, the puzzle's own solution or one under ``tune_candidates/``, with
keyword arguments) at the puzzle's timed shape: compile (in parallel worker processes first, which
fills TileLang's kernel cache), run once on poisoned outputs and compare with the torch reference,
then time with the grader's own method (``puzzles/timing.py``: L2 flushed before each run, median
of 20 CUDA-event timings). The puzzle's torch baseline (``perf.torch``) is timed the same way in the
same process. One JSON row per candidate is appended to ``--out`` as soon as it is known, so a run
cut short still reports what finished.

    python benchmarks/tune_references.py --out tune.jsonl --budget 300       # on a GPU machine
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import itertools
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "tune_candidates"


def _grid(**axes: list[Any]) -> list[dict[str, Any]]:
    return [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]


def candidates() -> list[tuple[str, str, dict[str, Any]]]:
    """(puzzle, file, keyword arguments): the current solution first, then the variants tried."""
    rows: list[tuple[str, str, dict[str, Any]]] = []

    def add(pid: str, name: str, grid: list[dict[str, Any]]) -> None:
        rows.extend((pid, name, kw) for kw in grid)

    for pid in ("16", "13", "06", "07", "08", "09", "02", "03", "04", "10", "11", "12", "14", "15", "05", "01", "17"):
        add(pid, "solution", [{}])
    add("16", "flash.py", _grid(block_M=[128], block_N=[128], num_stages=[1, 2], threads=[128, 256], schedule=[0]))
    add("16", "flash.py", _grid(block_M=[128], block_N=[64, 128], threads=[128, 256], schedule=[1]))
    add("16", "flash.py", _grid(block_M=[64], block_N=[128], num_stages=[2], threads=[128], schedule=[0]))
    add("16", "flash.py", _grid(block_M=[128], block_N=[128], threads=[384], schedule=[0, 1]))
    add("13", "gemm.py", _grid(block_M=[128], block_N=[256], num_stages=[3, 4], threads=[256], panel=[0, 8, 16]))
    add("13", "gemm.py", _grid(block_M=[256], block_N=[128], num_stages=[3, 4], threads=[256, 384], panel=[10]))
    add("13", "gemm.py", _grid(block_M=[128], block_N=[256], block_K=[64], num_stages=[4], threads=[384], panel=[10]))
    add("14", "gemm_epilogue.py", _grid(block_M=[128], block_N=[256], num_stages=[3, 4], threads=[256], panel=[10]))
    add("06", "row_sum_acc.py", _grid(block_M=[1, 2], block_N=[2048, 4096, 8192], threads=[256, 512]))
    add("06", "row_sum_pipe.py", _grid(block_M=[1], block_N=[2048, 4096], threads=[256], num_stages=[2, 3]))
    add(
        "07",
        "softmax3.py",
        [*_grid(block_M=[1, 2], block_N=[1024, 2048, 4096], threads=[256]), {"block_N": 1024, "threads": 128}],
    )
    add("07", "softmax_row.py", _grid(block_M=[1], threads=[128, 256, 512]))
    add("08", "online_lanes.py", _grid(block_M=[1, 2], block_N=[1024, 2048, 4096], threads=[256]))
    add("08", "online_tiles.py", _grid(block_M=[1, 2], block_N=[1024, 2048, 4096], threads=[256]))
    add(
        "09",
        "rms_norm_acc.py",
        [*_grid(block_M=[1, 2], block_N=[1024, 2048, 4096], threads=[256]), {"block_N": 1024, "threads": 128}],
    )
    add("02", "copy.py", [*_grid(block_N=[4096, 8192], threads=[256, 512]), {"block_N": 16384, "threads": 512}])
    add("02", "copy.py", _grid(block_N=[512, 1024], threads=[128, 256]))
    add("03", "vadd.py", _grid(block_N=[512, 1024], threads=[128, 256]))
    add("03", "vadd.py", _grid(block_N=[2048, 4096, 8192], threads=[256, 512]))
    add("04", "outer.py", _grid(block_M=[16, 64], block_N=[512, 1024], threads=[256]))
    add("10", "transpose.py", _grid(block=[32, 64], threads=[128, 256]))
    add(
        "11",
        "gemv_acc.py",
        [
            *_grid(block_M=[1, 2, 4], block_K=[2048, 4096], threads=[256]),
            {"block_M": 1, "block_K": 8192, "threads": 512},
        ],
    )
    add("12", "gemm.py", _grid(block_M=[128], block_N=[128, 256], block_K=[64], threads=[256], pipelined=[0]))
    add("12", "gemm.py", _grid(block_M=[128], block_N=[256], num_stages=[3], threads=[256], panel=[10], pipelined=[1]))
    add("12", "best_unpipelined.py", [{}])
    add("17", "solution", _grid(block_K=[64, 128], num_stages=[2, 4]))
    add("17", "solution", [{"block_M": 128, "block_N": 256}])
    return rows


def _path(pid: str, name: str) -> Path:
    from tilescope.puzzles import catalog

    p = catalog.get(pid)
    if name == "solution":
        return p.solution_path
    return p.folder / name if (p.folder / name).is_file() else HERE / name


def _factory(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"cand_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def _build(pid: str, name: str, kw: dict[str, Any]) -> Any:
    import tilelang
    from tilescope.puzzles import catalog

    func = _factory(_path(pid, name))(**catalog.get(pid).perf.args, **kw)
    return tilelang.compile(func, target="cuda")


def _compile_job(job: tuple[str, str, dict[str, Any]]) -> tuple[float, str | None]:
    start = time.perf_counter()
    try:
        _build(*job)
        return time.perf_counter() - start, None
    except Exception as err:
        return time.perf_counter() - start, f"{type(err).__name__}: {str(err)[-400:]}"


def _inputs(pid: str) -> tuple[list[Any], list[Any]]:
    import torch
    from tilescope.puzzles import catalog

    p = catalog.get(pid)
    ref = p.reference()
    gen = torch.Generator(device="cuda").manual_seed(7)
    inputs = ref.inputs(p.perf.args, gen, "normal", "cuda")
    expected = [e.contiguous() for e in ref.reference(*[t.clone() for t in inputs])]
    return inputs, expected


def _close(got: Any, want: Any, tol: dict[str, float]) -> tuple[bool, float]:
    import torch
    from tilescope.puzzles.verdict import tolerance

    atol, rtol = tolerance(tol, want.dtype)
    diff = (got.double() - want.double()).abs()
    ok = bool(torch.isfinite(got).all()) and bool((diff <= atol + rtol * want.double().abs()).all())
    return ok, float(diff.max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=14)
    parser.add_argument("--budget", type=float, default=300.0, help="seconds for the whole search")
    parser.add_argument("--only", default="", help="comma-separated puzzle numbers")
    parser.add_argument("--files", default="", help="comma-separated candidate files (`solution` for the reference)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    jobs = [c for c in candidates() if not args.only or c[0] in args.only.split(",")]
    jobs = [c for c in jobs if not args.files or c[1] in args.files.split(",")]
    out = args.out.open("a")

    def emit(row: dict[str, Any]) -> None:
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(json.dumps(row), flush=True)

    compile_errors: dict[int, str] = {}
    ctx = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=args.jobs, mp_context=ctx) as pool:
        futures = {pool.submit(_compile_job, job): i for i, job in enumerate(jobs)}
        try:
            for fut in cf.as_completed(futures, timeout=args.budget * 0.4):
                _, err = fut.result()
                if err:
                    compile_errors[futures[fut]] = err
        except cf.TimeoutError:
            emit({"note": "compile phase cut at its share of the budget"})
            for fut in futures:
                fut.cancel()
    emit({"note": "compiled", "seconds": round(time.perf_counter() - start, 1), "errors": len(compile_errors)})

    import torch
    from tilescope.puzzles import catalog
    from tilescope.puzzles.timing import measured_bandwidth, time_cuda_runs, time_torch_runs

    emit({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "copy_Bps": measured_bandwidth()})
    current = None
    for i, (pid, name, kw) in enumerate(jobs):
        if time.perf_counter() - start > args.budget:
            emit({"note": f"budget spent: {len(jobs) - i} candidates not timed"})
            break
        p = catalog.get(pid)
        if pid != current:
            current = pid
            inputs, expected = _inputs(pid)
            outputs = [torch.empty_like(e) for e in expected]
            if p.perf.torch:
                times = time_torch_runs(p.perf.torch, [*inputs, *outputs])
                emit({"puzzle": pid, "torch": p.perf.torch, "us": statistics.median(times)})
        row: dict[str, Any] = {"puzzle": pid, "file": name, "kw": kw}
        if i in compile_errors:
            emit({**row, "error": compile_errors[i]})
            continue
        try:
            kernel = _build(pid, name, kw)
            for o in outputs:
                o.fill_(float("nan") if o.dtype.is_floating_point else 0)
            kernel(*inputs, *outputs)
            torch.cuda.synchronize()
            checks = [_close(o, e, p.tolerance) for o, e in zip(outputs, expected, strict=True)]
            times = time_cuda_runs(lambda k=kernel, a=[*inputs, *outputs]: k(*a))
            ok = all(c[0] for c in checks)
            row.update(ok=ok, max_err=max(c[1] for c in checks), us=statistics.median(times))
        except Exception as err:
            row["error"] = f"{type(err).__name__}: {str(err)[-400:]}"
        emit(row)
    emit({"note": "done", "seconds": round(time.perf_counter() - start, 1)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
