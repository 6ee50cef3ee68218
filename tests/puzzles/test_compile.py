"""Without a GPU: every reference lowers for sm_90 through the core, and the grader's compile-only
mode reports compile errors at the learner's line and signature mistakes in plain words."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from tilescope.core.compiler.service import Analyzer
from tilescope.puzzles import catalog, judge
from tilescope.puzzles.catalog import KERNEL_NAME
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.session import Session

PUZZLES = catalog.puzzles()


def _ragged_case(p: catalog.Puzzle) -> catalog.Case:
    return next((c for c in p.cases if c.name == "ragged"), p.cases[-1])


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_reference_lowers_for_sm90(puzzle: catalog.Puzzle, analyzer: Analyzer) -> None:
    args = _ragged_case(puzzle).args
    analysis = analyzer.analyze(str(puzzle.solution_path), kernel=KERNEL_NAME, args=args)
    errors = [d.message for d in analysis.all_diagnostics() if d.severity == "error"]
    assert not errors
    model = analysis.kernel(KERNEL_NAME)
    assert model is not None and model.launch is not None
    params = [b for b in model.buffers if b.is_param]
    assert len(params) == len(puzzle.outputs) + len(puzzle.reference().inputs(args, _gen(), "normal", "cpu"))


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _only(p: catalog.Puzzle, case: str) -> catalog.Puzzle:
    cases = [c for c in p.cases if c.name == case]
    return dataclasses.replace(p, cases=cases, hidden=None, cpu_cases=None, cpu_hidden=None)


def test_compile_error_is_reported_at_the_learners_line(analyzer: Analyzer, session: Session) -> None:
    p = catalog.get(12)
    path = p.folder / "wrong" / "b_tile_shape.py"
    report = judge.check(_only(p, "ragged"), path, CpuRoute(analyzer, ptxas=False), session=session)
    assert not report.passed and report.failure == "compile-error"
    d = report.diagnostics[0]
    assert "T.gemm(A_shared, B_shared, C_local)" in path.read_text().splitlines()[d.span.line - 1]
    assert "K shape check failed" in d.message
    assert report.summary.startswith(f"line {d.span.line}:")


def test_wrong_dtype_is_a_signature_failure_in_plain_words(analyzer: Analyzer, session: Session) -> None:
    p = catalog.get(3)
    report = judge.check(
        _only(p, "tiny"), p.folder / "wrong" / "half_precision.py", CpuRoute(analyzer, ptxas=False), session=session
    )
    assert report.failure == "signature"
    assert report.summary == "Parameter A is declared float16; the puzzle passes float32."


def test_cpu_mode_says_what_was_and_was_not_checked(analyzer: Analyzer, session: Session) -> None:
    p = catalog.get(13)
    report = judge.check(_only(p, "tiny"), p.solution_path, CpuRoute(analyzer, ptxas=False), session=session)
    assert report.passed, report.summary
    assert any("values on a GPU" in item for item in report.not_checked)
    assert any("performance" in item for item in report.not_checked)
    assert report.checked[0] == "lowered for sm_90 for every test shape"
    assert any("tile interpreter" in item for item in report.checked)
