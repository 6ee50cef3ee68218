"""A command whose extra is not installed names the extra and the command that installs it, and exits 2: never a
traceback, and never a server that starts and then fails every grading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.environment import EXTRAS

from tests.conftest import EXAMPLES, ROOT

SOLUTION = ROOT / "puzzles" / "content" / "01_copy_one_block" / "solution.py"


def tilescope_without(hidden: tuple[str, ...], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``tilescope ARGS`` in an interpreter where ``hidden`` cannot be imported, as if never installed."""
    code = (
        "import sys\n"
        f"for name in {hidden!r}: sys.modules[name] = None\n"
        "sys.argv = ['tilescope', *sys.argv[1:]]\n"
        "from tilescope.core.cli.main import main\n"
        "sys.exit(main())\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )


CASES = [
    (("torch",), ("puzzles", "check", "01", str(SOLUTION), "--cpu"), "torch (the 'puzzles' extra)", "puzzles"),
    (("tilelang",), ("puzzles", "check", "01", str(SOLUTION), "--cpu"), "tilelang (the 'puzzles' extra)", "puzzles"),
    (("python_multipart",), ("puzzles", "serve", "--port", "9"), "python-multipart (the 'server' extra)", "server"),
    (("torch",), ("puzzles", "serve", "--port", "9"), "torch (the 'server' extra)", "server"),
    (("starlette",), ("puzzles", "serve", "--port", "9"), "starlette (the 'server' extra)", "server"),
    (("sqlalchemy",), ("puzzles", "serve", "--add-learner", "ada"), "sqlalchemy (the 'server' extra)", "server"),
    (("mcp",), ("mcp", "--root", "."), "mcp (the 'mcp' extra)", "mcp"),
    (("matplotlib",), ("layout", str(EXAMPLES / "gemm.py")), "matplotlib (the 'plots' extra)", "plots"),
    (("ray",), ("check", str(EXAMPLES / "gemm.py"), "--ray"), "tilescope check --ray needs ray", "cluster"),
    (("ray",), ("variants", str(EXAMPLES / "gemm.py"), "--ray"), "tilescope variants --ray needs ray", "cluster"),
]


@pytest.mark.parametrize(
    ("hidden", "args", "said", "extra"), CASES, ids=[" ".join(c[1][:2]) + "-" + c[0][0] for c in CASES]
)
def test_a_missing_extra_is_named_with_its_install_command(
    hidden: tuple[str, ...], args: tuple[str, ...], said: str, extra: str, tmp_path: Path
) -> None:
    done = tilescope_without(hidden, *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert f"-m pip install 'tilescope[{extra}]'" in done.stderr
    assert "Traceback" not in done.stderr


def test_issuing_a_token_needs_only_the_store(tmp_path: Path) -> None:
    """A teacher adds learners on a machine without torch or the page's form parser."""
    db = f"sqlite:///{tmp_path / 'class.db'}"
    done = tilescope_without(
        ("torch", "python_multipart", "ray"), "puzzles", "serve", "--db", db, "--add-learner", "ada", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1]


def test_each_extra_in_pyproject_brings_what_the_commands_ask_for() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, pairs in EXTRAS.items():
        names = {requirement.split(">")[0].split("=")[0].split("<")[0].strip() for requirement in declared[extra]}
        for _, distribution in pairs:
            assert distribution in names, f"the '{extra}' extra of pyproject.toml lacks {distribution}"
