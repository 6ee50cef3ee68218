"""The one entry of every grading, on a GPU or on the CPU: ``check``, the only place a verdict is made.

The learner's Python runs in a fresh, sealed loader process (``loading``) whose only product is
PrimFuncs; a kernel process compiles and runs them on tensors this process owns (``case_run``); this
process checks the puzzle's content against its manifest before and after the learner's code ran
(``manifest``), computes the reference from verified bytes, reads back every byte and judges. Every
message from either process is checked against what was asked (``replies``): a line that answers
nothing voids the check, and no message can pass one. What differs between a GPU and the tile
interpreter is the ``route`` the caller hands in (``gpu_route``, ``cpu_route``); the judge calls it,
never the other way round.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.model import Span
from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.case_run import run_case
from tilescope.puzzles.cases import TIMED, PlannedCase, args_text, fresh_seed, plan
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.children import Child, ChildGone
from tilescope.puzzles.failures import exit_report, refused, unsealed, void
from tilescope.puzzles.loading import load
from tilescope.puzzles.manifest import ContentChanged, verify
from tilescope.puzzles.perf_run import time_case
from tilescope.puzzles.perf_score import perf_words
from tilescope.puzzles.protocol import CompileRequest
from tilescope.puzzles.replies import Violation, call, diagnostic_of, params_of
from tilescope.puzzles.report import CaseResult, PerfResult, Report
from tilescope.puzzles.route import Attempt, ProgressFn, Route, quiet
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S, Session
from tilescope.puzzles.verdict import Param


def check(
    puzzle: Puzzle,
    path: str | Path,
    route: Route,
    *,
    session: Session | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    seed: int | None = None,
    progress: ProgressFn = quiet,
) -> Report:
    """Check a solution file along ``route``; never raises for a bad solution.

    ``timeout_s`` is the file's own time: for loading it (all shapes), then for each compile and each run;
    the helpers' start is not counted (it has its own limit, ``READY_S``). Without a ``session`` the check
    starts its own helpers and ends them after it.
    """
    if session is not None:
        return _check(puzzle, str(Path(path).resolve()), route, session, timeout_s, seed, progress)
    own = Session(cpu_only=route.device == "interpret", keep_spare=False)
    try:
        return _check(puzzle, str(Path(path).resolve()), route, own, timeout_s, seed, progress)
    finally:
        own.close()


def _check(
    puzzle: Puzzle,
    path: str,
    route: Route,
    session: Session,
    timeout_s: float,
    seed: int | None,
    progress: ProgressFn,
) -> Report:
    """``check`` with its helpers at hand: the content verified, the file read, the helpers taken, the cases
    planned and the file loaded; each step's failure is its own report."""
    seed = fresh_seed() if seed is None else seed
    unknown: dict[str, Any] = {"puzzle": puzzle.id, "path": path, "device": "?", "seed": seed}
    try:
        verify(puzzle.folder)
        source = Path(path).read_text()
    except ContentChanged as changed:
        return refused(unknown, changed, "before the check")
    except (OSError, UnicodeDecodeError) as err:
        return Report(**unknown, passed=False, failure="compile-error", summary=f"the file cannot be read: {err}")
    try:
        builder = session.take_builder()
    except ChildGone as gone:
        return exit_report(unknown, gone, "starting", [])
    try:
        executor, hello = session.executor()
    except ChildGone as gone:
        builder.kill()
        return exit_report(unknown, gone, "starting", [])
    gpu = str(hello.get("gpu")) if route.device == "cuda" else "cpu"
    base: dict[str, Any] = {"puzzle": puzzle.id, "path": path, "device": gpu, "seed": seed}
    planned = plan(puzzle, seed, timed=route.timed, interpret=route.device == "interpret")
    keys = list(dict.fromkeys(c.key for c in planned))
    arg_sets = [next(c.args for c in planned if c.key == k) for k in keys]
    progress("loading the file")
    loaded = load(builder, path, source, keys, arg_sets, base, timeout_s)
    funcs = {} if isinstance(loaded, Report) else loaded
    attempt = Attempt(puzzle, path, source, base, planned, funcs, timeout_s, progress)
    return unsealed(_judge(attempt, loaded, route, session, executor), builder.sealed)


def _judge(
    attempt: Attempt, loaded: dict[str, str] | Report, route: Route, session: Session, executor: Child
) -> Report:
    """The report once the file's code ran: refused if it changed the content, else the run's (or the
    load's failure), finished by the route."""
    try:
        verify(attempt.puzzle.folder)  # the file's code ran: only a sealed loader is sure to have left it alone
    except ContentChanged as changed:
        return refused(attempt.base, changed, "after the file's code ran")
    if isinstance(loaded, Report):
        return route.finish(loaded, attempt)
    route.prepare(session, attempt)
    try:
        report = _run(attempt, session, executor, route)
    except ContentChanged as changed:
        return refused(attempt.base, changed, "while the reference loaded")
    return route.finish(report, attempt)


def _compile(attempt: Attempt, case: PlannedCase, executor: Child, device: str) -> dict[str, Any] | Report:
    """The kernel process's ``compiled`` answer for ``case``'s kernel, or the report of its compile error."""
    request: CompileRequest = {
        "op": "compile",
        "key": case.key,
        "prim_func": attempt.funcs[case.key],
        "path": attempt.path,
        "device": device,
    }
    reply = call(executor, request, attempt.timeout_s, {"compiled", "compile-error"})
    if reply["op"] == "compiled":
        return reply
    d = diagnostic_of(reply.get("diagnostic")) if reply.get("diagnostic") else None
    d = d or diagnostic("compile-error", Span(1), form="not_kernel", error=reply.get("message"))
    summary = f"line {d.span.line}: {d.message}"
    return Report(**attempt.base, passed=False, failure="compile-error", diagnostics=[d], summary=summary)


def _run(attempt: Attempt, session: Session, executor: Child, route: Route) -> Report:
    """Every planned case in turn, until one fails: compile each kernel once, run and judge each case,
    then time the timed shape."""
    puzzle, device, timeout_s, progress = attempt.puzzle, route.device, attempt.timeout_s, attempt.progress
    results: list[CaseResult] = []
    params: dict[str, list[Param]] = {}
    scopes: dict[str, list[str]] = {}
    perf: PerfResult | None = None
    not_checked: list[str] = []
    ws = Workspace()
    doing = "starting"
    try:
        for case in attempt.planned:
            if case.key not in params:
                doing = f"compiling for {args_text(case.args)}"
                progress(doing)
                compiled = _compile(attempt, case, executor, device)
                if isinstance(compiled, Report):
                    return compiled
                params[case.key] = params_of(compiled)
                scopes[case.key] = [str(x) for x in compiled.get("scopes") or []]
            doing = f"running case {case.name} ({args_text(case.args)})"
            progress(doing)
            result = run_case(puzzle, case, params[case.key], executor, ws, device, timeout_s)
            results.append(result)
            if result.failure == "runtime-error":
                session.drop_executor()
            if not result.passed:
                break
            if case.name == TIMED:
                doing = f"timing at {args_text(case.args)}"
                progress(doing)
                gpu = attempt.base["device"]
                perf, missed = time_case(
                    puzzle, case, params[case.key], scopes[case.key], executor, ws, gpu, timeout_s, progress
                )
                not_checked.extend(missed)
    except ChildGone as gone:
        session.drop_executor()
        return exit_report(attempt.base, gone, doing, results)
    except Violation as violation:
        session.drop_executor()
        return void(attempt.base, "kernel process", violation, results)
    finally:
        ws.close()
    return _summarise(attempt.base, device, results, perf, not_checked)


def _summarise(
    base: dict[str, Any],
    device: str,
    results: list[CaseResult],
    perf: PerfResult | None,
    not_checked: list[str],
) -> Report:
    """The verdict on every case that ran: the first failure, or a pass with its graded time."""
    bad = next((r for r in results if not r.passed), None)
    hidden = sum(1 for r in results if r.name.startswith("hidden"))
    where = "on the GPU" if device == "cuda" else "on the CPU through the tile interpreter, every access checked"
    checked = [f"{len(results)} case runs {where} against the torch reference ({hidden} hidden), guarded"]
    if bad is not None:
        summary = f"case {bad.name} ({args_text(bad.args)}, {bad.values} values, seed {bad.seed}): {bad.problem}"
        return Report(**base, passed=False, failure=bad.failure, summary=summary, cases=results, checked=checked)
    summary = f"all {len(results)} case runs match the reference"
    if perf is not None:
        checked.append("the timed shape's outputs, then its time against the roofline")
        summary += "; " + perf_words(perf)
    elif device == "cuda":
        not_checked.append("performance (not asked for)")
    else:
        not_checked.append("performance: it needs a CUDA GPU")
    return Report(
        **base, passed=True, summary=summary, cases=results, perf=perf, checked=checked, not_checked=not_checked
    )
