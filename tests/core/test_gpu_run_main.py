"""``python -m tilescope.core.worker.gpu_run BATCH``, the process Nsight Compute profiles, runs its batch.

Without a GPU the kernel cannot run: the child must still read the batch, say why on stderr and write
an empty manifest (a module that does nothing when run leaves ncu with "No kernels were profiled").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.compiler.profile import run_payload

ROOT = Path(__file__).resolve().parents[2]


def test_the_ncu_child_runs_its_batch_and_writes_the_manifest(tmp_path: Path) -> None:
    pytest.importorskip("tilelang")
    fixture = ROOT / "tests" / "core" / "fixtures" / "bank_kernels.py"
    payload = run_payload(str(fixture), fixture.read_text(), "transpose", {"pad": 0})
    manifest = tmp_path / "manifest.json"
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps({"requests": [payload], "manifest": str(manifest)}))
    done = subprocess.run(
        [sys.executable, "-m", "tilescope.core.worker.gpu_run", str(batch)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    launched = json.loads(manifest.read_text())
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        assert launched == [0], done.stderr
    else:
        assert launched == []
        assert "request 0: " in done.stderr, done.stderr
