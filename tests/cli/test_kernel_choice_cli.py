"""A command that works on one kernel takes the one the file builds and says so; ``--kernel``'s help
says which kernel a command takes without it (the one the file builds, or every kernel)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from tilescope.core.cli.kernel_options import EVERY_KERNEL_HELP, ONE_KERNEL_HELP
from tilescope.core.cli.main import build_parser

from tests.cli.helpers import tilescope

TWO_KERNELS = """
import tilelang
import tilelang.language as T


@tilelang.jit
def helper(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                B[i] = A[i]
    return main


@tilelang.jit
def scale(M):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(M):
                B[i] = A[i] * 2
    return main


if __name__ == "__main__":
    scale(64)
"""


def _kernel_help(command: str) -> str | None:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = subparsers.choices[command]
    return next(a.help for a in parser._actions if "--kernel" in a.option_strings)


@pytest.mark.parametrize("command", ["run", "trace", "layout", "graph", "profile"])
def test_one_kernel_commands_say_which_kernel_they_take(command: str) -> None:
    assert _kernel_help(command) == ONE_KERNEL_HELP
    assert "builds first when run" in ONE_KERNEL_HELP and "the choice is printed" in ONE_KERNEL_HELP


@pytest.mark.parametrize("command", ["check", "variants"])
def test_every_kernel_commands_say_so(command: str) -> None:
    assert _kernel_help(command) == EVERY_KERNEL_HELP == "only this kernel (default: every kernel of the file)"


def test_graph_draws_the_kernel_the_file_builds_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "two.py"
    path.write_text(TWO_KERNELS)
    out = tmp_path / "graph.dot"
    done = tilescope("graph", str(path), "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0] == (
        "tilescope graph: kernel scale, the first kernel the file builds when run; "
        "also in the file: helper (--kernel NAME picks one)"
    )
    assert out.read_text().startswith("digraph scale {")
