"""What a learner reads: NaN called NaN, each failure stated once, the reference solution never
counted as solving a puzzle, and ``start`` saying what to do next."""

from __future__ import annotations

import pytest
import torch
from tilescope.core.cli.main import main
from tilescope.puzzles import catalog, workspace
from tilescope.puzzles.compare import compare
from tilescope.puzzles.measures import GuardReport
from tilescope.puzzles.progress import ProgressStore
from tilescope.puzzles.render import report_lines
from tilescope.puzzles.report import CaseResult, OutputCheck, Report
from tilescope.puzzles.verdict import judge_output


def _failed(got: torch.Tensor) -> Report:
    """A report as the judge writes it for one case whose output is ``got`` instead of ones."""
    comparison = compare(torch.ones(4, 8), got, atol=1e-5, rtol=1e-5)
    output = OutputCheck("C", comparison, GuardReport(0, 0, None, None, 16))
    verdict = judge_output(output)
    assert verdict is not None
    case = CaseResult("tiny", {"N": 32}, "normal", 0, False, [output], verdict[0], verdict[1])
    summary = f"case tiny (N=32, normal values, seed 0): {verdict[1]}"
    return Report("03", "mine.py", "cpu", False, summary, cases=[case], failure=verdict[0])


def test_nan_is_reported_as_nan_not_as_an_infinite_error() -> None:
    got = torch.ones(4, 8)
    got[1, 2] = float("nan")
    text = "\n".join(report_lines(_failed(got)))
    assert "max abs error nan (1 NaN where numbers were due)" in text
    assert "inf" not in text


def test_each_failure_is_stated_once() -> None:
    got = torch.ones(4, 8)
    got[0, 3] = 2.0
    lines = report_lines(_failed(got))
    assert sum("C[0, 3]" in line or "first at [0, 3]" in line for line in lines) == 1, lines
    assert any(line.startswith("failed case: tiny") for line in lines)
    assert any("where C (4×8) is wrong" in line for line in lines)


def test_checking_the_reference_solution_does_not_mark_the_puzzle_solved(tmp_path) -> None:
    puzzle = catalog.get(3)
    copy = tmp_path / "mine.py"
    copy.write_text("# my answer\n" + puzzle.solution_path.read_text())
    assert workspace.is_solution_copy(puzzle, copy)
    assert not workspace.is_solution_copy(puzzle, puzzle.starter_path)
    store = ProgressStore()
    passed = Report(puzzle.id, str(copy), "cpu", True, "all cases pass")
    store.record(passed, counts=not workspace.is_solution_copy(puzzle, copy))
    status = store.status(puzzle.id)
    store.close()
    assert status.attempts == 1 and not status.solved


def test_start_says_where_the_file_is_and_what_comes_next(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["puzzles", "start", "3"]) == 0
    out = capsys.readouterr().out
    path = workspace.learner_path(catalog.get(3))
    assert f"your file is ready: {path}" in out
    assert "tilescope puzzles check 03" in out and "tilescope puzzles hint 03" in out
    assert main(["puzzles", "start", "3"]) == 0
    assert "your file is kept" in capsys.readouterr().out
