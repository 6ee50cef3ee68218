"""Files of different folders that import a sibling of the same name (``utils``) each get their own.

One worker analyses file after file; a module an earlier file imported from its folder must not answer
a later file's import from another folder (TileLang's examples have a dozen ``utils.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.core.service import Analyzer

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
