"""The grader's verdicts on the CPU, through the real loader and kernel processes (the tile interpreter
runs the kernels, as CPU grading does): forged reports, hangs, exits, crashes and memory hogs get
their real reason, stray writes are counted exactly, and hidden cases are fresh for every check yet
reproducible from the report's seed. (The guard bands' counts on a GPU: ``test_buffers``, ``test_gpu``.)"""

from __future__ import annotations

import dataclasses
import time

import pytest
from tilescope.puzzles import catalog, judge, replies
from tilescope.puzzles.cases import TIMED, fresh_seed, plan
from tilescope.puzzles.cpu_route import CpuRoute
from tilescope.puzzles.perf_score import perf_result, perf_words
from tilescope.puzzles.report import Report
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S, Session

INTERPRETER = CpuRoute(lower=False)
"""The interpreter's run alone: these tests are about the exchange with the loader and the kernel process."""


def _only(number: int, case: str) -> catalog.Puzzle:
    p = catalog.get(number)
    return dataclasses.replace(p, cases=[c for c in p.cases if c.name == case], seeds=1, hidden=None)


def _check(session: Session, p: catalog.Puzzle, wrong: str, **kw: object) -> Report:
    return judge.check(p, p.folder / "wrong" / wrong, INTERPRETER, session=session, **kw)  # type: ignore[arg-type]


def test_a_forged_report_is_never_accepted(session: Session) -> None:
    report = _check(session, _only(1, "odd"), "forged_report.py")
    assert not report.passed and report.failure == "protocol-violation"
    assert "private channel" in report.summary and "void" in report.summary


def test_a_file_that_never_loads_is_answered_within_the_limit(session: Session) -> None:
    start = time.monotonic()
    report = _check(session, _only(1, "odd"), "never_loads.py", timeout_s=3)
    assert report.failure == "timeout" and report.exit is not None and report.exit.timed_out
    assert "within the 3 s limit" in report.summary
    assert 3 <= time.monotonic() - start < 3 + 60  # the file's own 3 s; the loader's start is not taken from them
    assert DEFAULT_TIMEOUT_S == 60


def test_the_helpers_start_is_not_the_files_time() -> None:
    """A fresh session's helpers import torch and TileLang (longer than this limit on any machine); a correct
    file still passes with ``timeout_s=4``: the limit is the file's own time, not the grader's start."""
    p = _only(1, "odd")
    fresh = Session(cpu_only=True, keep_spare=False)
    try:
        report = judge.check(p, p.solution_path, INTERPRETER, session=fresh, timeout_s=4)
    finally:
        fresh.close()
    assert report.passed, report.summary


def test_an_exit_at_import_reports_its_status(session: Session) -> None:
    report = _check(session, _only(1, "odd"), "exit_at_import.py")
    assert report.failure == "child-exit" and report.exit is not None
    assert (report.exit.process, report.exit.status, report.exit.signal) == ("loader", 3, None)
    assert "exited with status 3" in report.summary


def test_a_crash_at_import_reports_its_signal(session: Session) -> None:
    report = _check(session, _only(1, "odd"), "segfault_at_import.py")
    assert report.failure == "child-exit" and report.exit is not None
    assert report.exit.signal == "SIGSEGV" and "SIGSEGV" in report.summary


def test_a_huge_allocation_is_out_of_memory_at_its_line(session: Session) -> None:
    p = _only(1, "odd")
    report = _check(session, p, "huge_alloc_at_import.py")
    assert report.failure == "out-of-memory", report.summary
    line = report.diagnostics[0].span.line
    assert "bytearray(60 << 30)" in (p.folder / "wrong" / "huge_alloc_at_import.py").read_text().splitlines()[line - 1]


def test_every_element_written_past_the_end_is_counted(session: Session) -> None:
    report = _check(session, _only(2, "ragged"), "double_length.py")
    assert report.failure == "out-of-bounds"
    assert "out-of-bounds write to B[2049] (shape 2049), 2048 elements" in report.summary  # from the first past the end


def test_writes_ten_kilobytes_past_the_end_are_found(session: Session) -> None:
    report = _check(session, _only(3, "tiny"), "far_past_end.py")
    assert report.failure == "out-of-bounds"
    assert "out-of-bounds write to C[2565] (shape 5), 256 elements" in report.summary  # 2560 past the end


def test_hidden_cases_run_and_their_seed_is_reported(session: Session) -> None:
    p = dataclasses.replace(catalog.get(1), seeds=1)
    report = judge.check(p, p.solution_path, INTERPRETER, session=session, seed=1234)
    assert report.passed, report.summary
    assert report.seed == 1234
    hidden = [c for c in report.cases if c.name.startswith("hidden")]
    assert len(hidden) == p.hidden.count and all(c.seed == 1234 for c in hidden)  # type: ignore[union-attr]


def test_hidden_cases_are_fresh_for_each_check_and_reproducible() -> None:
    p = catalog.get(12)
    seeds = {fresh_seed() for _ in range(8)}
    assert len(seeds) > 1
    shapes = {repr(plan(p, s, timed=False)[-1].args) for s in seeds}
    assert len(shapes) > 1
    assert plan(p, 99, timed=False) == plan(p, 99, timed=False)
    for s in seeds:
        for case in (c for c in plan(catalog.get(17), s, timed=False) if c.kind == "hidden"):
            assert case.args["K"] % 32 == 0 and 32 <= case.args["K"] <= 1536


def test_the_timed_shape_is_checked_last_and_only_with_timing() -> None:
    p = catalog.get(2)
    cases = plan(p, 5, timed=True)
    assert cases[-1].name == TIMED and cases[-1].args == p.perf.args
    assert all(c.name != TIMED for c in plan(p, 5, timed=False))


def test_a_time_above_the_roofline_is_a_measurement_error() -> None:
    p = catalog.get(2)
    n_bytes = 2 * 4 * p.perf.args["N"]
    bogus = perf_result(p, p.perf.args, 6.0, n_bytes, "NVIDIA H200", None)
    assert bogus.error and "measurement error" in bogus.error and bogus.stars == 0 and bogus.percent > 100
    report = Report(puzzle="02", path="x", device="NVIDIA H200", passed=True, summary="", perf=bogus)
    assert report.stars == 0
    honest = perf_result(p, p.perf.args, 133.0, n_bytes, "NVIDIA H200", None)
    assert honest.error is None and honest.stars == 3 and 70 < honest.percent < 100


def test_the_transpose_target_is_a_speedup_over_the_naive_version() -> None:
    p = catalog.get(10)
    args = p.perf.args
    n_bytes = 2 * 4 * args["M"] * args["N"]
    as_fast = perf_result(p, args, 300.0, n_bytes, "NVIDIA H200", baseline_us=300.0)
    assert as_fast.speedup == 1.0 and as_fast.stars < 3
    quick = 300.0 * (p.perf.speedup or 1.0)
    faster = perf_result(p, args, 200.0, n_bytes, "NVIDIA H200", quick, scopes=["local.fragment", "shared.dyn"])
    assert faster.stars == 3 and faster.capped is None
    no_lesson = perf_result(p, args, 200.0, n_bytes, "NVIDIA H200", quick, scopes=["local.fragment"])
    assert no_lesson.stars == 2 and no_lesson.capped and "shared" in no_lesson.capped


def test_the_transpose_lesson_is_seen_in_the_kernels_allocations() -> None:
    from tilescope.puzzles import runner

    p = catalog.get(10)
    scopes = {}
    for path in (p.solution_path, p.folder / str(p.perf.baseline)):
        func = runner.build(str(path), path.read_text(), {"M": 100, "N": 150})
        scopes[path.name] = runner.storage_scopes(func)
    assert "shared.dyn" in scopes["solution.py"] and not any(s.startswith("shared") for s in scopes["baseline.py"])


def test_a_message_that_answers_nothing_is_a_violation() -> None:
    with pytest.raises(replies.Violation):
        replies.expect({"id": "someone-else", "op": "ran"}, "mine", {"ran"})
    with pytest.raises(replies.Violation):
        replies.expect('{"passed": true', "mine", {"ran"})
    assert replies.expect({"id": "mine", "op": "ran"}, "mine", {"ran"})["op"] == "ran"


def test_stars_are_graded_against_torch_in_the_same_run() -> None:
    p = catalog.get(6)
    args = p.perf.args
    n_bytes = 4 * args["M"] * args["N"] + 4 * args["M"]
    target = p.perf.torch_target or 0.0
    assert p.perf.torch and target > 1.0
    level = perf_result(p, args, 160.0, n_bytes, "NVIDIA H200", None, torch_us=160.0)
    assert level.torch_ratio == 1.0 and level.torch_us == 160.0 and level.stars == 3
    assert level.percent is not None and level.torch_target == target  # the roofline share is still shown
    slow = perf_result(p, args, 160.0 * target * 1.5, n_bytes, "NVIDIA H200", None, torch_us=160.0)
    assert slow.stars == 2 and slow.torch_ratio is not None and slow.torch_ratio > target
    crawl = perf_result(p, args, 160.0 * target * 3, n_bytes, "NVIDIA H200", None, torch_us=160.0)
    assert crawl.stars == 1
    words = perf_words(level)
    assert "torch" in words and "1.00×" in words and "roofline" in words


def test_without_a_torch_time_the_roofline_grades() -> None:
    p = catalog.get(17)
    p = dataclasses.replace(p, perf=dataclasses.replace(p.perf, torch=None, torch_target=None))
    args = p.perf.args
    flops = 2 * args["M"] * args["N"] * args["K"]
    time_us = flops / (989e12 * p.perf.target / 100) * 1e6 * 0.99  # just over the target share
    result = perf_result(p, args, time_us, 0, "NVIDIA H200", None)
    assert result.torch_ratio is None and result.stars == 3


def test_the_transpose_needs_both_torch_and_the_naive_speed_up() -> None:
    p = catalog.get(10)
    args = p.perf.args
    n_bytes = 2 * 4 * args["M"] * args["N"]
    quick = 300.0 * (p.perf.speedup or 1.0)
    scopes = ["shared.dyn"]
    both = perf_result(p, args, 300.0, n_bytes, "NVIDIA H200", quick, scopes, torch_us=450.0)
    assert both.stars == 3
    slower_than_torch = perf_result(p, args, 300.0, n_bytes, "NVIDIA H200", quick, scopes, torch_us=150.0)
    assert slower_than_torch.stars == 2


def test_the_untiled_gemm_is_graded_against_the_best_unpipelined_kernel() -> None:
    """Puzzle 12 forbids pipelining, so cuBLAS is out of its reach: three stars are measured against the best
    kernel its lesson allows, timed in the same run; torch's time is shown, not graded."""
    p = catalog.get(12)
    assert p.perf.baseline == "best_unpipelined.py" and p.perf.torch_target is None and p.perf.speedup
    args = p.perf.args
    best = 350.0
    within = perf_result(p, args, best * 1.2, 0, "NVIDIA H200", best, torch_us=180.0)
    assert within.stars == 3 and within.torch_ratio is not None and within.torch_ratio > 2
    slower = perf_result(p, args, best * 1.5, 0, "NVIDIA H200", best, torch_us=180.0)
    assert slower.stars == 2
    words = perf_words(within)
    assert "the best unpipelined kernel's speed (three stars at ≤ 1.25× the best unpipelined kernel's time" in words


@pytest.mark.parametrize(
    ("number", "args"), [(16, {"batch": 1, "heads": 2, "seq_len": 40, "dim": 64}), (17, {"M": 24, "N": 40, "K": 64})]
)
def test_the_torch_comparison_computes_what_the_reference_does(number: int, args: dict[str, int]) -> None:
    """16 is timed against SDPA as called (torch picks the backend), 17 against dequantising then ``torch.matmul``:
    each must be the puzzle's own operation, or the stars would compare different work."""
    import torch
    from tilescope.puzzles.timing import torch_baseline

    p = catalog.get(number)
    ref = p.reference()
    inputs = ref.inputs(args, torch.Generator().manual_seed(1), "normal", "cpu")
    (want,) = ref.reference(*[t.clone() for t in inputs])
    out = torch.empty_like(want)
    got = torch_baseline(p.perf.torch or "")(*inputs, out)
    got = out if got is None or number == 17 else got.transpose(1, 2)
    assert torch.allclose(got.float(), want.float(), atol=2e-2, rtol=1e-2)
