"""The pass trace: every top-level pass with timing and change flags, IR printed only on demand."""

from __future__ import annotations

import time

import pytest
from tilescope.core.compiler.service import Analyzer

from tests.conftest import EXAMPLES

GEMM = str(EXAMPLES / "gemm.py")


def test_gemm_trace_lists_the_cuda_pipeline(analyzer: Analyzer) -> None:
    model = analyzer.analyze(GEMM).kernel("matmul")
    assert model is not None
    names = [p.name for p in model.passes]
    assert 70 <= len(names) <= 100
    assert names.index("tl.LayoutInference") < names.index("tl.LowerTileOp") < names.index("tl.ThreadSync")
    assert [p.index for p in model.passes] == list(range(len(names)))
    assert {p.phase for p in model.passes} == {"frontend", "tile-planning", "tile-lowering", "device", "codegen"}
    assert all(p.duration_ms >= 0 for p in model.passes)
    by_name = {p.name: p for p in model.passes}
    assert by_name["tl.LayoutInference"].changed and by_name["tl.LowerTileOp"].changed
    assert not by_name["tirx.VerifyMemory"].changed


def test_pass_ir_is_printed_on_demand_with_python_lines(analyzer: Analyzer) -> None:
    model = analyzer.analyze(GEMM).kernel("matmul")
    assert model is not None
    index = next(p.index for p in model.passes if p.name == "tl.LayoutInference")
    ir = analyzer.pass_ir(GEMM, kernel="matmul", index=index)
    lines = ir.text.splitlines()
    assert len(lines) == len(ir.source_lines)
    gemm_lines = [src for text, src in zip(lines, ir.source_lines, strict=True) if "T.gemm(" in text]
    assert gemm_lines == [23]
    assert "layout_map" in ir.text
    before = analyzer.pass_ir(GEMM, kernel="matmul", index=-1)
    assert "T.Pipelined" not in before.text and "num_stages" in before.text
    every = analyzer.pass_irs(GEMM, kernel="matmul", indices=[index, -1, len(model.passes) - 1])
    assert every[:2] == [ir, before]  # one lowering prints them all, each as asked alone
    assert every[2] == analyzer.pass_ir(GEMM, kernel="matmul", index=len(model.passes) - 1)
    with pytest.raises(RuntimeError, match="out of range"):
        analyzer.pass_irs(GEMM, kernel="matmul", indices=[0, len(model.passes)])


def test_results_are_cached_by_source_arguments_and_target(analyzer: Analyzer) -> None:
    first = analyzer.analyze(GEMM)
    start = time.perf_counter()
    again = analyzer.analyze(GEMM)
    assert time.perf_counter() - start < 0.05
    assert again.kernels == first.kernels
    other = analyzer.analyze(GEMM, args={"K": 512})
    assert other.kernel("matmul").args["K"] == 512
    assert other.kernel("matmul").buffers[0].shape == [1024, 512]


def test_other_targets_lower_too(analyzer: Analyzer) -> None:
    result = analyzer.analyze(GEMM, target="sm_80")
    model = result.kernel("matmul")
    assert result.ok and model is not None
    assert model.launch.threads_after_ws == 128 and not model.warp_specialized
    assert "cp.async" in model.device_source or "cp_async" in model.device_source
