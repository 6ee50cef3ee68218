"""Resource usage from ptxas: the report parser, and a real compile where nvcc is installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.worker.ptxas import find_nvcc, parse_report

from tests.conftest import EXAMPLES

REPORT = """ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function 'main_kernel' for 'sm_90a'
ptxas info    : Function properties for main_kernel
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 168 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]
"""


def test_report_parser_reads_registers_spills_and_shared_memory() -> None:
    resources = parse_report(REPORT, "sm_90")
    assert resources is not None
    assert (resources.registers, resources.spill_store_bytes, resources.spill_load_bytes) == (168, 8, 12)
    assert resources.shared_bytes == 1024


def test_report_without_usage_is_none() -> None:
    assert parse_report("nvcc fatal: something", "sm_90") is None


@pytest.mark.slow
@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (pip install 'tilescope[nvcc]')")
def test_gemm_compiles_to_a_cubin_with_its_register_count(analyzer: Analyzer) -> None:
    result = analyzer.analyze(str(EXAMPLES / "gemm.py"), ptxas=True)
    model = result.kernel("matmul")
    assert result.ok and model is not None and model.resources is not None
    assert 128 <= model.resources.registers <= 255
    assert model.resources.spill_store_bytes == 0


RULES = Path(__file__).parent / "fixtures" / "static_rules.py"


def _check(*extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tilescope", "check", str(RULES), "--kernel", "half_int_accum", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def test_check_says_plainly_that_device_code_was_not_compiled() -> None:
    # TileLang lowers a float16 GEMM accumulating in int32; only nvcc rejects the CUDA it generates.
    done = _check()
    assert done.returncode == 0 and "device code not compiled (nvcc not run: --ptxas" in done.stdout


@pytest.mark.skipif(find_nvcc() is None, reason="needs nvcc (pip install 'tilescope[nvcc]')")
def test_with_ptxas_the_kernel_nvcc_rejects_fails_the_check() -> None:
    done = _check("--ptxas")
    assert done.returncode == 1 and "error[ptxas-error]" in done.stdout
    assert "device code not compiled" not in done.stdout
