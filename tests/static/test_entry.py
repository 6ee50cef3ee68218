"""The kernel a command opens when none is named is the one the file builds, not the first defined."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import cast

import pytest
from tilescope.core.cli.kernel_options import KernelOptions
from tilescope.core.compiler.profile import ProfileQuery, profile_file
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis
from tilescope.core.static.entry import kernel_choice

CORPUS = Path(
    os.environ.get(
        "TILESCOPE_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples"
    )
)

HEADER = """
import tilelang
import tilelang.language as T


@tilelang.jit
def helper(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            pass
    return main


@tilelang.jit
def real(M):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            pass
    return main

"""


def test_the_kernel_main_builds_is_chosen_over_the_first_defined() -> None:
    source = HEADER + "def main():\n    real(128)\n\n\nif __name__ == '__main__':\n    main()\n"
    choice = kernel_choice(source)
    assert choice is not None
    assert (choice.kernel, choice.kernels) == ("real", ("helper", "real"))
    assert choice.why == "the first kernel the file builds when run (through main)"


def test_where_the_run_stops_the_kernel_main_leads_to_is_chosen() -> None:
    source = (
        HEADER
        + "def go(n):\n    for size in unknown(n):\n        real(size)\n\n\nif __name__ == '__main__':\n    go(3)\n"
    )
    choice = kernel_choice(source)
    assert choice is not None and choice.kernel == "real"
    assert choice.why == "the first kernel the file's __main__ block leads to (through go)"


def test_without_main_a_test_function_says_which() -> None:
    source = HEADER + "def run_it():\n    return real(64)\n\n\ndef test_real():\n    run_it()\n"
    choice = kernel_choice(source)
    assert choice is not None and choice.kernel == "real"
    assert choice.why == "the first kernel test_real leads to (through run_it)"


def test_a_file_that_builds_nothing_falls_back_to_the_first() -> None:
    choice = kernel_choice(HEADER)
    assert choice is not None and choice.kernel == "helper"
    assert choice.why.startswith("the first in the file")


def test_the_choice_is_printed_with_the_others_and_how_to_pick(tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text(HEADER + "if __name__ == '__main__':\n    real(16)\n")
    said = io.StringIO()
    options = KernelOptions().choose(str(path), "trace", said)
    assert options.kernel == "real"
    assert said.getvalue() == (
        "tilescope trace: kernel real, the first kernel the file builds when run; "
        "also in the file: helper (--kernel NAME picks one)\n"
    )
    named = io.StringIO()
    assert KernelOptions(kernel="helper").choose(str(path), "trace", named).kernel == "helper"
    assert named.getvalue() == ""


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")
@pytest.mark.parametrize(
    ("example", "kernel"),
    [
        ("norm/rms_norm.py", "rms_norm"),
        ("dequantize_gemm/example_dequant_gemm_fp4_hopper.py", "matmul"),
        ("dequantize_gemm/example_dequant_gemm_w4a8.py", "matmul_int8xint4"),
        ("gemm/example_gemm_persistent.py", "matmul_persistent"),
        ("block_causal_attention/block_causal_attention_varlen.py", "_fwd_varlen_template"),
    ],
)
def test_tilelangs_examples_open_the_kernel_they_run(example: str, kernel: str) -> None:
    path = CORPUS / "examples" / example
    choice = kernel_choice(path.read_text(), str(path))
    assert choice is not None and choice.kernel == kernel


def test_profile_without_a_kernel_profiles_the_one_the_file_builds(tmp_path: Path) -> None:
    """The MCP server's ``ProfileQuery`` names no kernel either: it gets the same choice as the CLI."""
    path = tmp_path / "two.py"
    path.write_text(HEADER + "if __name__ == '__main__':\n    real(16)\n")
    asked: list[str | None] = []

    class Compiler:
        def analyze(self, path: str, source: str, *, kernel: str | None = None, **_: object) -> FileAnalysis:
            asked.append(kernel)
            return FileAnalysis(path, "sm_90", [], [], [])

    report = profile_file(ProfileQuery(file=str(path)), analyzer=cast(Analyzer, Compiler()))
    assert asked == ["real"] and report.timing is None
