"""Without a GPU, TileLang's C target runs the element-wise puzzles: a reference passes, and
wrong solutions fail for the right reason (a write past the end, a dropped ragged tail)."""

from __future__ import annotations

import dataclasses

from tilescope.core import Analyzer
from tilescope.puzzles import catalog, grader


def _only(p: catalog.Puzzle, case: str) -> catalog.Puzzle:
    return dataclasses.replace(p, cases=[c for c in p.cases if c.name == case], seeds=1, hidden=None)


def test_cpu_puzzles_are_marked_for_the_c_target() -> None:
    assert {p.id for p in catalog.puzzles() if p.cpu} == {"01", "02", "03", "04", "05"}


def test_reference_passes_on_the_c_target(analyzer: Analyzer) -> None:
    p = _only(catalog.get(5), "tiny")
    report = grader.grade_cpu(p, p.solution_path, analyzer=analyzer, ptxas=False)
    assert report.passed, report.summary
    assert report.cases and all(c.passed for c in report.cases)
    assert any("C target" in item for item in report.checked)
    assert any("performance" in item for item in report.not_checked)


def test_unmasked_store_is_caught_by_the_guard_region(analyzer: Analyzer) -> None:
    p = _only(catalog.get(1), "odd")
    report = grader.grade_cpu(p, p.folder / "wrong" / "unmasked.py", analyzer=analyzer, ptxas=False)
    assert report.failure == "out-of-bounds"
    guard = report.cases[0].outputs[0].guard
    assert guard.after == 256 - 37 and guard.first_after == 0
    assert "wrote outside B" in report.summary


def test_dropped_tail_names_the_first_unwritten_element(analyzer: Analyzer) -> None:
    p = _only(catalog.get(2), "ragged")
    report = grader.grade_cpu(p, p.folder / "wrong" / "drop_tail.py", analyzer=analyzer, ptxas=False)
    assert report.failure == "wrong-values"
    check = report.cases[0].outputs[0]
    assert check.comparison.first_wrong == [2048]
    assert check.comparison.wrong == 1 and check.unwritten == 1
    assert "B[2048]" in report.summary and "never written" in report.summary
