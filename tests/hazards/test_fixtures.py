"""The hazard check on its planted-bug fixtures and correct controls, through the real worker.

Each planted fixture marks its bug's line with ``# planted: CODE``; a control has no mark and must
get no error of the hazard codes (it may get an information note, which is not an error).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from tilescope.core.codes import HAZARD_CODES
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import Diagnostic

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = sorted((ROOT / "benchmarks" / "hazards" / "fixtures").glob("*.py"))
_MARK = re.compile(r"#\s*planted:\s*([a-z-]+)")


def planted(path: Path) -> list[tuple[int, str]]:
    return [
        (number, m.group(1))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if (m := _MARK.search(line))
    ]


def hazard_diagnostics(analyzer: Analyzer, path: Path) -> list[Diagnostic]:
    result = analyzer.analyze(str(path))
    return [d for d in result.all_diagnostics() if d.code in HAZARD_CODES]


def test_there_are_at_least_twenty_planted_bugs_and_some_controls() -> None:
    bugs = [f for f in FIXTURES if planted(f)]
    controls = [f for f in FIXTURES if not planted(f)]
    assert len(bugs) >= 20 and len(controls) >= 8, (len(bugs), len(controls))
    assert {code for f in bugs for _, code in planted(f)} == set(HAZARD_CODES)


def test_every_planted_file_has_a_correct_twin() -> None:
    """A twin is a control whose docstring names the planted file (``twin_*`` are made from one each)."""
    controls = " ".join(ast.get_docstring(ast.parse(f.read_text())) or "" for f in FIXTURES if not planted(f))
    lacking = [f.name for f in FIXTURES if planted(f) and f.name not in controls]
    assert lacking == []


@pytest.mark.parametrize("path", [f for f in FIXTURES if planted(f)], ids=lambda p: p.stem)
def test_every_planted_bug_is_an_error_at_its_line(analyzer: Analyzer, path: Path) -> None:
    found = hazard_diagnostics(analyzer, path)
    for line, code in planted(path):
        hits = [d for d in found if d.code == code and d.severity == "error" and d.span.line == line]
        assert hits, (line, code, found)
        assert hits[0].witness and "block" in hits[0].witness, hits[0]
        if code in ("data-race", "missing-barrier"):
            assert hits[0].related, hits[0]


@pytest.mark.parametrize("path", [f for f in FIXTURES if not planted(f)], ids=lambda p: p.stem)
def test_no_control_gets_a_hazard_error(analyzer: Analyzer, path: Path) -> None:
    errors = [d for d in hazard_diagnostics(analyzer, path) if d.severity == "error"]
    assert not errors, errors


def test_a_suspicion_of_tilelangs_race_check_alone_stays_information(analyzer: Analyzer) -> None:
    found = hazard_diagnostics(analyzer, ROOT / "benchmarks" / "hazards" / "fixtures" / "ok_same_value.py")
    assert [(d.severity, d.code, d.span.line) for d in found] == [("information", "data-race", 17)]
    assert "TileLang's race check" in found[0].message


def test_a_race_between_blocks_on_made_up_lengths_is_a_note_naming_them(analyzer: Analyzer) -> None:
    """The blocks of a varlen kernel meet on rows only because the check made the lengths up."""
    found = hazard_diagnostics(analyzer, ROOT / "benchmarks" / "hazards" / "fixtures" / "ok_varlen_rows.py")
    assert [(d.severity, d.code, d.span.line) for d in found] == [("information", "data-race", 25)]
    assert found[0].witness and "depends on the values of Lengths, which the check made up" in found[0].witness


def test_the_check_says_which_blocks_ran_and_stops_on_its_budget(analyzer: Analyzer) -> None:
    path = ROOT / "benchmarks" / "hazards" / "fixtures" / "oob_tail_unguarded.py"
    model = analyzer.analyze(str(path)).kernels[0]
    assert model.hazard_check is not None
    assert model.hazard_check.grid == [4] and model.hazard_check.blocks == [[0], [1], [2], [3]]
    off = analyzer.analyze(str(path), hazards_s=0).kernels[0]
    assert off.hazard_check is None and not [d for d in off.diagnostics if d.code in HAZARD_CODES]


def test_the_race_names_both_threads_and_both_lines(analyzer: Analyzer) -> None:
    path = ROOT / "benchmarks" / "hazards" / "fixtures" / "barrier_scan_step.py"
    (d,) = [d for d in hazard_diagnostics(analyzer, path) if d.code == "missing-barrier"]
    assert "thread 1 (i=1)" in d.message.lower() and "thread 2 (i=2)" in d.message
    assert d.related[0].span.line == 21 and "reads S[1]" in d.related[0].message


def test_a_kernel_written_with_thread_indices_is_interpreted_thread_by_thread(analyzer: Analyzer) -> None:
    """A (32, 8) block that names threadIdx.x and threadIdx.y runs as 256 lanes, every block planned."""
    path = ROOT / "benchmarks" / "hazards" / "fixtures" / "ok_transpose_threads.py"
    model = analyzer.analyze(str(path)).kernels[0]
    assert model.hazard_check is not None and model.hazard_check.stopped is None, model.hazard_check
    assert model.hazard_check.blocks == [[0, 0], [0, 1], [1, 0], [1, 1]]
    run = analyzer.run(str(path))
    assert run.error is None and run.reference == "ref_program", run
    assert run.comparisons and all(c.wrong == 0 for c in run.comparisons), run.comparisons


SCALAR_GRID = """
import tilelang.language as T


def fill(N=1024):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), n: T.int32):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                A[bx * 128 + i] = 0.0

    return main
"""


def test_a_grid_sized_by_a_scalar_argument_is_not_interpreted_and_says_why(analyzer: Analyzer, tmp_path: Path) -> None:
    """The interpreter makes tensors, not scalars: a grid of ``ceildiv(n, 128)`` is unknown until the kernel runs."""
    path = tmp_path / "scalar_grid.py"
    path.write_text(SCALAR_GRID)
    (model,) = analyzer.analyze(str(path)).kernels
    assert model.hazard_check is not None and model.hazard_check.stopped is not None
    assert "blockIdx.x extent" in model.hazard_check.stopped, model.hazard_check.stopped
    assert "known only when it runs" in model.hazard_check.stopped
