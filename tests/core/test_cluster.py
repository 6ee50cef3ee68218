"""``tilescope check --ray``: the same report as ``-j 1`` (a lost node: ``benchmarks/bench_cluster_faults.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")


ROOT = Path(__file__).resolve().parents[2]


def test_a_request_names_the_file_kernel_target_and_config_a_lost_node_held() -> None:
    from tilescope.core.compiler.cluster import Request

    assert Request("/k/gemm.py", None).label() == "/k/gemm.py"
    options = {"kernel": "matmul", "target": "sm_90", "args": {"config": 3, "M": 64}}
    assert Request("/k/gemm.py", None, options).label() == "/k/gemm.py matmul sm_90 config 3"


@pytest.mark.slow
def test_check_on_a_local_ray_cluster_prints_what_one_worker_prints(tmp_path: Path) -> None:
    for name in ("gemm.py", "softmax.py", "elementwise_add.py"):
        (tmp_path / name).write_text((ROOT / "examples" / name).read_text())

    def check(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "tilescope", "check", str(tmp_path), *extra],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )

    one, fanned = check("-j", "1"), check("--ray", "-j", "2")
    assert fanned.returncode == one.returncode == 0, fanned.stderr
    assert fanned.stdout == one.stdout
    assert "3/3 kernels lowered in 3 files" in fanned.stdout


@pytest.mark.slow
def test_variants_on_a_local_ray_cluster_print_what_local_workers_print(tmp_path: Path) -> None:
    (tmp_path / "gemm.py").write_text((ROOT / "examples" / "gemm.py").read_text())

    def variants(*extra: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "tilescope", "variants", "gemm.py", "--targets", "sm_80,sm_90,gfx942", *extra]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)

    local, fanned = variants("-j", "1"), variants("--ray", "-j", "2")
    assert fanned.returncode == local.returncode == 0, fanned.stderr
    assert fanned.stdout == local.stdout
    assert "3 variants: 3 can run" in fanned.stdout
