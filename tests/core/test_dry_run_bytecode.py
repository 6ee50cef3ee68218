"""The dry run's ``python -O`` bytecode: the hook names the installed modules imported without it, and after the
run Tilescope compiles them with the program's interpreter, so the next run does not compile them again."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from tilescope.core.record.bytecode import compile_optimized, installed_sources
from tilescope.core.record.dry_run import dry_run

from tests.core.test_dry_run import SIZES


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILESCOPE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _package(site: Path) -> tuple[str, Path]:
    """A fresh package in a ``site-packages`` folder: its name and source."""
    name = f"tspkg_{uuid.uuid4().hex[:8]}"
    source = site / name / "__init__.py"
    source.parent.mkdir(parents=True)
    source.write_text("VALUE = 1\n")
    return name, source


def _optimized(source: Path) -> Path:
    """Where ``python -O`` reads the bytecode of ``source``."""
    return Path(importlib.util.cache_from_source(str(source), optimization=1))


def test_the_hook_names_installed_modules_imported_without_bytecode_for_python_O(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "site-packages"
    bare, bare_source = _package(site)
    compiled, compiled_source = _package(site)
    own = tmp_path / "own.py"
    own.write_text("VALUE = 2\n")
    subprocess.run([sys.executable, "-O", "-m", "py_compile", str(compiled_source)], check=True)
    assert _optimized(compiled_source).exists()
    script = (
        f"import sys; sys.path[:0] = [{str(site)!r}, {str(tmp_path)!r}]\n"
        f"import {bare}, {compiled}, own\n"
        "from tilescope.core.record.hook_program import uncompiled\n"
        "print(__import__('json').dumps(uncompiled()))\n"
    )
    done = subprocess.run([sys.executable, "-O", "-B", "-c", script], capture_output=True, text=True, check=True)
    named = json.loads(done.stdout)["uncompiled"]
    assert str(bare_source) in named
    assert str(compiled_source) not in named and str(own) not in named  # compiled already; not installed


def test_what_is_compiled_is_installed_python_source_and_python_O_reads_it(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "site-packages"
    _, source = _package(site)
    outside = tmp_path / "outside.py"
    outside.write_text("VALUE = 3\n")
    named = [str(source), str(outside), str(site / "missing.py"), "relative/site-packages/x.py", 7]
    assert installed_sources(named) == [str(source)]
    thread = compile_optimized(sys.executable, installed_sources(named))
    assert thread is not None
    thread.join(60)
    assert _optimized(source).exists() and not _optimized(outside).exists()
    assert compile_optimized(sys.executable, []) is None


@pytest.mark.slow
def test_after_a_dry_run_its_installed_imports_have_python_O_bytecode(tmp_path: Path) -> None:
    """The sealed run cannot write it; Tilescope writes it once the run has ended."""
    site = tmp_path / "lib" / "site-packages"
    name, source = _package(site)
    program = tmp_path / "sizes.py"
    program.write_text(f"import sys\nsys.path.insert(0, {str(site)!r})\nimport {name}\n" + SIZES.read_text())
    found = dry_run(str(program), python=sys.executable, memory_mb=6144)
    assert found is not None and found.instances, found
    deadline = time.monotonic() + 60
    while not _optimized(source).exists():
        assert time.monotonic() < deadline, "no python -O bytecode was written after the dry run"
        time.sleep(0.2)
