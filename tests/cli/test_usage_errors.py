"""Bad options and values are usage errors in argparse's way: a usage line, ``error:``, exit status 2,
before anything is analysed; the same for every command that shares the kernel options."""

from __future__ import annotations

import pytest

from tests.cli.helpers import EXAMPLES, tilescope

GEMM = str(EXAMPLES / "gemm.py")


@pytest.mark.parametrize(
    ("command", "words"),
    [
        (["check", GEMM, "--target", "sm_999"], "argument --target: unknown target 'sm_999'"),
        (["check", GEMM, "--arg", "Q=3"], "argument --arg: Q is not a parameter of any kernel"),
        (["check", GEMM, "--arg", "M=-5"], "argument --arg: M=-5: a kernel size cannot be negative"),
        (["check", GEMM, "--arg", "M"], "argument --arg: expected K=V"),
        (["check", GEMM, "-j", "-3"], "argument -j/--jobs: must be at least 1"),
        (["check", GEMM, "--timeout", "0"], "argument --timeout: must be a positive number of seconds"),
        (["check", GEMM, "--memory", "0"], "argument --memory: 0 MiB is too little"),
        (["check", GEMM, "--memory", "10"], "argument --memory: 10 MiB is too little for the compiler worker"),
        (["check", GEMM, "--kernel", "nope"], "argument --kernel: no kernel 'nope' (found: matmul)"),
        (["check", GEMM, "--python", "/no/such/python"], "argument --python: no interpreter"),
        (["run", GEMM, "--timeout", "-1"], "argument --timeout"),
        (["run", GEMM, "--arg", "Q=3"], "argument --arg: Q is not a parameter"),
        (["variants", GEMM, "--targets", "sm_80,sm_999"], "argument --targets: unknown target 'sm_999'"),
        (["variants", GEMM, "-j", "0"], "argument -j/--jobs"),
        (["layout", GEMM, "--target", "sm_999"], "argument --target"),
        (["graph", GEMM, "--arg", "block_M=-64"], "argument --arg: block_M=-64: a kernel size cannot be negative"),
        (["trace", GEMM, "--text", "--arg", "Q=3"], "argument --arg: Q is not a parameter"),
        (["record", "--timeout", "0", "--", "true"], "argument --timeout"),
    ],
)
def test_a_bad_value_is_a_usage_error(command: list[str], words: str) -> None:
    done = tilescope(*command, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("usage: tilescope " + command[0]), done.stderr
    assert f"tilescope {command[0]}: error: {words}" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_version_answers_with_short_and_long_option() -> None:
    for flag in ("-V", "--version"):
        done = tilescope(flag)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("tilescope ") and "TileLang" in done.stdout


def test_python_is_a_global_option_too(tmp_path) -> None:
    done = tilescope("--python", "/no/such/python", "check", GEMM)
    assert done.returncode == 2 and "argument --python: no interpreter" in done.stderr
