"""The static tier reads every bundled example's buffers, launch and pipelines without running it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.display import shape_text
from tilescope.core.static import analyze_source

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def summary(name: str) -> dict[str, object]:
    static = analyze_source((EXAMPLES / name).read_text(), str(EXAMPLES / name))
    assert static.diagnostics == []
    (kernel,) = static.kernels
    return {
        "kernel": (kernel.ref.name, kernel.ref.style),
        "buffers": {
            d.buffer.name: (shape_text(d.buffer.shape), d.buffer.dtype, d.buffer.scope, d.stages)
            for d in kernel.buffers
        },
        "launch": (kernel.launch.grid, kernel.launch.threads) if kernel.launch else None,
        "stages": [p.num_stages for p in kernel.pipelines],
        "shared": kernel.shared_bytes,
    }


def test_gemm_tiles_and_three_stage_pipeline() -> None:
    found = summary("gemm.py")
    assert found["kernel"] == ("matmul", "factory")
    assert found["buffers"] == {
        "A": ("1024×1024", "float16", "global", 1),
        "B": ("1024×1024", "float16", "global", 1),
        "C": ("1024×1024", "float16", "global", 1),
        "A_shared": ("128×32", "float16", "shared.dyn", 3),
        "B_shared": ("32×128", "float16", "shared.dyn", 3),
        "C_local": ("128×128", "float32", "local.fragment", 1),
    }
    assert found["launch"] == ([8, 8], 128)
    assert found["stages"] == [3]
    assert found["shared"] == 3 * (128 * 32 * 2) * 2


def test_elementwise_add_takes_n_from_the_call_in_main() -> None:
    found = summary("elementwise_add.py")
    assert found["kernel"] == ("elementwise_add", "jit-factory")
    assert found["buffers"] == {name: ("1048576", "float32", "global", 1) for name in "ABC"}
    assert found["launch"] == ([4096], 128)


def test_softmax_takes_sizes_from_argparse_defaults() -> None:
    found = summary("softmax.py")
    assert found["buffers"]["X_shared"] == ("64×256", "float16", "shared.dyn", 1)
    assert found["buffers"]["X_local"] == ("64×256", "float32", "local.fragment", 1)
    assert found["buffers"]["row_max"] == ("64", "float32", "local.fragment", 1)
    assert found["launch"] == ([64], 128)


def test_eager_flash_attention_reads_tensor_annotations_and_outputs() -> None:
    found = summary("flash_attention.py")
    assert found["kernel"] == ("flash_attention", "jit-eager")
    buffers = found["buffers"]
    assert buffers["Q"] == ("1×1024×8×64", "float16", "global", 1)
    assert buffers["Output"] == ("1×1024×8×64", "float16", "global", 1)
    assert buffers["K_shared"] == ("64×64", "float16", "shared.dyn", 2)
    assert buffers["Q_shared"] == ("64×64", "float16", "shared.dyn", 1)
    assert buffers["scores_max"] == ("64", "float32", "local.fragment", 1)
    assert found["launch"] == ([16, 8, 1], 128)


def test_dequant_gemm_packs_int4_in_uint8() -> None:
    found = summary("dequant_gemm.py")
    assert found["buffers"]["B"] == ("1024×512", "uint8", "global", 1)
    assert found["buffers"]["B_packed_shared"] == ("128×32", "uint8", "shared.dyn", 2)
    assert found["stages"] == [2]


def test_unknown_sizes_stay_symbolic() -> None:
    source = (EXAMPLES / "softmax.py").read_text().split('if __name__ == "__main__":')[0]
    (kernel,) = analyze_source(source).kernels
    shapes = {d.buffer.name: shape_text(d.buffer.shape) for d in kernel.buffers}
    assert shapes["X"] == "M×N"
    assert shapes["X_shared"] == "64×N"
    assert kernel.launch is not None and kernel.launch.grid == ["ceildiv(M, 64)"]
    assert kernel.shared_bytes is None
    assert {b.name: b.origin for b in kernel.bindings}["M"] == "unknown"


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_has_exactly_one_kernel_and_no_static_findings(name: str) -> None:
    static = analyze_source((EXAMPLES / name).read_text())
    assert len(static.kernels) == 1
    assert static.diagnostics == []


def test_module_level_prim_func_with_module_constants_and_buffer_annotations() -> None:
    source = """
import tilelang.language as T

N = 4096
BLOCK = 256


@T.prim_func
def scale(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")):
    with T.Kernel(N // BLOCK, threads=BLOCK) as bx:
        tile = T.alloc_local((4,), "float32")
        for i in T.Parallel(BLOCK):
            B[bx * BLOCK + i] = A[bx * BLOCK + i] * 2.0
"""
    (kernel,) = analyze_source(source).kernels
    assert (kernel.ref.name, kernel.ref.style) == ("scale", "prim_func")
    shapes = {d.buffer.name: (shape_text(d.buffer.shape), d.buffer.scope) for d in kernel.buffers}
    assert shapes == {"A": ("4096", "global"), "B": ("4096", "global"), "tile": ("4", "local")}
    assert kernel.launch is not None and (kernel.launch.grid, kernel.launch.threads) == ([16], 256)
    assert [(a.op, a.reads, a.writes) for a in kernel.accesses] == [("parallel", ["A"], ["B"])]


def test_dynamic_dims_stay_named() -> None:
    source = """
import tilelang.language as T


def dyn(block=128):
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M, 64), "bfloat16")):
        with T.Kernel(T.ceildiv(M, block)) as bx:
            s = T.alloc_shared((block, 64), "bfloat16")
            T.copy(X[bx * block, 0], s)

    return main
"""
    (kernel,) = analyze_source(source).kernels
    assert [shape_text(d.buffer.shape) for d in kernel.buffers] == ["M×64", "128×64"]
    assert kernel.launch is not None and kernel.launch.grid == ["ceildiv(M, 128)"]


def test_every_launch_of_a_prim_func_is_read_and_hinted() -> None:
    from tilescope.core.ide.hints import inlay_hints
    from tilescope.core.ide.merge import Facts

    source = (
        "import tilelang.language as T\n\n\n@T.prim_func\n"
        'def two(A: T.Tensor((1024,), "float32"), B: T.Tensor((1024,), "float32")):\n'
        "    with T.Kernel(8, threads=128) as bx:\n"
        '        A_local = T.alloc_fragment((128,), "float32")\n'
        "        T.copy(A[bx * 128], A_local)\n"
        "    with T.Kernel(4) as bx:\n"
        '        B_local = T.alloc_fragment((256,), "float32")\n'
        "        T.copy(B[bx * 256], B_local)\n"
    )
    static = analyze_source(source)
    (kernel,) = static.kernels
    assert [(launch.grid, launch.threads, launch.span.line) for launch in kernel.launches] == [
        ([8], 128, 6),
        ([4], 128, 9),
    ]
    labels = [(h.line, h.label) for h in inlay_hints(Facts(static)) if h.kind == "launch"]
    assert labels == [(6, "grid 8 · 128 threads"), (9, "grid 4 · 128 threads")]
