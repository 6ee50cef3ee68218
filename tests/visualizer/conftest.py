"""One warm analyzer for the visualizer tests: the examples are analysed once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_core import Analyzer
from tilelang_core.model import FileAnalysis, KernelModel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def analyzer():
    with Analyzer(timeout_s=180) as instance:
        yield instance


@pytest.fixture(scope="session")
def gemm_analysis(analyzer) -> FileAnalysis:
    return analyzer.analyze(str(EXAMPLES / "gemm.py"))


@pytest.fixture(scope="session")
def gemm(gemm_analysis) -> KernelModel:
    kernel = gemm_analysis.kernel("matmul")
    assert kernel is not None and kernel.layouts
    return kernel
