"""Timing the timed shape in the kernel process: the learner's kernel, then torch's own version and the
puzzle's baseline kernel on the same GPU in the same run, so that a busy or slow machine moves all
of them alike. Only medians of the kernel process's figures, each checked, reach ``perf_score``.
"""

from __future__ import annotations

import math
import statistics

from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.case_run import run_case
from tilescope.puzzles.cases import PlannedCase
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.children import Child
from tilescope.puzzles.manifest import verified_bytes
from tilescope.puzzles.perf_score import perf_result, traffic
from tilescope.puzzles.protocol import CompileRequest, TimeRequest
from tilescope.puzzles.replies import Violation, call, params_of
from tilescope.puzzles.report import PerfResult
from tilescope.puzzles.route import ProgressFn
from tilescope.puzzles.verdict import Param

TIMING_RUNS = 20


def time_case(
    puzzle: Puzzle,
    case: PlannedCase,
    params: list[Param],
    scopes: list[str],
    executor: Child,
    ws: Workspace,
    gpu: str,
    timeout_s: float,
    progress: ProgressFn,
) -> tuple[PerfResult, list[str]]:
    """The timed case's graded time, and what could not be compared (a baseline that failed)."""
    not_checked: list[str] = []
    learner_us = times(executor, case.key, timeout_s)
    baseline_us = torch_us = None
    if puzzle.perf.torch:
        progress("timing torch's own version")
        try:
            torch_us = times(executor, case.key, timeout_s, puzzle.perf.torch)
        except RuntimeError as err:
            not_checked.append(f"the comparison with torch ({err})")
    if puzzle.perf.baseline:
        progress(f"timing {puzzle.perf.baseline_name}")
        try:
            baseline_us = baseline_time(puzzle, executor, ws, timeout_s)
        except (RuntimeError, KeyError) as err:
            not_checked.append(f"the speed-up over {puzzle.perf.baseline_name} ({err})")
    perf = perf_result(puzzle, case.args, learner_us, traffic(params), gpu, baseline_us, scopes, torch_us)
    return perf, not_checked


def times(executor: Child, key: str, timeout_s: float, expr: str | None = None) -> float:
    """The median of the kernel's timed runs, or with ``expr`` of the torch baseline's on the same tensors."""
    request: TimeRequest = {"op": "time", "key": key, "warmup": 3, "runs": TIMING_RUNS}
    if expr is not None:
        request = {"op": "time-torch", "key": key, "warmup": 3, "runs": TIMING_RUNS, "expr": expr}
    reply = call(executor, request, timeout_s, {"timed", "run-error"})
    if reply["op"] == "run-error":
        raise RuntimeError(str(reply.get("message")))
    runs = reply.get("times_us")
    if not (isinstance(runs, list) and len(runs) == TIMING_RUNS):
        raise Violation("a timing answer with the wrong number of runs")
    if not all(isinstance(t, int | float) and math.isfinite(t) and t > 0 for t in runs):
        raise Violation("a timing answer with impossible times")
    return float(statistics.median(runs))


def baseline_time(puzzle: Puzzle, executor: Child, ws: Workspace, timeout_s: float) -> float:
    """The puzzle's baseline kernel, compiled from its own verified content, checked and timed in the same run."""
    assert puzzle.perf.baseline is not None
    path = puzzle.folder / puzzle.perf.baseline
    case = PlannedCase("baseline", puzzle.perf.args, "normal", 0, 7, "timed")
    source = verified_bytes(path).decode()
    request: CompileRequest = {
        "op": "compile",
        "key": case.key,
        "path": str(path),
        "source": source,
        "args": case.args,
        "device": "cuda",
    }
    reply = call(executor, request, timeout_s, {"compiled"})
    result = run_case(puzzle, case, params_of(reply), executor, ws, "cuda", timeout_s)
    if not result.passed:
        raise RuntimeError(f"the naive baseline failed its own check: {result.problem}")
    return times(executor, case.key, timeout_s)
