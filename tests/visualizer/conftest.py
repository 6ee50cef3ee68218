"""The examples the visualizer tests draw, analysed once per session by the shared warm analyzer."""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.model import FileAnalysis, KernelModel

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="session")
def gemm_analysis(analyzer) -> FileAnalysis:
    return analyzer.analyze(str(EXAMPLES / "gemm.py"))


@pytest.fixture(scope="session")
def gemm(gemm_analysis) -> KernelModel:
    kernel = gemm_analysis.kernel("matmul")
    assert kernel is not None and kernel.layouts
    return kernel
