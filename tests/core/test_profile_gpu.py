"""``tilescope profile`` on a real GPU: the time, its share of the roofline, and Nsight Compute's figures."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.perf.profile_store import last_profile

from tests.conftest import EXAMPLES

pytestmark = pytest.mark.gpu
FIXTURES = Path(__file__).parent / "fixtures"


def _profile(path: Path, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", "profile", str(path), "--json", "--runs", "10", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_profile_times_the_gemm_and_keeps_the_report_for_the_editor(tmp_path: Path) -> None:
    path = tmp_path / "gemm.py"
    shutil.copy(EXAMPLES / "gemm.py", path)
    report = _profile(path, "--no-ncu")
    timing = report["timing"]
    assert timing["error"] is None and len(timing["times_us"]) == 10
    assert timing["time_us"] == pytest.approx(statistics.median(timing["times_us"]), abs=0.01)
    assert 0 < report["roofline_share"] <= 1, report["roofline_share"]
    kept = last_profile(str(path), "matmul")
    assert kept is not None and kept["timing"]["time_us"] == timing["time_us"]


@pytest.mark.skipif(shutil.which("ncu") is None, reason="needs Nsight Compute")
def test_ncu_measures_the_conflicts_the_static_figures_predict(tmp_path: Path) -> None:
    path = tmp_path / "bank_kernels.py"
    shutil.copy(FIXTURES / "bank_kernels.py", path)
    report = _profile(path, "--arg", "pad=0")
    ncu = report["ncu"]
    assert ncu["error"] is None, ncu["error"]
    loads = [a for a in report["static"]["shared_accesses"] if a["op"] == "load"]
    assert [a["ways"] for a in loads] == [32]
    assert ncu["load_conflicts_per_request"] == pytest.approx(31, abs=0.5)
    assert ncu["blocks_per_sm"] == report["static"]["occupancy"]["blocks_per_sm"]
