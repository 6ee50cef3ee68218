"""``tilescope run``: the command line over the worker, its report and its exit status."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tilescope.core.model import RunReport, dumps, from_json

from tests.conftest import EXAMPLES


def _tilescope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", "run", *args], capture_output=True, text=True, timeout=600, check=False
    )


def test_runs_an_example_against_a_torch_reference_and_round_trips_as_json(tmp_path: Path) -> None:
    shutil.copy(EXAMPLES / "gemm.py", tmp_path / "gemm.py")
    (tmp_path / "gemm_ref.py").write_text(
        "import torch\n\n"
        "def inputs(M, N, K, **_):\n"
        "    g = torch.Generator().manual_seed(1)\n"
        "    return [torch.randn(M, K, generator=g).half(), torch.randn(K, N, generator=g).half()]\n\n"
        "def reference(A, B):\n"
        "    return (A.float() @ B.float()).half()\n"
    )
    done = _tilescope(
        str(tmp_path / "gemm.py"), "--arg", "M=130", "--arg", "N=200", "--arg", "K=70",
        "--inputs", "gemm_ref:inputs", "--compare", "gemm_ref:reference", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    report = from_json(RunReport, data)
    assert json.loads(dumps(report)) == data
    assert report.grid == [2, 2] and report.error is None and report.findings == []
    (out,) = report.outputs
    assert (out.name, out.shape, out.nan, out.unwritten) == ("C", [130, 200], 0, 0)
    (comparison,) = report.comparisons
    assert comparison.wrong == 0 and comparison.total == 130 * 200


def test_reports_an_uninitialised_accumulator_at_its_line_and_fails(tmp_path: Path) -> None:
    source = (EXAMPLES / "gemm.py").read_text().replace("            T.clear(C_local)\n", "")
    path = tmp_path / "no_clear.py"
    path.write_text(source)
    done = _tilescope(str(path), "--arg", "M=64", "--arg", "N=64", "--arg", "K=64")
    assert done.returncode == 1
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "T.gemm(" in text)
    assert f"no_clear.py:line {line}: read of never-written C_local[0, 0] (shape 128×128)" in done.stdout


def test_thread_level_code_is_named_not_guessed(tmp_path: Path) -> None:
    path = tmp_path / "threads.py"
    path.write_text(
        "import tilelang.language as T\n\n"
        "# tilescope: N=128\n"
        "def copy(N):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
        "        with T.Kernel(1, threads=128):\n"
        "            tx = T.get_thread_binding()\n"
        "            for i in T.Parallel(N):\n"
        "                B[i] = A[i] + tx\n"
        "    return main\n"
    )
    done = _tilescope(str(path))
    assert done.returncode == 1
    assert (
        "threads.py:9: error: not interpretable: uses a T.Parallel or vectorised loop in per-thread code" in done.stdout
    )


def test_the_command_line_process_never_imports_tilelang() -> None:
    code = (
        "import sys\n"
        "from tilescope.core.cli import main as cli, run_cmd\n"
        "cli.build_parser()\n"
        "assert 'tilelang' not in sys.modules and 'tvm' not in sys.modules, 'imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
