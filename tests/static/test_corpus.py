"""TileLang's own examples are valid code that runs upstream: the static tier must not call any of
it broken. Every file, zero error-severity and zero syntax diagnostics, every kernel found."""

from __future__ import annotations

import ast
import functools
import os
import warnings
from pathlib import Path

import pytest
from tilescope.core.static import StaticFile, analyze_source

CORPUS = Path(
    os.environ.get(
        "TILESCOPE_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples"
    )
)

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")


@functools.cache
def valid_files() -> list[Path]:
    found = []
    for path in sorted(CORPUS.rglob("*.py")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(path.read_text())
        except (SyntaxError, ValueError):
            continue
        found.append(path)
    return found


@functools.cache
def analysed() -> dict[Path, StaticFile]:
    return {path: analyze_source(path.read_text(), str(path)) for path in valid_files()}


def test_no_error_and_no_syntax_diagnostic_on_the_corpus() -> None:
    assert len(valid_files()) >= 280
    wrong = []
    for path, static in analysed().items():
        for d in static.diagnostics:
            if d.severity == "error" or d.code == "syntax-error":
                wrong.append(f"{path.relative_to(CORPUS)}:{d.span.line} [{d.code}] {d.message}")
    assert wrong == []


def test_multi_line_and_stacked_decorators_keep_their_kernel() -> None:
    path = CORPUS / "examples" / "deepseek_mla" / "example_mla_decode.py"
    text = path.read_text()
    (kernel,) = analyze_source(text, str(path)).kernels
    assert kernel.ref.name == "flashattn" and kernel.ref.style == "jit-factory"
    assert text.splitlines()[kernel.span.line - 1].startswith("def flashattn(")
    assert {d.buffer.name for d in kernel.buffers} >= {"Q_shared", "KV_shared", "acc_o"}


def test_triton_kernels_are_not_tilelang_kernels() -> None:
    triton_files = [p for p in valid_files() if "@triton.jit" in p.read_text()]
    assert triton_files
    for path in triton_files:
        text = path.read_text()
        names = {k.ref.name for k in analysed()[path].kernels}
        triton = {
            node.name
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef) and any("triton" in ast.unparse(d) for d in node.decorator_list)
        }
        assert not names & triton, path


def test_every_file_with_a_tilelang_kernel_yields_one() -> None:
    """A file that launches ``T.Kernel`` in a TileLang-decorated function must show that kernel."""
    missing = []
    for path in valid_files():
        text = path.read_text()
        if "T.Kernel(" not in text or ("@T.prim_func" not in text and "jit" not in text):
            continue
        if not analysed()[path].kernels:
            missing.append(str(path.relative_to(CORPUS)))
    assert missing == []


def test_no_example_runs_out_of_the_evaluation_budget() -> None:
    found = analysed().items()
    notes = [(p, d) for p, r in found for d in r.diagnostics if d.code == "not-evaluated"]
    noted = [f"{p.name}:{d.span.line}" for p, d in notes if " steps)" in d.message]  # the clock depends on the load
    assert noted == []
