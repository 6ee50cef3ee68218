"""On a CUDA GPU: every reference passes every case (fixed, hidden, the timed shape) and meets its
target; every deliberately wrong solution fails for the stated reason on the stated case; the naive
transpose earns fewer stars than the lesson's; compute-sanitizer finds a planted store past the
end. Skipped without a GPU."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tilescope.puzzles import catalog, judge, sanitizer
from tilescope.puzzles.gpu_route import GpuRoute
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S, Session

PUZZLES = catalog.puzzles()
WRONG = [(p, w) for p in PUZZLES for w in p.wrong]


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    s = Session()
    yield s
    s.close()


@pytest.mark.gpu
@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_reference_passes_and_meets_its_target(puzzle: catalog.Puzzle, session: Session) -> None:
    report = judge.check(puzzle, puzzle.solution_path, GpuRoute(), session=session)
    assert report.passed, report.summary
    assert any(c.name == "timed" and c.passed for c in report.cases)
    assert report.perf is not None and report.perf.error is None and report.perf.stars == 3, report.summary
    if puzzle.perf.torch:  # torch's own version, timed in the same run
        assert report.perf.torch_us and report.perf.torch_ratio is not None, report.summary


@pytest.mark.gpu
@pytest.mark.parametrize(("puzzle", "wrong"), WRONG, ids=lambda x: getattr(x, "file", getattr(x, "id", "")))
def test_wrong_solution_fails_for_the_stated_reason(
    puzzle: catalog.Puzzle, wrong: catalog.WrongSolution, session: Session
) -> None:
    timeout = wrong.timeout_s or DEFAULT_TIMEOUT_S
    path = puzzle.folder / wrong.file
    route = GpuRoute(perf=wrong.case == "timed")
    report = judge.check(puzzle, path, route, session=session, timeout_s=timeout)
    assert not report.passed
    assert report.failure == wrong.expect, report.summary
    if wrong.case:
        bad = report.first_failure()
        assert bad is not None and bad.name == wrong.case, report.summary


@pytest.mark.gpu
def test_the_naive_transpose_does_not_earn_three_stars(session: Session) -> None:
    p = catalog.get(10)
    assert p.perf.baseline
    report = judge.check(p, p.folder / p.perf.baseline, GpuRoute(), session=session)
    assert report.passed and report.perf is not None and report.perf.speedup is not None
    assert report.stars < 3, report.summary


@pytest.mark.gpu
@pytest.mark.skipif(sanitizer.find_tool() is None, reason="compute-sanitizer is not installed")
def test_memcheck_finds_a_store_past_the_end(session: Session) -> None:
    p = catalog.get(1)
    report = judge.check(p, p.folder / "wrong" / "unmasked.py", GpuRoute(perf=False, sanitize=True), session=session)
    memcheck = next(f for f in report.sanitizer if f.tool == "memcheck")
    assert memcheck.errors > 0 and "invalid __global__" in memcheck.first[0].lower(), memcheck  # the read of A, first
    assert any("main_kernel" in line for line in memcheck.first), memcheck
    clean = judge.check(p, p.solution_path, GpuRoute(perf=False, sanitize=True), session=session)
    assert clean.passed and [f.errors for f in clean.sanitizer] == [0, 0], clean.checked


@pytest.mark.gpu
@pytest.mark.skipif(sanitizer.find_tool() is None, reason="compute-sanitizer is not installed")
def test_racecheck_finds_a_planted_shared_memory_race(session: Session) -> None:
    p = catalog.get(6)
    route = GpuRoute(perf=False, sanitize=True)
    report = judge.check(p, p.folder / "wrong" / "shared_total_race.py", route, session=session)
    racecheck = next(f for f in report.sanitizer if f.tool == "racecheck")
    print(racecheck)
    assert report.failure == "wrong-values" and racecheck.errors > 0 and "race" in racecheck.first[0].lower(), racecheck
    assert any("main_kernel" in line for line in racecheck.first), racecheck
