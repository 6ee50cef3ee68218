"""Without a GPU, every puzzle along the CPU route (``cpu_route``: the tile interpreter): the reference passes,
each wrong solution not aimed at the timed shape (``gpu_only``) fails with its declared kind, the untouched starter
fails, and each check takes at most 30 s (printed with ``-s``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tilescope.core.compiler.service import Analyzer
from tilescope.puzzles import catalog, judge
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.report import Report
from tilescope.puzzles.session import Session

PUZZLES = catalog.puzzles()
LIMIT_S = 30.0


def _grade(
    p: catalog.Puzzle, path: Path, session: Session, analyzer: Analyzer, timeout_s: float | None = None
) -> Report:
    start = time.perf_counter()
    route = CpuRoute(analyzer, ptxas=False)
    report = judge.check(p, path, route, session=session, seed=1, timeout_s=timeout_s or 60.0)
    seconds = time.perf_counter() - start
    print(f"{p.id} {path.relative_to(p.folder)}: {report.failure or 'passed'} in {seconds:.1f} s")
    assert seconds <= LIMIT_S, report.summary
    return report


@pytest.mark.slow
@pytest.mark.parametrize("p", PUZZLES, ids=[p.folder.name for p in PUZZLES])
def test_every_verdict_on_the_cpu(p: catalog.Puzzle, session: Session, analyzer: Analyzer) -> None:
    report = _grade(p, p.solution_path, session, analyzer)
    assert report.passed, report.summary
    assert not _grade(p, p.starter_path, session, analyzer).passed
    for wrong in p.wrong:
        if not wrong.gpu_only:
            report = _grade(p, p.folder / wrong.file, session, analyzer, wrong.timeout_s)
            assert report.failure == wrong.expect, (wrong.file, report.summary)
