"""TileLang's Ascend examples: no static error on any kernel plain TileLang 0.1.15 lowers, and the
errors on the others at a line, in words, where 0.1.15 refuses them.

``ascend_truth.json`` is the truth, written by ``ascend_truth.py`` (its docstring says how): for each
kernel the file builds at its own sizes, whether plain TileLang lowers it for ``ascend`` and where it
fails otherwise.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import pytest
from tilescope.core.model import Diagnostic
from tilescope.core.static import analyze_source

HERE = Path(__file__).resolve().parent
CORPUS = Path(
    os.environ.get("TILESCOPE_ASCEND_CORPUS", HERE.parents[1] / ".." / "shared" / "corpus" / "tilelang-ascend-examples")
)
TRUTH: dict[str, dict[str, dict[str, object]]] = json.loads((HERE / "ascend_truth.json").read_text())
NOT_STATIC = {
    "examples/ascend/example_gemm_mix_manual.py": "tl.MaterializeScheduleUnits refuses its hand-written "
    "cross-core flags ('Inter-core synchronization inside T.Task must be the task's only statement'), about "
    "the tasks the pass itself forms: only lowering shows it",
}
"""Files plain TileLang refuses for a reason the source alone does not show."""

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="the Ascend examples corpus is not beside the repository")


@functools.cache
def errors() -> dict[str, list[Diagnostic]]:
    found = {}
    for path in sorted(CORPUS.rglob("*.py")):
        static = analyze_source(path.read_text(), str(path))
        found[str(path.relative_to(CORPUS))] = [d for d in static.diagnostics if d.severity == "error"]
    return found


def _refused(name: str) -> bool:
    return any(kernel["lowered"] is False for kernel in TRUTH.get(name, {}).values())


def test_no_static_error_on_a_file_plain_tilelang_does_not_refuse() -> None:
    assert len(errors()) == 30 and len(TRUTH) >= 25
    assert sum(k["lowered"] is True for kernels in TRUTH.values() for k in kernels.values()) >= 26
    wrong = [
        f"{name}:{d.span.line} {d.message}" for name, found in errors().items() if not _refused(name) for d in found
    ]
    assert wrong == []


def test_every_refused_file_has_an_error_at_the_line_tilelang_names() -> None:
    for name, kernels in TRUTH.items():
        if not _refused(name) or name in NOT_STATIC:
            continue
        found = errors()[name]
        assert found, f"{name}: plain TileLang refuses it ({kernels}) and the static tier says nothing"
        lines = {d.span.line for d in found}
        for kernel in kernels.values():
            if kernel["lowered"] is False and kernel["line"] is not None:
                assert kernel["line"] in lines, (name, kernel, sorted(lines))


def test_errors_are_at_a_line_of_the_file_and_in_words() -> None:
    for name, found in errors().items():
        count = len((CORPUS / name).read_text().splitlines())
        for d in found:
            assert 1 <= d.span.line <= count and d.code and len(d.message.split()) > 8 and "{" not in d.message
