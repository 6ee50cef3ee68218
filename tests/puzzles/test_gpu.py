"""On a CUDA GPU: every reference passes every case and meets its performance target, and every
deliberately wrong solution fails for the stated reason. Skipped without a GPU."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tilescope.puzzles import catalog
from tilescope.puzzles.isolated import IsolatedGrader

PUZZLES = catalog.puzzles()
WRONG = [(p, w) for p in PUZZLES for w in p.wrong]


@pytest.fixture(scope="module")
def gpu_grader() -> Iterator[IsolatedGrader]:
    with IsolatedGrader(timeout_s=300) as grader:
        yield grader


@pytest.mark.gpu
@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_reference_passes_and_meets_its_target(puzzle: catalog.Puzzle, gpu_grader: IsolatedGrader) -> None:
    report = gpu_grader.grade(puzzle.id, puzzle.solution_path, device="cuda")
    assert report.passed, report.summary
    assert report.perf is not None and report.perf.stars == 3, report.summary


@pytest.mark.gpu
@pytest.mark.parametrize(("puzzle", "wrong"), WRONG, ids=lambda x: getattr(x, "file", getattr(x, "id", "")))
def test_wrong_solution_fails_for_the_stated_reason(
    puzzle: catalog.Puzzle, wrong: catalog.WrongSolution, gpu_grader: IsolatedGrader
) -> None:
    report = gpu_grader.grade(puzzle.id, puzzle.folder / wrong.file, device="cuda", perf=False)
    assert not report.passed
    assert report.failure == wrong.expect, report.summary
