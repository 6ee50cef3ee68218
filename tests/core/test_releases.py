"""The compiler tier on every supported TileLang release, each in its own interpreter.

``.ci/releases`` prepares ``.venv-releases/<version>/``: a venv with only that TileLang (and the
apache-tvm-ffi it imports with), no Tilescope. A release absent locally is skipped; CI prepares all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tilescope.core.compat.releases import interpreter_version
from tilescope.core.compiler.service import Analyzer
from tilescope.core.sandbox.spawn import module_command

REPO = Path(__file__).resolve().parents[2]
ENVS = Path(os.environ.get("TILESCOPE_RELEASES", REPO / ".venv-releases"))
RELEASES = ["0.1.10", "0.1.11", "0.1.12", "0.1.13", "0.1.14", "0.1.15"]
EXAMPLES = REPO / "examples"
FIXTURES = REPO / "tests" / "core" / "fixtures"

# TileLang's own tl.ProducerConsumerWarpSpecialized fails on the int4 GEMM's pipelined
# dequantisation in 0.1.10 and 0.1.11 ("Cannot find role for stmt"); 0.1.12 and later lower it.
LOWER_FAILS = {("0.1.10", "dequant_gemm.py"), ("0.1.11", "dequant_gemm.py")}


def _python(release: str) -> str:
    python = ENVS / release / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{python} is absent: run .ci/releases")
    return str(python)


@pytest.fixture(scope="module", params=RELEASES)
def release(request: pytest.FixtureRequest) -> tuple[str, Analyzer]:
    python = _python(request.param)
    with Analyzer(python=python, timeout_s=120) as analyzer:
        yield request.param, analyzer


def test_the_environment_has_that_release_and_no_tilescope(release: tuple[str, Analyzer], tmp_path: Path) -> None:
    version, analyzer = release
    assert interpreter_version(analyzer.python) == version
    probe = "import importlib.util; print(importlib.util.find_spec('tilescope'))"
    found = subprocess.run([analyzer.python, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "None"


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_examples(release: tuple[str, Analyzer], example: str) -> None:
    version, analyzer = release
    result = analyzer.analyze(str(EXAMPLES / example))
    (kernel,) = result.kernels
    assert kernel.buffers and all(b.line for b in kernel.buffers), kernel.buffers
    assert kernel.launch is not None and kernel.launch.threads == 128 and kernel.launch.span is not None
    if (version, example) in LOWER_FAILS:
        (error,) = kernel.diagnostics
        assert error.code == "compile-error" and "tl.ProducerConsumerWarpSpecialized" in error.message
        return
    assert len(kernel.passes) >= 50
    assert not kernel.diagnostics, kernel.diagnostics
    assert any(p.name == "tl.LayoutInference" for p in kernel.passes)
    if example == "gemm.py":
        c_local = kernel.layout("C_local")
        assert c_local is not None and c_local.kind == "fragment" and c_local.thread_extent == 128
        assert kernel.layout("A_shared") is not None and kernel.launch.threads_after_ws == 256
        assert [(p.loop_var, p.num_stages, p.line) for p in kernel.pipelines] == [("k", 3, 20)]


def test_diagnostics_at_the_users_line(release: tuple[str, Analyzer]) -> None:
    _, analyzer = release
    (build,) = analyzer.analyze(str(FIXTURES / "gemm_wrong_shape.py")).kernels[0].diagnostics
    assert (build.code, build.span.line) == ("build-error", 19)
    (layout,) = analyzer.analyze(str(FIXTURES / "layout_conflict.py")).kernels[0].diagnostics
    assert (layout.code, layout.span.line) == ("layout-inference", 11)


def test_the_command_line_analyses_with_another_interpreter(tmp_path: Path) -> None:
    """``--version`` and ``check --python`` name and use that interpreter's TileLang."""
    python = _python("0.1.14")
    tilescope = [sys.executable, "-m", "tilescope"]
    run = {"cwd": tmp_path, "capture_output": True, "text": True, "timeout": 600, "check": False}
    version = subprocess.run([*tilescope, "--python", python, "--version"], **run)
    assert version.stdout.splitlines()[1] == f"TileLang 0.1.14 ({python})"
    check = subprocess.run([*tilescope, "check", str(EXAMPLES / "gemm.py"), "--python", python], **run)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "  compile  78 passes" in check.stdout
    assert (
        "C_local   128×128        float32  local.fragment     65536 B  line 18  fragment: 128 threads" in check.stdout
    )
    assert "A_shared  128×32         float16  shared.dyn          8192 B  line 16  layout 3×128×32" in check.stdout


def test_a_release_outside_the_range_is_a_diagnostic(tmp_path: Path) -> None:
    """An interpreter whose TileLang says 0.1.9: named and refused before TileLang is imported."""
    dist = tmp_path / "site" / "tilelang-0.1.9.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.9\n")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={tmp_path / "site"} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    with Analyzer(python=str(python)) as analyzer:
        result = analyzer.analyze(str(EXAMPLES / "gemm.py"))
    (diagnostic,) = result.all_diagnostics()
    assert diagnostic.code == "tilelang-version" and diagnostic.span.line == 8
    assert "TileLang 0.1.9 is not supported; Tilescope supports TileLang 0.1.10 to 0.1.15" in diagnostic.message


def test_a_worker_on_another_release_ignores_what_this_process_imported() -> None:
    """Importing TileLang here exports its library paths; a 0.1.12 worker must not load them."""
    import tilelang  # noqa: F401  (exports TVM_LIBRARY_PATH and PYTHONPATH for the installed release)

    with Analyzer(python=_python("0.1.12")) as analyzer:
        (kernel,) = analyzer.analyze(str(EXAMPLES / "gemm.py")).kernels
    assert not kernel.diagnostics and len(kernel.passes) == 70


def _old_python() -> str | None:
    for name in ("python3.9", "python3.8"):
        found = shutil.which(name)
        if found and subprocess.run([found, "-c", ""], capture_output=True, check=False).returncode == 0:
            return found
    return None


def test_an_interpreter_older_than_3_10_is_a_diagnostic() -> None:
    python = _old_python()
    if python is None:
        pytest.skip("no Python 3.9 or 3.8 on PATH")
    with Analyzer(python=python) as analyzer:
        (diagnostic,) = analyzer.analyze(str(EXAMPLES / "gemm.py")).all_diagnostics()
    assert diagnostic.code == "python-version" and "needs Python 3.10 or newer" in diagnostic.message


def test_children_ignore_the_working_directory(tmp_path: Path) -> None:
    """A workspace folder named like a Tilescope module does not shadow it in a child."""
    (tmp_path / "tilescope").mkdir()
    (tmp_path / "tilescope" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    command = module_command(sys.executable, "tilescope.core.cli.main", "--version")
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tilescope ")
    with Analyzer() as analyzer:
        os.chdir(tmp_path)
        try:
            result = analyzer.analyze(str(EXAMPLES / "elementwise_add.py"))
        finally:
            os.chdir(REPO)
    assert result.kernels and result.kernels[0].passes


def test_a_release_that_fails_to_import_is_a_diagnostic(tmp_path: Path) -> None:
    """A supported release whose import raises: the worker reports why instead of starting."""
    site = tmp_path / "site"
    dist = site / "tilelang-0.1.15.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.15\n")
    (site / "tilelang").mkdir()
    (site / "tilelang" / "__init__.py").write_text("raise ImportError('libtvm.so: cannot open shared object file')\n")
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    python.chmod(0o755)
    with Analyzer(python=str(python)) as analyzer:
        result = analyzer.analyze(str(EXAMPLES / "gemm.py"))
    (diagnostic,) = result.all_diagnostics()
    assert diagnostic.code == "tilelang-import" and diagnostic.span.line == 8
    assert "importing TileLang 0.1.15 failed: ImportError: libtvm.so" in diagnostic.message
