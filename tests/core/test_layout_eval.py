"""layout_eval on the core's layout records, against the compiler's own objects and hand-derived mappings.

The records come from ``Analyzer.analyze`` (the contract every consumer uses); the compiler's
``map_forward_thread`` / ``map_forward_index`` are called in this process on the same kernel.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest
from tilescope.core.layout_eval import (
    LayoutExprError,
    evaluate,
    fragment_map,
    is_bijective,
    shared_map,
)
from tilescope.core.model import Layout

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiler_layouts(prim_func, arch: str) -> dict[str, object]:
    """The compiler's own Layout/Fragment objects, read right after tl.LayoutInference."""
    import tilelang
    from tilelang import tvm
    from tvm.tirx.stmt_functor import post_order_visit

    found: dict[str, object] = {}

    @tvm.instrument.pass_instrument
    class Capture:
        def run_after_pass(self, mod, info):
            if info.name != "tl.LayoutInference":
                return

            def visit(node):
                if isinstance(node, tvm.tirx.SBlock) and "layout_map" in node.annotations:
                    for buf, obj in node.annotations["layout_map"].items():
                        found.setdefault(buf.name, obj)

            for _, func in mod.functions.items():
                post_order_visit(func.body, visit)

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target, tvm.transform.PassContext(instruments=[Capture()]):
        tilelang.lower(prim_func, target=target)
    return found


def _pairs(analyzer, example: str, factory: str, arch: str = "sm_90") -> dict[str, tuple[Layout, object]]:
    """Each buffer's model layout (from the core) next to the compiler's object for the same kernel."""
    kernel = analyzer.analyze(str(EXAMPLES / example), target=arch).kernel(factory)
    assert kernel is not None and kernel.layouts, f"{example}: no layouts"
    objects = _compiler_layouts(getattr(_load(EXAMPLES / example), factory)(**kernel.args), arch)
    return {layout.buffer: (layout, objects[layout.buffer]) for layout in kernel.layouts}


@pytest.fixture(scope="module")
def gemm(analyzer):
    return _pairs(analyzer, "gemm.py", "matmul")


@pytest.fixture(scope="module")
def softmax(analyzer):
    return _pairs(analyzer, "softmax.py", "softmax")


@pytest.fixture(scope="module")
def gemm_sm80(analyzer):
    return _pairs(analyzer, "gemm.py", "matmul", arch="sm_80")


def _cross_check(layout: Layout, obj, samples: int = 200) -> None:
    """Compare numpy's answer with the compiler's map_forward_* on random cells."""
    from tilelang import tvm

    rng = random.Random(0)
    if layout.kind == "fragment":
        fmap = fragment_map(layout)
        for _ in range(samples):
            cell = [rng.randrange(n) for n in layout.input_shape]
            rep = rng.randrange(layout.replicate or 1)
            args = ([rep] if layout.replicate_var else []) + cell
            imms = [tvm.tirx.IntImm("int32", x) for x in args]
            (thread,) = obj.map_forward_thread(imms)
            assert fmap.thread[(rep, *cell)] == int(thread)
            want = [int(x) for x in obj.map_forward_index(imms)]
            assert fmap.local[tuple(cell)] == int(np.ravel_multi_index(want, layout.output_shape))
    else:
        smap = shared_map(layout)
        for _ in range(samples):
            cell = [rng.randrange(n) for n in layout.input_shape]
            want = [int(x) for x in obj.map_forward_index([tvm.tirx.IntImm("int32", x) for x in cell])]
            assert [int(c[tuple(cell)]) for c in smap.coords] == want


def test_gemm_accumulator_matches_hand_derived_mma_mapping(gemm):
    layout, _ = gemm["C_local"]
    fmap = fragment_map(layout)
    assert (fmap.thread_extent, fmap.replicate, fmap.elements_per_thread) == (128, 1, 128)
    i, j = np.ogrid[:128, :128]
    # m16n8 accumulators: 4 warps stacked in 16-row slabs, lane = 4 * row-in-8 + column-pair.
    expected = (i % 64) // 16 * 32 + (i % 8) * 4 + (j % 8) // 2
    assert np.array_equal(fmap.thread[0], np.broadcast_to(expected, (128, 128)))
    # every thread holds exactly 128 distinct cells, and every cell has one owner
    assert (fmap.cells >= 0).all()
    assert np.unique(fmap.cells).size == 128 * 128
    assert fmap.owners(0, 0) == [0]
    assert fmap.cell_of(0, 1) == (0, 1)


@pytest.mark.parametrize("name", ["C_local", "A_shared", "B_shared"])
def test_gemm_layouts_agree_with_compiler(gemm, name):
    _cross_check(*gemm[name])


def test_sm80_gemm_layouts_agree_with_compiler(gemm_sm80):
    assert gemm_sm80, "no layouts inferred"
    for layout, obj in gemm_sm80.values():
        _cross_check(layout, obj, samples=50)


def test_softmax_row_statistics_are_replicated_across_their_row_owners(softmax):
    layout, obj = softmax["row_max"]
    assert layout.replicate and layout.replicate > 1
    _cross_check(layout, obj)
    fmap = fragment_map(layout)
    rows, _ = softmax["X_local"]
    xmap = fragment_map(rows)
    # each replica of row_max[i] lives on a thread that also holds some of row i of X_local
    for i in range(layout.input_shape[0]):
        assert set(fmap.owners(i)) <= set(xmap.thread[0, i].tolist())


def test_softmax_tile_layouts_agree_with_compiler(softmax):
    for layout, obj in softmax.values():
        _cross_check(layout, obj, samples=50)


def test_shared_swizzle_is_a_permutation_of_the_physical_buffer(gemm):
    layout, _ = gemm["B_shared"]
    smap = shared_map(layout)
    assert is_bijective(smap)
    assert smap.offset.max() + 1 == np.prod(layout.output_shape)


def test_full_bank_swizzle_xors_the_vector_column_with_the_row():
    # TileLang's 128-byte swizzle for a 16-bit (8, 64) tile: vector c of row s moves to c ^ s.
    layout = Layout(
        buffer="S",
        kind="layout",
        input_shape=[8, 64],
        output_shape=[512],
        input_vars=["i", "j"],
        index=["j % 8 + T.bitwise_xor(j // 8, i % 8) * 8 + i % 8 * 64"],
    )
    smap = shared_map(layout)
    for s in range(8):
        for c in range(8):
            assert smap.offset[s, c * 8] == s * 64 + (c ^ s) * 8


def test_expressions_follow_tvm_floor_semantics_and_printed_calls():
    x = np.array([-7, -1, 0, 5, 9])
    assert evaluate("x // 4", {"x": x}).tolist() == [-2, -1, 0, 1, 2]
    assert evaluate("x % 4", {"x": x}).tolist() == [1, 3, 0, 1, 1]
    assert evaluate("T.Div(x, 4)", {"x": x}).tolist() == [-1, 0, 0, 1, 2]
    assert evaluate("T.truncmod(x, 4)", {"x": x}).tolist() == [-3, -1, 0, 1, 1]
    assert evaluate("T.shift_right(x, 1) + T.bitwise_and(x, 3)", {"x": np.array([6])}).tolist() == [5]
    assert evaluate('T.if_then_else(x < 2, T.min(x, 1), T.max(x, 7)) + T.Cast("int64", 0)', {"x": x}).tolist() == [
        -7,
        -1,
        0,
        7,
        9,
    ]
    assert evaluate("T.Select(not x < 0 and x != 5, 1, 0)", {"x": x}).tolist() == [0, 0, 1, 0, 1]
    assert evaluate("T.int64(3) * x", {"x": np.array([2])}).tolist() == [6]


@pytest.mark.parametrize(
    "expr",
    ["__import__('os').system('true')", "x.real", "[x]", "T.call_extern('f', x)", "lambda: 1", "y + 1"],
)
def test_anything_but_index_arithmetic_is_refused(expr):
    with pytest.raises(LayoutExprError):
        evaluate(expr, {"x": np.arange(3)})
