"""The codes the analyzer reports before any kernel builds, and ptxas's, each from its smallest case.

None of these starts the compiler worker, so they run in a second or two; the codes that need a
build are expected by the tests of the compiler tier and the hostile kernels.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.worker import ptxas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def codes(analyzer: Analyzer, path: Path, kernel: str | None = None) -> list[tuple[str, str]]:
    return [(d.code, d.severity) for d in analyzer.analyze(str(path), kernel=kernel).all_diagnostics()]


def test_a_file_that_cannot_be_read_is_an_io_error(tmp_path: Path) -> None:
    with Analyzer() as analyzer:
        assert codes(analyzer, tmp_path / "missing.py") == [("io-error", "error")]


def test_a_kernel_the_file_does_not_define_is_no_kernel() -> None:
    with Analyzer() as analyzer:
        assert codes(analyzer, EXAMPLES / "gemm.py", kernel="no_such_kernel") == [("no-kernel", "error")]


def test_an_analyzer_that_was_stopped_says_so_instead_of_starting_a_worker() -> None:
    analyzer = Analyzer()
    analyzer.stop()
    assert codes(analyzer, EXAMPLES / "gemm.py") == [("stopped", "error")]


needs_nvcc = pytest.mark.skipif(ptxas.find_nvcc() is None, reason="needs nvcc")


@needs_nvcc
def test_cuda_that_nvcc_rejects_is_a_ptxas_error() -> None:
    resources, found = ptxas.resource_usage("this is not CUDA\n", "sm_90", "k", 7)
    assert resources is None
    assert [(d.code, d.severity, d.span.line, d.kernel) for d in found] == [("ptxas-error", "error", 7, "k")]


@needs_nvcc
def test_ptxas_that_outlasts_its_time_is_a_ptxas_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ptxas, "SPILL_TIMEOUT_S", 0.001)
    resources, found = ptxas.resource_usage("__global__ void k() {}\n", "sm_90", "k", 7)
    assert resources is None
    assert [(d.code, d.severity) for d in found] == [("ptxas-timeout", "warning")]
