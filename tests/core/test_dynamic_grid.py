"""A grid that depends on a dynamic size: the launch says its expression, as the final kernel is launched.

The extent is ``-1`` in ``Launch.grid`` (not a number); ``grid_exprs`` holds every extent as TileLang's
own device kernel is launched with it (what ``check`` shows; ``benchmarks/bench_corpus_compiler.py`` sets
it against plain lowering's on TileLang's examples).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer

pytest.importorskip("tilelang")

KERNEL = """
import tilelang
import tilelang.language as T


@tilelang.jit
def rows(x, block=32):
    M = T.dynamic("M")
    N = T.const("N")
    x: T.Tensor[(M, N), T.float32]
    y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block), T.ceildiv(N, 128), threads=128) as (bx, by):
        for i, j in T.Parallel(block, 128):
            y[bx * block + i, by * 128 + j] = x[bx * block + i, by * 128 + j] * 2
    return y


# tilescope: N=1024
"""


def test_a_dynamic_extent_is_shown_as_the_kernel_is_launched(tmp_path: Path) -> None:
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    with Analyzer(timeout_s=300) as analyzer:
        result = analyzer.analyze(str(path), args={"N": 1024})
    (kernel,) = result.kernels
    assert kernel.launch is not None, result.all_diagnostics()
    assert kernel.launch.grid == [-1, 8]
    assert kernel.launch.grid_exprs == ["(M + 31) // 32", "8"]
    assert kernel.launch.grid_dims() == ["(M + 31) // 32", 8]
