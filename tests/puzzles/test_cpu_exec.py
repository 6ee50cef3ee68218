"""Without a GPU, the kernel process runs the loader's PrimFunc through the tile interpreter on the
grader's buffers: a reference passes, and wrong solutions fail for the right reason (a store past
an output, a read past a shared tile, a dropped ragged tail, an accumulator never cleared)."""

from __future__ import annotations

import dataclasses

from tilescope.core.compiler.service import Analyzer
from tilescope.puzzles import catalog, judge
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.isolated import IsolatedGrader
from tilescope.puzzles.session import CheckOptions, Session


def _only(p: catalog.Puzzle, case: str) -> catalog.Puzzle:
    cases = [c for c in (p.cpu_cases or p.cases) if c.name == case]
    return dataclasses.replace(p, cases=cases, cpu_cases=None, seeds=1, hidden=None, cpu_hidden=None)


def test_a_reduction_reference_passes_through_the_interpreter(analyzer: Analyzer) -> None:
    p = _only(catalog.get(7), "ragged")
    report = judge.check(p, p.solution_path, CpuRoute(analyzer, ptxas=False))  # a check with helpers of its own
    assert report.passed, report.summary
    assert report.cases and all(c.passed for c in report.cases)
    assert any("tile interpreter" in item for item in report.checked)
    assert any("performance" in item for item in report.not_checked)


def test_unmasked_store_is_reported_by_the_interpreter_at_its_line(analyzer: Analyzer, session: Session) -> None:
    p = _only(catalog.get(1), "odd")
    path = p.folder / "wrong" / "unmasked.py"
    report = judge.check(p, path, CpuRoute(analyzer, ptxas=False), session=session)
    assert report.failure == "out-of-bounds"
    assert "line 12: out-of-bounds read of A[37] (shape 37), 219 elements" in report.summary
    line = int(report.summary.split("line ")[1].split(":")[0])
    assert "B[i] = A[i]" in path.read_text().splitlines()[line - 1]


def test_a_read_past_a_shared_tile_is_a_runtime_error(analyzer: Analyzer, session: Session) -> None:
    p = catalog.get(15)
    report = judge.check(
        _only(p, "short"), p.folder / "wrong" / "no_halo.py", CpuRoute(analyzer, ptxas=False), session=session
    )
    assert report.failure == "runtime-error", report.summary
    assert "out-of-bounds read of" in report.summary


def test_dropped_tail_names_the_first_unwritten_element(analyzer: Analyzer, session: Session) -> None:
    p = _only(catalog.get(2), "ragged")
    report = judge.check(p, p.folder / "wrong" / "drop_tail.py", CpuRoute(analyzer, ptxas=False), session=session)
    assert report.failure == "wrong-values"
    check = report.cases[0].outputs[0]
    assert check.comparison.first_wrong == [2048]
    assert check.comparison.wrong == 1 and check.unwritten == 1
    assert "B[2048]" in report.summary and "never written" in report.summary


def test_an_accumulator_never_cleared_gives_wrong_values(analyzer: Analyzer, session: Session) -> None:
    p = _only(catalog.get(12), "tall")
    report = judge.check(p, p.folder / "wrong" / "no_clear.py", CpuRoute(analyzer, ptxas=False), session=session)
    assert report.failure == "wrong-values", report.summary


def test_a_machine_without_a_gpu_interprets_by_default(monkeypatch) -> None:
    p = _only(catalog.get(4), "ragged")
    monkeypatch.setattr(catalog, "get", lambda _: p)
    with IsolatedGrader(keep_spare=False, cpu_only=True) as grader:
        report = grader.check(p.id, p.solution_path, CheckOptions(perf=False))
    assert report.passed, report.summary
    assert any("tile interpreter" in item for item in report.checked)
    assert report.checked[0] == "lowered for sm_90 for every test shape"


def test_what_the_interpreter_cannot_run_is_a_diagnostic_at_its_line(
    analyzer: Analyzer, session: Session, tmp_path
) -> None:
    p = _only(catalog.get(1), "odd")
    path = tmp_path / "per_thread.py"
    path.write_text(
        "import tilelang.language as T\n"
        "\n"
        "\n"
        "def kernel(N, block_N=256, dtype='float32'):\n"
        "    @T.prim_func\n"
        "    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype)):\n"
        "        with T.Kernel(1, threads=block_N):\n"
        "            tx = T.get_thread_binding()\n"
        "            for j in T.Parallel(block_N):\n"
        "                if j < N:\n"
        "                    B[j] = A[tx]\n"
        "\n"
        "    return main\n"
    )
    report = judge.check(p, path, CpuRoute(analyzer, ptxas=False), session=session)
    assert not report.passed
    assert [d.code for d in report.diagnostics] == ["not-interpretable"], report.summary
