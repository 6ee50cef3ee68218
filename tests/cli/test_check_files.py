"""``check`` over files as they come: undecodable ones are an error for that file while the others
go on, PEP 263 cookies are honoured, one JSON shape for one file or many, relative paths, the
TileLang release named, and the exit status 0 only when every file was analysed without an error."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from tilescope.core.compat import releases

from tests.cli.helpers import EXAMPLES, tilescope


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A kernel file, the same kernel in Latin-1 with its cookie, a file that is not UTF-8, a test file,
    a runner that imports the kernels (and a Triton reference) and a file that means to define one and does not."""
    shutil.copy(EXAMPLES / "elementwise_add.py", tmp_path / "add.py")
    latin = "# -*- coding: latin-1 -*-\n# café\n" + (EXAMPLES / "elementwise_add.py").read_text()
    (tmp_path / "latin.py").write_bytes(latin.encode("latin-1"))
    (tmp_path / "broken.py").write_bytes(b"import tilelang\n\n# caf\xe9\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_add.py").write_text("import tilelang\n\n\ndef test_add():\n    pass\n")
    runner = "import tilelang.testing\nimport triton\nimport add\n\n\n@triton.jit\ndef reference(x):\n    pass\n"
    (tmp_path / "regression_add.py").write_text(runner + "\n\nadd.main()\n")
    (tmp_path / "loose.py").write_text(
        "import tilelang.language as T\n\nwith T.Kernel(1, threads=32) as bx:\n    pass\n"
    )
    return tmp_path


@pytest.mark.parametrize("mode", [["--static"], ["-j", "2"]])
def test_an_undecodable_file_is_an_error_of_its_own_and_the_others_go_on(folder: Path, mode: list[str]) -> None:
    done = tilescope("check", ".", "--format", "json", *mode, cwd=folder)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    files = {f["path"]: f for f in json.loads(done.stdout)["files"]}
    assert sorted(files) == ["add.py", "broken.py", "latin.py", "loose.py", "regression_add.py", "tests/test_add.py"]
    (error,) = files["broken.py"]["diagnostics"]
    assert error["code"] == "io-error" and error["severity"] == "error" and error["span"]["line"] == 3
    assert "not valid utf-8" in error["message"]
    for name in ("add.py", "latin.py"):
        assert [k["name"] for k in files[name]["discovered"]] == ["elementwise_add"], name
        assert not [d for d in files[name]["diagnostics"] if d["severity"] == "error"], name
    if "--static" not in mode:
        assert [k["kernel"] for k in files["latin.py"]["kernels"]] == ["elementwise_add"]
        assert files["latin.py"]["kernels"][0]["passes"]
    assert files["tests/test_add.py"]["diagnostics"] == []  # no no-kernels warning on a test file in a folder


def test_in_a_folder_only_a_file_that_means_to_define_a_kernel_is_told_it_has_none(folder: Path) -> None:
    """TileLang's examples keep regression runners and utilities beside the kernels: valid files that
    define none. A file that launches ``T.Kernel`` outside any kernel is told."""
    done = tilescope("check", "--static", ".", "--format", "json", cwd=folder)
    files = {f["path"]: [d["code"] for d in f["diagnostics"]] for f in json.loads(done.stdout)["files"]}
    assert files["regression_add.py"] == [] and files["loose.py"] == ["no-kernels"]
    named = tilescope("check", "--static", "regression_add.py", cwd=folder)
    assert "regression_add.py:1: warning[no-kernels]" in named.stdout


def test_a_test_file_named_on_the_command_line_still_says_it_has_no_kernels(folder: Path) -> None:
    done = tilescope("check", "--static", "tests/test_add.py", cwd=folder)
    assert "tests/test_add.py:1: warning[no-kernels]" in done.stdout


def test_exit_status_is_zero_only_when_every_file_is_analysed_cleanly(folder: Path) -> None:
    (folder / "broken.py").unlink()
    done = tilescope("check", "--static", ".", cwd=folder)
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-1].startswith("tilescope check ok: 2 kernels read in 5 files")


def test_one_json_shape_for_one_file_or_many(folder: Path) -> None:
    one = json.loads(tilescope("check", "--static", "add.py", "--json", cwd=folder).stdout)
    many = json.loads(tilescope("check", "--static", "add.py", "latin.py", "--json", cwd=folder).stdout)
    assert one.keys() == many.keys() == {"schema_version", "tilelang_version", "tier", "files"}
    assert [f["path"] for f in one["files"]] == ["add.py"]
    assert [f["path"] for f in many["files"]] == ["add.py", "latin.py"]


def test_paths_are_relative_to_the_working_directory_and_the_header_names_the_release(folder: Path) -> None:
    done = tilescope("check", "--static", str(folder / "broken.py"), cwd=folder)
    assert str(folder) not in done.stdout
    assert "  broken.py:3: error[io-error]" in done.stdout
    header = done.stdout.splitlines()[0]
    assert header == f"tilescope check: TileLang {releases.installed_version()}, target sm_90, static tier only"
    compiled = tilescope("check", str(folder / "add.py"), cwd=folder)
    assert compiled.returncode == 0, compiled.stdout
    assert compiled.stdout.splitlines()[0] == f"tilescope check: TileLang {releases.installed_version()}, target sm_90"
    assert str(folder) not in compiled.stdout


def test_a_memory_limit_too_small_to_start_is_answered_at_once(folder: Path) -> None:
    started = time.monotonic()
    done = tilescope("check", "add.py", "--memory", "600", cwd=folder, timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 1, done.stdout + done.stderr
    # Where the limit bites first decides the words: TileLang's import (a MemoryError, or CPython's SystemError
    # when an allocation inside the import machinery fails), the worker's start, or its crash.
    said = ("MemoryError", "could not start", "error[worker-crash]", "error[tilelang-import]")
    assert any(words in done.stdout for words in said), done.stdout
    assert took < 60, took
