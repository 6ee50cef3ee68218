"""Files of different folders that import a sibling of the same name (``utils``) each get their own.

One worker analyses file after file; a module an earlier file imported from its folder must not answer
a later file's import from another folder (TileLang's examples have a dozen ``utils.py``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer

pytest.importorskip("tilelang")

KERNEL = """
import tilelang.language as T
from utils import BLOCK


# tilescope: N=1024
def double(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(N // BLOCK, threads=BLOCK) as bx:
            for i in T.Parallel(BLOCK):
                B[bx * BLOCK + i] = A[bx * BLOCK + i] * 2

    return main
"""


def test_each_folder_imports_its_own_utils(tmp_path: Path) -> None:
    for folder, utils in (
        ("a", "BLOCK = 128\n"),
        ("b", "import not_installed_anywhere\nBLOCK = 64\n"),
        ("c", "BLOCK = 256\n"),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "utils.py").write_text(utils)
        (tmp_path / folder / "kernel.py").write_text(KERNEL)
    with Analyzer(timeout_s=120) as analyzer:
        first = analyzer.analyze(str(tmp_path / "a" / "kernel.py"))
        second = analyzer.analyze(str(tmp_path / "b" / "kernel.py"))
        third = analyzer.analyze(str(tmp_path / "c" / "kernel.py"))
    assert first.kernels and first.kernels[0].launch is not None
    assert first.kernels[0].launch.threads == 128
    assert [d.code for d in second.diagnostics] == ["missing-module"], second.diagnostics
    assert "not_installed_anywhere" in second.diagnostics[0].message
    assert third.kernels and third.kernels[0].launch is not None
    assert third.kernels[0].launch.threads == 256


def test_what_tilelang_puts_on_the_path_stays_there(tmp_path: Path) -> None:
    """The first file a process loads may be what imports TileLang, which puts its TVM on ``sys.path``:
    that is installed code, not the user's, and a later file's load must not take it away."""
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kernel.py").write_text("import tilelang\nimport tilelang.language as T\n")
    first, second = (str(tmp_path / folder / "kernel.py") for folder in ("first", "second"))
    program = (
        "import json, sys\n"
        "from tilescope.core.worker import import_path, loader\n"
        "assert 'tilelang' not in sys.modules\n"
        f"loader.load_module(open({first!r}).read(), {first!r})\n"
        "before = [p for p in sys.path if 'tvm' in p]\n"
        f"loader.load_module(open({second!r}).read(), {second!r})\n"
        "print(json.dumps([before, [p for p in sys.path if 'tvm' in p], sorted(import_path._user_roots)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    before, after, roots = json.loads(done.stdout.strip().splitlines()[-1])
    assert before and after == before
    assert roots == sorted(str(tmp_path / folder) for folder in ("first", "second"))


def test_a_project_in_a_temporary_folder_named_like_tilescopes_own_reads_its_siblings() -> None:
    """The sealed worker hides the private folders Tilescope makes in the temporary folder (other checks',
    other gradings'). A user's project there whose name merely starts with ``tilescope-`` is the user's:
    its file's ``import utils`` is found. (The worker hid every ``/tmp/tilescope-*`` folder, and a corpus
    copied to ``/tmp/tilescope-corpus-...`` lost its sibling imports as missing modules.)"""
    project = Path(tempfile.mkdtemp(prefix="tilescope-project-"))
    try:
        (project / "utils.py").write_text("BLOCK = 128\n")
        (project / "kernel.py").write_text(KERNEL)
        with Analyzer(timeout_s=120) as analyzer:  # started after the folder exists, as a CLI check is
            result = analyzer.analyze(str(project / "kernel.py"))
    finally:
        shutil.rmtree(project)
    assert not [d for d in result.diagnostics if d.code == "missing-module"], result.diagnostics
    assert result.kernels and result.kernels[0].launch is not None
    assert result.kernels[0].launch.threads == 128
