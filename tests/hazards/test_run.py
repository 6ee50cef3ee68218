"""``tilescope run`` on any kernel file: the file's own ``ref_program``, and who wrote what is wrong."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.compiler.service import Analyzer

FIXTURES = Path(__file__).resolve().parents[2] / "benchmarks" / "hazards" / "fixtures"


def test_run_compares_with_ref_program_and_names_the_writer(analyzer: Analyzer) -> None:
    report = analyzer.run(str(FIXTURES / "uninit_tail_tile.py"))
    assert report.error is None and report.reference == "ref_program"
    (c,) = report.comparisons
    assert c.wrong == 8 and c.first_wrong == [192]
    assert report.culprits and report.culprits[0].startswith("B[192] is ")
    assert "thread 0 of block (3,) at line 21" in report.culprits[0]


def test_run_reports_a_race_across_blocks(analyzer: Analyzer) -> None:
    report = analyzer.run(str(FIXTURES / "race_splitk_copy.py"))
    assert [(h.kind, h.buffer, h.second.line) for h in report.hazards] == [("data-race", "y", 23)]
    assert report.comparisons[0].wrong > 0


def test_a_correct_control_matches_its_reference(analyzer: Analyzer) -> None:
    report = analyzer.run(str(FIXTURES / "ok_copy_tail.py"))
    assert report.error is None and not report.hazards and not report.findings
    assert report.comparisons and report.comparisons[0].wrong == 0
