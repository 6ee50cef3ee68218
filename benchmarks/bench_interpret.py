"""Interpreted elements per second, per construct, and the largest size each runs within 30 s.

Each construct is a small TileLang kernel (element-wise T.Parallel, T.copy through shared
memory, a row reduction, a tiled T.gemm with a pipelined K loop, and the bundled flash-attention
example). Its size doubles until the next run would pass the budget; every figure is a measured
run, none is extrapolated. Interpreter time only (TileLang's front end is timed apart).

    python benchmarks/bench_interpret.py [--budget 30] [--out benchmarks/results/interpret.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PRELUDE = "import tilelang\nimport tilelang.language as T\n\n"
KERNELS = {
    "elementwise": """
def kernel(N, block=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=256) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2 + T.exp(B[bx * block + i])
    return main
""",
    "copy": """
def kernel(N, block=128):
    @T.prim_func
    def main(A: T.Tensor((N, N), "float16"), B: T.Tensor((N, N), "float16")):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(N, block), threads=128) as (bx, by):
            s = T.alloc_shared((block, block), "float16")
            T.copy(A[by * block, bx * block], s)
            T.copy(s, B[by * block, bx * block])
    return main
""",
    "reduce": """
def kernel(N, block_M=8, block_N=1024):
    @T.prim_func
    def main(X: T.Tensor((N, N), "float32"), S: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_M), threads=256) as bx:
            x = T.alloc_fragment((block_M, block_N), "float32")
            part = T.alloc_fragment((block_M,), "float32")
            total = T.alloc_fragment((block_M,), "float32")
            T.clear(total)
            for k in T.serial(T.ceildiv(N, block_N)):
                T.copy(X[bx * block_M, k * block_N], x)
                T.reduce_sum(x, part, dim=1)
                for i in T.Parallel(block_M):
                    total[i] += part[i]
            T.copy(total, S[bx * block_M])
    return main
""",
    "gemm": """
def kernel(N, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((N, N), "float16"), B: T.Tensor((N, N), "float16"), C: T.Tensor((N, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(N, block_M), threads=128) as (bx, by):
            a = T.alloc_shared((block_M, block_K), "float16")
            b = T.alloc_shared((block_K, block_N), "float16")
            c = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(c)
            for k in T.Pipelined(T.ceildiv(N, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], a)
                T.copy(B[k * block_K, bx * block_N], b)
                T.gemm(a, b, c)
            T.copy(c, C[by * block_M, bx * block_N])
    return main
""",
}
GROWTH = {"elementwise": 2, "copy": 4, "reduce": 4, "gemm": 8, "flash_attention": 4}
"""How much longer the next (doubled) size takes: the stop rule never starts a run over budget."""
START = {"elementwise": 1 << 16, "copy": 256, "reduce": 256, "gemm": 256, "flash_attention": 256}
# What "elements" means for each construct: output elements, except gemm and attention (multiply-adds).
WORK: dict[str, Callable[[int], int]] = {
    "elementwise": lambda n: n,
    "copy": lambda n: n * n,
    "reduce": lambda n: n * n,
    "gemm": lambda n: n**3,
    "flash_attention": lambda n: 2 * 8 * n * n * 64,
}


def _build(name: str, size: int, workdir: Path) -> tuple[Any, str]:
    from tilescope.core.interpret import compile_kernel
    from tilescope.core.worker.loader import load_module
    from tilescope.core.worker.prim_func import build_prim_func

    if name == "flash_attention":
        path = str(ROOT / "examples" / "flash_attention.py")
        namespace = load_module(Path(path).read_text(), path)
        from tilescope.core.compiler.discovery import instantiations

        inst = next(i for i in instantiations(Path(path).read_text(), path) if i.kernel.name == "flash_attention")
        inst = replace(inst, args={**inst.args, "batch": 1, "heads": 8, "seq_len": size})
        return compile_kernel(build_prim_func(namespace, inst), path), path
    path = workdir / f"{name}.py"
    path.write_text(PRELUDE + KERNELS[name])
    namespace = load_module(path.read_text(), str(path))
    return compile_kernel(namespace["kernel"](size), str(path)), str(path)


def _tensors(kernel: Any) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    dtypes = {"float16": torch.float16, "float32": torch.float32}
    params = kernel.buffer_params()
    return [torch.randn([int(d) for d in shape], generator=gen).to(dtypes[dt]) for _, shape, dt in params]


def measure(name: str, budget: float, workdir: Path) -> dict[str, Any]:
    rows = []
    size = START[name]
    while True:
        start = time.perf_counter()
        kernel, _ = _build(name, size, workdir)
        front = time.perf_counter() - start
        run = kernel(*_tensors(kernel))
        assert not run.findings, run.describe()
        rows.append(
            {"size": size, "seconds": round(run.seconds, 3), "front_end_s": round(front, 3),
             "elements_per_s": round(WORK[name](size) / run.seconds)}
        )  # fmt: skip
        rate = WORK[name](size) / run.seconds
        print(f"{name:16} N={size:<8} {run.seconds:8.2f} s  {rate:12.3g} elements/s", flush=True)
        if run.seconds * GROWTH[name] > budget:
            break
        size *= 2
    within = [r for r in rows if r["seconds"] <= budget]
    return {"rows": rows, "largest_within_budget": within[-1]["size"] if within else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=30.0)
    parser.add_argument("--only", nargs="*", default=[*KERNELS, "flash_attention"])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": platform.processor() or platform.machine(), "budget_s": args.budget}
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.only:
            results[name] = measure(name, args.budget, Path(workdir))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
