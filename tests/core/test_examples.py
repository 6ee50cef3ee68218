"""The model of every bundled example: exact buffers, launch and fragment layouts, cross-checked
against the lowered IR that TileLang produces when it is run directly in this process."""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import KernelModel

from tests.conftest import EXAMPLES

F16, F32, U8 = "float16", "float32", "uint8"
GLOBAL, SHARED, FRAGMENT = "global", "shared.dyn", "local.fragment"


@dataclass(frozen=True)
class Expected:
    file: str
    kernel: str
    buffers: dict[str, tuple[list[int], str, str]]
    grid: list[int]
    threads: int
    stages: list[int]
    build: Any  # builds the same PrimFunc from the imported module, independently of the core


EXPECTED = [
    Expected(
        "gemm.py",
        "matmul",
        {
            "A": ([1024, 1024], F16, GLOBAL),
            "B": ([1024, 1024], F16, GLOBAL),
            "C": ([1024, 1024], F16, GLOBAL),
            "A_shared": ([128, 32], F16, SHARED),
            "B_shared": ([32, 128], F16, SHARED),
            "C_local": ([128, 128], F32, FRAGMENT),
        },
        grid=[8, 8],
        threads=128,
        stages=[3],
        build=lambda m: m.matmul(1024, 1024, 1024),
    ),
    Expected(
        "elementwise_add.py",
        "elementwise_add",
        {name: ([1 << 20], F32, GLOBAL) for name in "ABC"},
        grid=[4096],
        threads=128,
        stages=[],
        build=lambda m: m.elementwise_add.get_tir(1 << 20),
    ),
    Expected(
        "softmax.py",
        "softmax",
        {
            "X": ([4096, 256], F16, GLOBAL),
            "Y": ([4096, 256], F16, GLOBAL),
            "X_shared": ([64, 256], F16, SHARED),
            "X_local": ([64, 256], F32, FRAGMENT),
            "row_max": ([64], F32, FRAGMENT),
            "row_sum": ([64], F32, FRAGMENT),
        },
        grid=[64],
        threads=128,
        stages=[],
        build=lambda m: m.softmax(4096, 256),
    ),
    Expected(
        "flash_attention.py",
        "flash_attention",
        {
            **{name: ([1, 1024, 8, 64], F16, GLOBAL) for name in ("Q", "K", "V", "Output")},
            **{name: ([64, 64], F16, SHARED) for name in ("Q_shared", "K_shared", "V_shared")},
            "acc_s": ([64, 64], F32, FRAGMENT),
            "acc_s_cast": ([64, 64], F16, FRAGMENT),
            "acc_o": ([64, 64], F32, FRAGMENT),
            **{
                name: ([64], F32, FRAGMENT)
                for name in ("scores_max", "scores_max_prev", "scores_scale", "scores_sum", "logsum")
            },
        },
        grid=[16, 8, 1],
        threads=128,
        stages=[2],
        build=lambda m: m.flash_attention.get_tir(batch=1, heads=8, seq_len=1024, dim=64),
    ),
    Expected(
        "dequant_gemm.py",
        "dequant_gemm",
        {
            "A": ([1024, 1024], F16, GLOBAL),
            "B": ([1024, 512], U8, GLOBAL),
            "Scale": ([1024, 8], F16, GLOBAL),
            "C": ([1024, 1024], F16, GLOBAL),
            "A_shared": ([128, 64], F16, SHARED),
            "B_packed_shared": ([128, 32], U8, SHARED),
            "B_packed_local": ([128, 32], U8, FRAGMENT),
            "B_local": ([128, 64], F16, FRAGMENT),
            "B_shared": ([128, 64], F16, SHARED),
            "C_local": ([128, 128], F32, FRAGMENT),
        },
        grid=[8, 8],
        threads=128,
        stages=[2],
        build=lambda m: m.dequant_gemm(1024, 1024, 1024),
    ),
]


@dataclass(frozen=True)
class Lowered:
    """What TileLang's lowered device IR says, read here without the core."""

    thread_extent: dict[str, int]
    dyn_shared: int
    local_sizes: dict[str, int]


def _import_example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"example_{Path(name).stem}", EXAMPLES / name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def lowered_ir() -> dict[str, Lowered]:
    import tilelang
    import tvm
    from tvm import tirx

    results = {}
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90"})
    for case in EXPECTED:
        with target:
            artifact = tilelang.lower(case.build(_import_example(case.file)), target=target)
        (kernel,) = [f for f in artifact.device_mod.functions.values() if "thread_extent" in (f.attrs or {})]
        local_sizes: dict[str, int] = {}

        def visit(node: Any, local_sizes: dict[str, int] = local_sizes) -> None:
            if isinstance(node, tirx.AllocBuffer) and node.buffer.scope() == "local":
                local_sizes[str(node.buffer.name)] = math.prod(int(d) for d in node.buffer.shape)

        tirx.stmt_functor.post_order_visit(kernel.body, visit)
        attrs = kernel.attrs
        results[case.file] = Lowered(
            thread_extent={str(k): int(v) for k, v in attrs["thread_extent"].items()},
            dyn_shared=int(attrs["dyn_shared_memory_buf"]) if "dyn_shared_memory_buf" in attrs else 0,
            local_sizes=local_sizes,
        )
    return results


@pytest.fixture(scope="module")
def models(analyzer: Analyzer) -> dict[str, KernelModel]:
    found = {}
    for case in EXPECTED:
        result = analyzer.analyze(str(EXAMPLES / case.file))
        assert result.ok, result.all_diagnostics()
        model = result.kernel(case.kernel)
        assert model is not None
        found[case.file] = model
    return found


@pytest.mark.parametrize("case", EXPECTED, ids=lambda c: c.file)
def test_buffers_are_exact(case: Expected, models: dict[str, KernelModel]) -> None:
    model = models[case.file]
    got = {b.name: (b.shape, b.dtype, b.scope) for b in model.buffers}
    assert got == case.buffers
    for buffer in model.buffers:
        bits = {"float16": 16, "float32": 32, "uint8": 8}[buffer.dtype]
        assert buffer.bytes == math.prod(buffer.shape) * bits // 8
        assert buffer.line is not None and buffer.line > 1


@pytest.mark.parametrize("case", EXPECTED, ids=lambda c: c.file)
def test_launch_matches_lowered_ir(
    case: Expected, models: dict[str, KernelModel], lowered_ir: dict[str, Lowered]
) -> None:
    model, ir = models[case.file], lowered_ir[case.file]
    assert model.launch is not None
    assert model.launch.grid == case.grid
    assert model.launch.threads == case.threads
    ir_grid = [ir.thread_extent.get(f"blockIdx.{a}", 1) for a in "xyz"][: len(case.grid)]
    assert ir_grid == model.launch.grid
    ir_threads = math.prod(v for k, v in ir.thread_extent.items() if k.startswith("threadIdx"))
    assert model.launch.threads_after_ws == ir_threads
    assert model.warp_specialized == (ir_threads > case.threads)
    assert model.shared_bytes >= ir.dyn_shared
    assert [p.num_stages for p in model.pipelines] == case.stages


@pytest.mark.parametrize("case", EXPECTED, ids=lambda c: c.file)
def test_every_fragment_has_a_layout_consistent_with_lowered_registers(
    case: Expected, models: dict[str, KernelModel], lowered_ir: dict[str, Lowered]
) -> None:
    model, ir = models[case.file], lowered_ir[case.file]
    fragments = [name for name, (_, _, scope) in case.buffers.items() if scope == FRAGMENT]
    for name in fragments:
        layout = model.layout(name)
        assert layout is not None and layout.kind == "fragment", name
        shape = case.buffers[name][0]
        assert layout.input_shape == shape
        assert layout.thread_extent == case.threads
        assert layout.replicate is not None and layout.replicate >= 1
        # Every element lives in `replicate` threads; the threads share the copies evenly.
        assert layout.elements_per_thread * layout.thread_extent == math.prod(shape) * layout.replicate
        # After LowerTileOp the fragment is a per-thread register array of exactly that size.
        assert ir.local_sizes[name] == layout.elements_per_thread, name


def test_gemm_accumulator_fragment(models: dict[str, KernelModel]) -> None:
    layout = models["gemm.py"].layout("C_local")
    assert layout is not None
    assert (layout.thread_extent, layout.replicate, layout.elements_per_thread) == (128, 1, 128)
    assert layout.thread == "_i % 64 // 16 * 32 + _i % 8 * 4 + _j % 8 // 2"
    assert layout.input_vars == ["_i", "_j"]
    # Warp specialisation puts the producer warps first: the accumulator lives in threads 128-255.
    assert layout.thread_begin == 128


def test_shared_layouts_carry_the_pipeline_stages(models: dict[str, KernelModel]) -> None:
    layout = models["gemm.py"].layout("A_shared")
    assert layout is not None and layout.kind == "layout"
    assert layout.input_shape == [3, 128, 32]
    # 32 fp16 columns are 64-byte rows: TileLang's half-bank swizzle; B's 256-byte rows get the full one.
    assert layout.swizzle == "64B swizzle"
    assert models["gemm.py"].layout("B_shared").swizzle == "128B swizzle"
    assert models["dequant_gemm.py"].layout("B_packed_shared").swizzle == "none"


def test_tile_operations_name_what_they_read_and_write(models: dict[str, KernelModel]) -> None:
    ops = [(a.op, a.reads, a.writes, a.pipelined) for a in models["gemm.py"].accesses]
    assert ops == [
        ("fill", [], ["C_local"], False),
        ("copy", ["A"], ["A_shared"], True),
        ("copy", ["B"], ["B_shared"], True),
        ("gemm", ["A_shared", "B_shared", "C_local"], ["C_local"], True),
        ("copy", ["C_local"], ["C"], False),
    ]
