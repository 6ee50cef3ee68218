"""``tilescope record``: a real run of the user's program, recorded, then used as an argument source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.core.record.recorder import record

PROGRAM = """\
from kernels import saxpy

kernel = saxpy.compile(N=2048, alpha=3.0)  # a CPU run stops here: there is no GPU to compile for
"""

FACTORY_PROGRAM = """\
import tilelang

from kernels import copy, scale

copy(N=8192)
scale(A=__import__("torch").zeros(64, 32, device="cuda"), factor=2.0)
"""

KERNELS = """\
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def saxpy(N, alpha, block_N=128):
    @T.prim_func
    def main(X: T.Tensor((N,), "float32"), Y: T.Tensor((N,), "float32"), Z: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            for i in T.Parallel(block_N):
                Z[bx * block_N + i] = alpha * X[bx * block_N + i] + Y[bx * block_N + i]

    return main


def copy(N=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // 128, threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = A[bx * 128 + i]

    return main


@tilelang.jit
def scale(A, factor):
    M, N = T.const("M, N")
    A: T.Tensor((M, N), "float32")
    B = T.empty((M, N), "float32")
    with T.Kernel(M, threads=128) as bx:
        for j in T.Parallel(N):
            B[bx, j] = A[bx, j] * factor
    return B


def main(N=4096):
    saxpy.compile(N=N, alpha=1.0)
"""


def _record(workspace: Path, program: str, *options: str, **env: str) -> subprocess.CompletedProcess[str]:
    (workspace / "run.py").write_text(program)
    return subprocess.run(
        [sys.executable, "-m", "tilescope", "record", *options, "--", sys.executable, "run.py"],
        cwd=workspace,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "kernels.py").write_text(KERNELS)
    return tmp_path


def test_without_the_fake_device_a_cpu_run_stops_at_its_first_device_call_and_says_so(
    workspace: Path, analyzer: Analyzer
) -> None:
    done = _record(workspace, PROGRAM, "--fake-device", "off")
    assert done.returncode != 0
    assert "1 kernel instantiations (1 new)" in done.stdout
    assert "no GPU here, so the program stopped at its first device call" in done.stdout
    assert "Error in sitecustomize" not in done.stderr
    (entry,) = json.loads((workspace / ".tilescope" / "instances.json").read_text())["instances"]
    assert (entry["file"], entry["kernel"], entry["style"], entry["line"]) == ("kernels.py", "saxpy", "jit", 5)
    assert entry["args"] == {"N": 2048, "alpha": 3.0} and entry["out_idx"] == [-1]
    # The recording outranks the call in main(), which would build N=4096.
    model = analyzer.analyze(str(workspace / "kernels.py"), kernel="saxpy").kernel("saxpy")
    assert model is not None and model.args["N"] == 2048 and model.args["alpha"] == 3.0
    assert model.arg_sources["N"] == "recorded" and model.arg_sources["block_N"] == "default"
    assert model.launch is not None and model.launch.grid == [16]


def test_factories_and_tensor_shapes_are_recorded_as_const_bindings(workspace: Path) -> None:
    # The corpus ground truth's mode: a GPU tensor made on the CPU, so the run reaches the kernel it sizes.
    done = _record(workspace, FACTORY_PROGRAM, TILESCOPE_RECORD_CPU_TENSORS="1")
    assert "2 kernel instantiations (2 new)" in done.stdout, done.stdout + done.stderr
    entries = {
        e["kernel"]: e for e in json.loads((workspace / ".tilescope" / "instances.json").read_text())["instances"]
    }
    assert entries["copy"]["style"] == "factory" and entries["copy"]["args"] == {"N": 8192}
    assert entries["scale"]["consts"] == {"M": 64, "N": 32}
    assert entries["scale"]["tensors"] == {"A": {"shape": [64, 32], "dtype": "float32"}}
    assert entries["scale"]["args"] == {"factor": 2.0}


def test_the_environments_own_sitecustomize_still_runs(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    theirs = tmp_path / "site"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("print('their sitecustomize ran')\n")
    code, lines = record(
        [sys.executable, "-c", "print('program ran')"], tmp_path, timeout_s=60, env={"PYTHONPATH": str(theirs)}
    )
    imports = [str(theirs / "sitecustomize.py")]  # the program's own files, which a dry run's cache is keyed by
    assert code == 0 and lines == [{"pid": lines[0]["pid"], "event": "exit", "error": None, "imports": imports}]
    out, err = capfd.readouterr()
    assert out.splitlines() == ["their sitecustomize ran", "program ran"] and "Error in sitecustomize" not in err


def _write_instances(workspace: Path, n: int) -> None:
    entry = {"file": "kernels.py", "kernel": "saxpy", "line": 5, "style": "jit", "args": {"N": n, "alpha": 3.0}}
    (workspace / ".tilescope").mkdir(exist_ok=True)
    (workspace / ".tilescope" / "instances.json").write_text(json.dumps({"version": 1, "instances": [entry]}))


def test_a_new_recording_rebuilds_the_kernel_and_its_pass_ir(workspace: Path, analyzer: Analyzer) -> None:
    # The parent sends the worker the instantiation, recorded values included, so both the model
    # cache and the worker's pass-IR cache miss when the recording changes, and never otherwise.
    path = str(workspace / "kernels.py")
    _write_instances(workspace, 2048)
    first = analyzer.analyze(path, kernel="saxpy").kernel("saxpy")
    assert first is not None and first.launch is not None and first.launch.grid == [16]
    assert "(2048,)" in analyzer.pass_ir(path, kernel="saxpy", index=-1).text
    _write_instances(workspace, 4096)
    ir = analyzer.pass_ir(path, kernel="saxpy", index=-1).text  # asked before any new analysis
    assert "(4096,)" in ir and "(2048,)" not in ir
    again = analyzer.analyze(path, kernel="saxpy").kernel("saxpy")
    assert again is not None and again.launch is not None and again.launch.grid == [32]
    assert again.arg_sources["N"] == "recorded"


def test_the_worker_builds_the_instantiation_it_is_sent(workspace: Path, analyzer: Analyzer) -> None:
    # One-way compiler path: discovery runs in the parent only; the worker builds exactly what it is sent.
    from tilescope.core.compiler.discovery import instantiations
    from tilescope.core.model import FileAnalysis, from_json, to_json

    path = str(workspace / "kernels.py")
    source = (workspace / "kernels.py").read_text()
    (saxpy,) = [i for i in instantiations(source, path) if i.kernel.name == "saxpy"]
    sent = to_json(saxpy) | {"args": {"N": 512, "alpha": 2.0}, "sources": {"N": "directive", "alpha": "directive"}}
    payload = {"op": "analyze", "path": path, "source": source, "target": "sm_90", "kernel": "saxpy"}
    payload |= {"instantiations": [sent], "args": None, "ptxas": False}
    data, _ = analyzer._call(payload, time.monotonic() + 120)
    (model,) = from_json(FileAnalysis, data).kernels
    assert model.args["N"] == 512 and model.arg_sources == {"N": "directive", "alpha": "directive"}
    assert model.launch is not None and model.launch.grid == [4]
