"""Cross-check the tile interpreter against the GPU: every puzzle reference (every case) and every
bundled example, with the same inputs, interpreted on the CPU and compiled and run on CUDA.

Each job builds the kernel, runs it on the GPU through ``tilelang.compile``, interprets it with
``tilescope.core.interpret``, and compares the two within the dtype's tolerance (the puzzle's
own where it sets one); the torch reference is checked too. Jobs run in parallel processes and
each result is written as soon as it is known, so a cut-short run still reports what finished.

    python benchmarks/crosscheck_interpret.py --out results.json     # on a CUDA machine
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import time
import traceback
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _jobs() -> list[dict[str, Any]]:
    from tilescope.puzzles.catalog import puzzles

    jobs: list[dict[str, Any]] = [{"example": str(path)} for path in sorted((ROOT / "examples").glob("*.py"))]
    for p in reversed(puzzles()):  # the later puzzles take longest: start them first
        for index, case in enumerate(p.cases):
            jobs.append({"puzzle": p.folder.name, "case": case.name, "index": index})
    return jobs


DEVICE = "cuda"


def _gpu_compile(prim_func: Any, path: str) -> Any:
    """``tilelang.compile`` for CUDA; with ``--dry`` (no GPU) the interpreter stands in, which tests
    this script and nothing else."""
    if DEVICE == "cuda":
        import tilelang

        return tilelang.compile(prim_func, target="cuda")
    from tilescope.core.interpret import compile_kernel

    kernel = compile_kernel(prim_func, path)
    return lambda *tensors: kernel(*tensors)


def _compare(name: str, interp: Any, gpu: Any, atol: float, rtol: float) -> dict[str, Any]:
    from tilescope.puzzles.compare import compare

    c = compare(gpu.cpu(), interp, atol, rtol)
    return {"output": name, "ok": c.ok, "wrong": c.wrong, "total": c.total, "max_abs": c.max_abs_error,
            "atol": atol, "rtol": rtol}  # fmt: skip


def _puzzle_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    from tilescope.core.interpret import compile_kernel
    from tilescope.puzzles import runner
    from tilescope.puzzles.catalog import get
    from tilescope.puzzles.compare import default_tolerance

    p = get(job["puzzle"].split("_", 1)[0])
    case = p.cases[job["index"]]
    path = str(p.solution_path)
    prim_func = runner.build(path, Path(path).read_text(), case.args)
    ref = p.reference()
    inputs = ref.inputs(case.args, torch.Generator().manual_seed(job["index"]), case.values, "cpu")
    expected = list(ref.reference(*[t.clone() for t in inputs]))
    start = time.perf_counter()
    gpu_kernel = _gpu_compile(prim_func, path)
    compile_s = time.perf_counter() - start
    gpu_out = [torch.zeros_like(e, device=DEVICE) for e in expected]
    gpu_kernel(*[t.to(DEVICE) for t in inputs], *gpu_out)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    cpu_out = [torch.full_like(e, float("nan")) if e.is_floating_point() else torch.zeros_like(e) for e in expected]
    run = compile_kernel(prim_func, path)(*inputs, *cpu_out, outputs=set(p.outputs))
    rows = []
    for name, e, c, g in zip(p.outputs, expected, cpu_out, gpu_out, strict=True):
        atol, rtol = default_tolerance(e.dtype)
        atol, rtol = p.tolerance.get("atol", atol), p.tolerance.get("rtol", rtol)
        row = _compare(name, c, g, atol, rtol)
        row["gpu_vs_reference_ok"] = _compare(name, g.cpu(), e, atol, rtol)["ok"]
        row["interpreter_vs_reference_ok"] = _compare(name, c, e, atol, rtol)["ok"]
        rows.append(row)
    return {**job, "args": case.args, "outputs": rows, "findings": [f.describe() for f in run.findings],
            "interpret_s": round(run.seconds, 3), "gpu_compile_s": round(compile_s, 2)}  # fmt: skip


def _example_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch
    from tilescope.core.compiler.discovery import instantiations
    from tilescope.core.interpret import compile_kernel
    from tilescope.core.interpret.launch import TORCH_DTYPES, random_tensor
    from tilescope.core.worker.loader import load_module
    from tilescope.core.worker.prim_func import build_prim_func
    from tilescope.puzzles.compare import default_tolerance

    path = job["example"]
    source = Path(path).read_text()
    inst = instantiations(source, path)[0]
    prim_func = build_prim_func(load_module(source, path), replace(inst))
    kernel = compile_kernel(prim_func, path)
    params = kernel.buffer_params()
    gen = torch.Generator().manual_seed(0)
    tensors = [
        torch.zeros([int(d) for d in s], dtype=TORCH_DTYPES[dt]) if n in kernel.writes else
        random_tensor([int(d) for d in s], dt, gen) for n, s, dt in params
    ]  # fmt: skip
    start = time.perf_counter()
    gpu_kernel = _gpu_compile(prim_func, path)
    compile_s = time.perf_counter() - start
    gpu = [t.to(DEVICE).clone() for t in tensors]
    attrs = prim_func.attrs
    out_idx = list(attrs["tilelang_out_idx"]) if DEVICE == "cuda" and attrs and "tilelang_out_idx" in attrs else []
    if out_idx:  # T.empty outputs: the compiled kernel takes the inputs and returns the outputs
        outs = [int(i) % len(gpu) for i in out_idx]
        returned = gpu_kernel(*[t for i, t in enumerate(gpu) if i not in outs])
        for i, t in zip(outs, [returned] if len(outs) == 1 else returned, strict=True):
            gpu[i] = t
    else:
        gpu_kernel(*gpu)
    if DEVICE == "cuda":
        torch.cuda.synchronize()
    run = kernel(*tensors, outputs={n for n, _, _ in params if n in kernel.writes})
    rows = []
    for (name, _, _), c, g in zip(params, tensors, gpu, strict=True):
        if name in kernel.writes:
            atol, rtol = default_tolerance(c.dtype)
            rows.append(_compare(name, c, g, atol, rtol))
    return {**job, "kernel": inst.kernel.name, "args": inst.args, "outputs": rows,
            "findings": [f.describe() for f in run.findings], "interpret_s": round(run.seconds, 3),
            "gpu_compile_s": round(compile_s, 2)}  # fmt: skip


def run_job(job: dict[str, Any], device: str = "cuda") -> dict[str, Any]:
    global DEVICE
    DEVICE = device
    try:
        return _puzzle_job(job) if "puzzle" in job else _example_job(job)
    except Exception as err:
        return {**job, "error": f"{type(err).__name__}: {err}", "trace": traceback.format_exc()[-2000:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--dry", action="store_true", help="no GPU: test this script with the interpreter twice")
    parser.add_argument("--only", nargs="*", help="puzzle folders or example file names to check")
    args = parser.parse_args()
    import functools

    import torch

    device = "cpu" if args.dry else "cuda"
    jobs = [j for j in _jobs() if not args.only or Path(j.get("puzzle", j.get("example", ""))).name in args.only]
    results: dict[str, Any] = {"device": "dry run" if args.dry else torch.cuda.get_device_name(), "jobs": []}
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(args.workers, mp_context=context) as pool:
        futures = [pool.submit(functools.partial(run_job, device=device), job) for job in jobs]
        for future in cf.as_completed(futures):
            result = future.result()
            results["jobs"].append(result)
            results["seconds"] = round(time.perf_counter() - start, 1)
            args.out.write_text(json.dumps(results, indent=1) + "\n")
            ok = "error" not in result and all(r["ok"] for r in result["outputs"])
            label = result.get("puzzle", result.get("example", "")).split("/")[-1]
            print(f"{'ok ' if ok else 'BAD'} {label} {result.get('case', '')} {result.get('error', '')}", flush=True)
    agree = sum("error" not in r and all(o["ok"] for o in r["outputs"]) for r in results["jobs"])
    print(f"interpreter equals GPU on {agree}/{len(results['jobs'])} runs in {results['seconds']} s")


if __name__ == "__main__":
    main()
