"""The grader's side of a check: the only place a verdict is made.

The learner's Python runs in a fresh, sealed loader process (``seal``) whose only product is
PrimFuncs; a kernel process compiles and runs them on tensors this process owns (``buffers``); this
process checks the puzzle's content against its manifest before and after the learner's code ran
(``manifest``), computes the reference from verified bytes, reads back every byte and judges. Every
message from either process is checked against what was asked: a line that answers nothing voids
the check, and no message can pass one.

It is one module over 400 lines on purpose: the whole exchange of a check, and every validation of
what crosses a process boundary, reads in one place, where a gap would be seen.
"""

from __future__ import annotations

import json
import math
import secrets
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import torch
from tilescope.core.model import Diagnostic, Span, from_json
from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.cases import TIMED, PlannedCase, fresh_seed, plan
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.children import Child, ChildGone
from tilescope.puzzles.manifest import ContentChanged, verified_bytes, verify
from tilescope.puzzles.protocol import BuildPuzzleRequest, CompileRequest, ExecutorRequest, RunCaseRequest, TimeRequest
from tilescope.puzzles.render import speedup_words
from tilescope.puzzles.report import CaseResult, ChildExit, FailureKind, PerfResult, Report
from tilescope.puzzles.session import DEFAULT_TIMEOUT_S, READY_S, Session
from tilescope.puzzles.timing import datasheet_roofline, stars
from tilescope.puzzles.verdict import (
    Param,
    bounds_verdict,
    check_output,
    first_failure,
    judge_inputs,
    judge_output,
    parse_findings,
    signature_problem,
)

ProgressFn = Callable[[str], None]
TIMING_RUNS = 20


def _quiet(_: str) -> None:
    return None


class Violation(Exception):
    """A message that answers nothing the grader asked."""


class BuildFailed(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _expect(reply: dict[str, Any] | str, rid: str, ops: set[str]) -> dict[str, Any]:
    if not isinstance(reply, dict):
        raise Violation(f"a line that is no message: {reply[:120]!r}")
    if reply.get("id") != rid or reply.get("op") not in ops:
        raise Violation(f"a message that answers nothing it asked: {json.dumps(reply)[:160]}")
    return reply


def _call(child: Child, request: ExecutorRequest, timeout_s: float, ops: set[str]) -> dict[str, Any]:
    """The child's answer to ``request``, checked to answer it; the child runs user code, so each
    field of the answer is checked where it is read."""
    rid = secrets.token_hex(8)
    child.send({"id": rid, **request})
    return _expect(child.receive(timeout_s), rid, ops)


def _diagnostic(data: Any) -> Diagnostic:
    try:
        diagnostic = from_json(Diagnostic, data)
        if isinstance(diagnostic, Diagnostic) and isinstance(diagnostic.message, str):
            return diagnostic
    except Exception:
        pass
    raise Violation(f"a malformed diagnostic: {json.dumps(data)[:160]}")


def build(builder: Child, path: str, source: str, arg_sets: list[dict[str, int]], timeout_s: float) -> list[str]:
    """PrimFunc JSON per argument set, from a fresh loader. Its own start (importing TileLang) may take
    ``READY_S``; the file's code then gets ``timeout_s`` for all the sets. Raises BuildFailed, ChildGone
    or Violation."""
    try:
        hello = builder.receive(READY_S)
    except ChildGone as gone:
        if gone.timed_out:
            gone.reason = f"did not start within {READY_S:g} s"
        raise
    if not isinstance(hello, dict) or hello.get("op") != "ready":
        raise Violation(f"no greeting but {str(hello)[:120]!r}")
    built: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        rid = secrets.token_hex(8)
        build_request: BuildPuzzleRequest = {
            "id": rid,
            "op": "build",
            "path": path,
            "source": source,
            "arg_sets": arg_sets,
        }
        builder.send(build_request)
        while True:
            reply = _expect(builder.receive(deadline - time.monotonic()), rid, {"built", "build-error", "done"})
            if reply["op"] == "done":
                break
            if reply.get("index") != len(built) or len(built) >= len(arg_sets):
                raise Violation(f"an answer out of turn: {json.dumps(reply)[:160]}")
            if reply["op"] == "build-error":
                raise BuildFailed(_diagnostic(reply.get("diagnostic")))
            if not isinstance(reply.get("prim_func"), str):
                raise Violation("a build answer without a kernel")
            built.append(reply["prim_func"])
    except ChildGone as gone:
        if gone.timed_out:
            gone.reason = f"did not finish within the {timeout_s:g} s limit"
        raise
    if len(built) != len(arg_sets):
        raise Violation(f"'done' after {len(built)} of {len(arg_sets)} kernels")
    return built


def _describe(args: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in args.items())


def _result(case: PlannedCase, **fields: Any) -> CaseResult:
    return CaseResult(case.name, case.args, case.values, case.seed, **fields)


def run_case(
    puzzle: Puzzle,
    case: PlannedCase,
    params: list[Param],
    executor: Child,
    ws: Workspace,
    device: str,
    timeout_s: float,
    *,
    sanitized: bool = False,
) -> CaseResult:
    """Lend the case's tensors, have the kernel process run it, and judge what it left in them. The kernel
    process first leaves garbage in registers and shared memory (a cuBLAS GEMM) and the buffers have guard
    zones, except in a ``sanitized`` run: compute-sanitizer watches the bounds itself, and should see the
    learner's kernel alone."""
    ref = puzzle.reference()
    on_gpu = case.kind == "timed" and device == "cuda"  # the timed shape's inputs are large: make them there
    gen = torch.Generator(device="cuda" if on_gpu else "cpu").manual_seed(case.data_seed)
    inputs = ref.inputs(case.args, gen, case.values, device if on_gpu else "cpu")
    host = "cpu" if device == "interpret" else device
    expected = list(ref.reference(*[t.clone().to(host) for t in inputs]))
    bug = reference_bug(puzzle.outputs, expected)
    if bug:
        return _result(case, passed=False, failure="reference-bug", problem=bug)
    problem = signature_problem(params, [*inputs, *expected])
    if problem:
        return _result(case, passed=False, failure="signature", problem=problem)
    names = [p.name for p in params]
    in_bufs = [
        ws.buffer(n, tuple(t.shape), t.dtype, case.data_seed + i, guarded=not sanitized)
        for i, (n, t) in enumerate(zip(names, inputs, strict=False))
    ]
    for buf, t in zip(in_bufs, inputs, strict=True):
        buf.fill(t)
    out_bufs = [
        ws.buffer(n, tuple(e.shape), e.dtype, case.data_seed + 100 + i, guarded=not sanitized)
        for i, (n, e) in enumerate(zip(names[len(inputs) :], expected, strict=True))
    ]
    for buf in out_bufs:
        buf.poison_body()
    specs = [b.spec.to_json() for b in (*in_bufs, *out_bufs)]
    request: RunCaseRequest = {"op": "run", "key": case.key, "buffers": specs, "device": device, "dirty": not sanitized}
    if device == "interpret":
        request["outputs"] = names[len(inputs) :]
    reply = _call(executor, request, timeout_s, {"ran", "run-error"})
    if reply["op"] == "run-error":
        problem = f"The kernel failed: {reply.get('message')}"
        return _result(case, passed=False, failure="runtime-error", problem=problem)
    for buf in (*in_bufs, *out_bufs):
        buf.load(host)
    if device == "interpret":
        try:
            findings = parse_findings(reply.get("findings"))
        except (ValueError, TypeError, KeyError) as err:
            raise Violation(f"an interpreted run's answer with {err}") from err
        verdict = bounds_verdict(findings, set(names))
        if verdict:
            return _result(case, passed=False, failure=verdict[0], problem=verdict[1])
    checks = [
        check_output(n, e, b, puzzle.tolerance) for n, e, b in zip(puzzle.outputs, expected, out_bufs, strict=True)
    ]
    verdict = first_failure([v for c in checks if (v := judge_output(c))]) or judge_inputs(
        names[: len(inputs)], in_bufs, inputs
    )
    if verdict:
        return _result(case, passed=False, outputs=checks, failure=verdict[0], problem=verdict[1])
    return _result(case, passed=True, outputs=checks)


def reference_bug(names: list[str], expected: list[torch.Tensor]) -> str | None:
    """A NaN in the reference's own output: the puzzle's bug, never a learner's pass (NaN is the poison)."""
    for name, tensor in zip(names, expected, strict=False):
        if tensor.is_floating_point() and bool(tensor.isnan().any()):
            where = ", ".join(str(int(i)) for i in torch.nonzero(tensor.isnan())[0])
            count = int(tensor.isnan().sum())
            return (
                f"The puzzle's reference computed NaN for {name}[{where}] ({count} of {tensor.numel()} elements): "
                "a bug in the reference, not in your kernel; this case cannot be graded."
            )
    return None


def _times(executor: Child, key: str, timeout_s: float, expr: str | None = None) -> float:
    """The median of the kernel's timed runs, or with ``expr`` of the torch baseline's on the same tensors."""
    request: TimeRequest = {"op": "time", "key": key, "warmup": 3, "runs": TIMING_RUNS}
    if expr is not None:
        request = {"op": "time-torch", "key": key, "warmup": 3, "runs": TIMING_RUNS, "expr": expr}
    reply = _call(executor, request, timeout_s, {"timed", "run-error"})
    if reply["op"] == "run-error":
        raise RuntimeError(str(reply.get("message")))
    times = reply.get("times_us")
    if not (isinstance(times, list) and len(times) == TIMING_RUNS):
        raise Violation("a timing answer with the wrong number of runs")
    if not all(isinstance(t, int | float) and math.isfinite(t) and t > 0 for t in times):
        raise Violation("a timing answer with impossible times")
    return float(statistics.median(times))


def perf_result(
    puzzle: Puzzle,
    args: dict[str, int],
    time_us: float,
    n_bytes: int,
    gpu: str,
    baseline_us: float | None,
    scopes: list[str] | None = None,
    torch_us: float | None = None,
) -> PerfResult:
    """Grade a time: against torch's time in the same run where the puzzle names a torch baseline (and
    against the naive version's where it names one, both to be met), else against the roofline. A figure
    above the roofline is a measurement error and earns nothing, and a kernel that does not use the
    lesson's technique (``requires``) earns at most two stars."""
    spec, ref = puzzle.perf, puzzle.reference()
    flops = int(ref.flops(args)) if hasattr(ref, "flops") else 0
    peak = datasheet_roofline(gpu)
    error = None
    achieved, ceiling, percent = time_us, 0.0, None
    if spec.bound != "latency":
        achieved = (flops if spec.bound == "compute" else n_bytes) / (time_us * 1e-6)
        if peak is None:
            error = f"no roofline is known for {gpu}"
        else:
            ceiling = peak.tensor_flops if spec.bound == "compute" else peak.bandwidth
            percent = round(100.0 * achieved / ceiling, 1)
            if percent > 100.0:
                error = f"{percent:.0f}% of the {spec.bound} roofline cannot be: a measurement error, not graded"
    speedup = None if baseline_us is None else round(baseline_us / time_us, 2)
    capped = None
    if spec.requires and scopes is not None and not any(s.startswith(spec.requires) for s in scopes):
        capped = f"the kernel allocates no {spec.requires} memory, the technique this puzzle teaches"
    ratio = None if torch_us is None else round(time_us / torch_us, 3)
    scores = []
    if ratio is not None and spec.torch_target:
        scores.append(spec.torch_target / ratio)
    if speedup is not None and spec.speedup:
        scores.append(speedup / spec.speedup)
    if scores:
        score = min(scores)
    elif spec.bound == "latency":
        score = spec.target / time_us
    else:
        score = (percent or 0.0) / spec.target
    return PerfResult(
        args=args,
        time_us=round(time_us, 2),
        bytes=n_bytes,
        flops=flops,
        bound=spec.bound,
        achieved=achieved,
        roofline=ceiling,
        percent=percent,
        target=spec.speedup if speedup is not None and spec.speedup else spec.target,
        stars=0 if error else min(stars(score), 2) if capped else stars(score),
        gpu=gpu,
        roofline_source="datasheet" if peak else "none",
        error=error,
        baseline_us=None if baseline_us is None else round(baseline_us, 2),
        speedup=speedup,
        capped=capped,
        torch_us=None if torch_us is None else round(torch_us, 2),
        torch_ratio=ratio,
        torch_target=spec.torch_target if ratio is not None else None,
        baseline_name=spec.baseline_name if speedup is not None else None,
    )


def _baseline_time(puzzle: Puzzle, executor: Child, ws: Workspace, timeout_s: float) -> float:
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
    reply = _call(executor, request, timeout_s, {"compiled"})
    params = [Param(p["name"], tuple(p["shape"]), p["dtype"]) for p in reply["params"]]
    result = run_case(puzzle, case, params, executor, ws, "cuda", timeout_s)
    if not result.passed:
        raise RuntimeError(f"the naive baseline failed its own check: {result.problem}")
    return _times(executor, case.key, timeout_s)


def exit_report(base: dict[str, Any], gone: ChildGone, doing: str, cases: list[CaseResult]) -> Report:
    failure: FailureKind = "timeout" if gone.timed_out else "child-exit"
    who = "The loader (it runs your file's Python)" if gone.role == "loader" else "The kernel process"
    summary = f"{who} {gone.reason} while {doing}."
    if gone.stderr:
        summary += " Its last stderr line: " + gone.stderr[-1][:300]
    exit_info = ChildExit(gone.role, gone.status, gone.signal_name, gone.timed_out, gone.stderr)
    return Report(**base, passed=False, failure=failure, summary=summary, cases=cases, exit=exit_info)


def _void(base: dict[str, Any], who: str, violation: Violation, cases: list[CaseResult]) -> Report:
    summary = (
        f"The {who}'s private channel carried {violation}. Only code that process ran could have written it; "
        "nothing sent there can pass a check, and this check is void."
    )
    return Report(**base, passed=False, failure="protocol-violation", summary=summary, cases=cases)


def check(
    puzzle: Puzzle,
    path: str | Path,
    session: Session,
    *,
    device: Literal["cuda", "interpret"] | None = None,
    perf: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    seed: int | None = None,
    sanitize: bool = False,
    progress: ProgressFn = _quiet,
) -> Report:
    """Check a solution file; never raises for a bad solution. ``device`` defaults to the GPU if any.

    ``timeout_s`` is the file's own time: for loading it (all shapes), then for each compile and each run;
    the helpers' start is not counted (it has its own limit, ``READY_S``). ``sanitize`` also runs one small
    case under compute-sanitizer's memcheck and racecheck (GPU only).
    """
    path = str(Path(path).resolve())
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
    device = device or ("cuda" if hello.get("cuda") else "interpret")
    gpu = str(hello.get("gpu")) if device == "cuda" else "cpu"
    base: dict[str, Any] = {"puzzle": puzzle.id, "path": path, "device": gpu, "seed": seed}
    planned = plan(puzzle, seed, timed=perf and device == "cuda", interpret=device == "interpret")
    keys = list(dict.fromkeys(c.key for c in planned))
    arg_sets = [next(c.args for c in planned if c.key == k) for k in keys]
    progress("loading the file")
    loaded = _load(builder, path, source, keys, arg_sets, base, timeout_s)
    try:
        verify(puzzle.folder)  # the file's code ran: only a sealed loader is sure to have left it alone
    except ContentChanged as changed:
        return refused(base, changed, "after the file's code ran")
    if isinstance(loaded, Report):
        return _unsealed(loaded, builder)
    funcs = loaded
    _precompile(session, planned, funcs, path, device)
    try:
        report = _run(puzzle, path, session, executor, funcs, planned, device, base, timeout_s, progress)
    except ContentChanged as changed:
        return refused(base, changed, "while the reference loaded")
    checkable = (None, "wrong-values", "non-finite", "out-of-bounds", "runtime-error")
    if sanitize and device == "cuda" and report.failure in checkable:
        report = _sanitized(puzzle, path, report, planned, funcs, timeout_s, progress)
    return _unsealed(report, builder)


def refused(base: dict[str, Any], changed: ContentChanged, when: str) -> Report:
    """No grade: the puzzle's content is not what was built, so no verdict against it would mean anything."""
    summary = (
        f"The puzzle's installed content differs from its build-time manifest {when} ({changed}); "
        "the check is refused. Reinstall Tilescope to restore it."
    )
    return Report(**base, passed=False, failure="content-modified", summary=summary)


def _unsealed(report: Report, builder: Child) -> Report:
    """The report, saying so when the file's code ran without the file sandbox (no Landlock here)."""
    import dataclasses

    from tilescope.puzzles.seal import NOT_SEALED

    if builder.sealed:
        return report
    return dataclasses.replace(report, not_checked=[*report.not_checked, NOT_SEALED])


def _load(
    builder: Child,
    path: str,
    source: str,
    keys: list[str],
    arg_sets: list[dict[str, int]],
    base: dict[str, Any],
    timeout_s: float,
) -> dict[str, str] | Report:
    """PrimFunc JSON by case key, or the report of why the file could not be loaded."""
    try:
        return dict(zip(keys, build(builder, path, source, arg_sets, timeout_s), strict=True))
    except BuildFailed as failed:
        d = failed.diagnostic
        kind: FailureKind = "out-of-memory" if d.code == "out-of-memory" else "compile-error"
        return Report(**base, passed=False, failure=kind, diagnostics=[d], summary=f"line {d.span.line}: {d.message}")
    except ChildGone as gone:
        return exit_report(base, gone, "loading the file", [])
    except Violation as violation:
        return _void(base, "loader", violation, [])
    finally:
        builder.kill()  # used once: nothing it holds is worth waiting for


def _precompile(session: Session, planned: list[PlannedCase], funcs: dict[str, str], path: str, device: str) -> None:
    """Hand the hidden shapes (new for every check, so never in TileLang's cache) to the helper, last first:
    it compiles them while the kernel process runs the fixed cases, and the kernel process's own compile
    of each is then a cache hit. Its answers are never read: nothing it says reaches a verdict."""
    helper = session.helper() if device == "cuda" else None
    if helper is None:
        return
    fixed = {c.key for c in planned if c.kind != "hidden"}
    hidden = list(dict.fromkeys(c.key for c in planned if c.kind == "hidden" and c.key not in fixed))
    for key in reversed(hidden):
        request: CompileRequest = {"op": "compile", "key": key, "prim_func": funcs[key], "path": path, "device": device}
        try:
            helper.send({"id": secrets.token_hex(8), **request})
        except ChildGone:
            return


def _run_once(
    puzzle: Puzzle, case: PlannedCase, prim_func: str, path: str, child: Child, ws: Workspace, timeout_s: float
) -> None:
    """Compile and run ``case`` once in a fresh executor ``child`` (one a sanitizer wraps)."""
    from tilescope.puzzles.session import READY_S

    hello = child.receive(READY_S)
    if not isinstance(hello, dict) or hello.get("op") != "ready":
        raise Violation("no greeting")
    request: CompileRequest = {
        "op": "compile",
        "key": case.key,
        "prim_func": prim_func,
        "path": path,
        "lineinfo": True,
        "device": "cuda",
    }
    reply = _call(child, request, timeout_s, {"compiled", "compile-error"})
    if reply["op"] == "compiled":
        params = [Param(p["name"], tuple(p["shape"]), p["dtype"]) for p in reply["params"]]
        run_case(puzzle, case, params, child, ws, "cuda", timeout_s, sanitized=True)


def _sanitized(
    puzzle: Puzzle,
    path: str,
    report: Report,
    planned: list[PlannedCase],
    funcs: dict[str, str],
    timeout_s: float,
    progress: ProgressFn,
) -> Report:
    """The report with memcheck's and racecheck's word on one small case; an error they find fails it."""
    import dataclasses

    from tilescope.puzzles import sanitizer

    exe = sanitizer.find_tool()
    if exe is None:
        missing = "memcheck and racecheck: compute-sanitizer is not installed on this machine"
        return dataclasses.replace(report, not_checked=[*report.not_checked, missing])
    case = sanitizer.small_case(planned)
    budget = max(timeout_s, 120.0)
    findings, checked, not_checked = [], list(report.checked), list(report.not_checked)
    for tool in sanitizer.TOOLS:
        progress(f"{tool} on case {case.name}")
        try:
            finding = sanitizer.run_tool(
                tool, exe, lambda child, ws: _run_once(puzzle, case, funcs[case.key], path, child, ws, budget)
            )
        except (ChildGone, Violation) as err:
            not_checked.append(f"{tool} on case {case.name}: the tool's run did not finish ({err})")
            continue
        findings.append(finding)
        words = f"{finding.errors} errors" if finding.errors else "no errors"
        checked.append(f"{tool} on case {case.name} ({_describe(case.args)}): {words}")
    report = dataclasses.replace(report, sanitizer=findings, checked=checked, not_checked=not_checked)
    bad = next((f for f in findings if f.errors), None)
    if bad is None or not report.passed:
        return report
    failure: FailureKind = "race" if bad.tool == "racecheck" else "out-of-bounds"
    summary = f"{bad.tool} on case {case.name} ({_describe(case.args)}): " + "; ".join(bad.first[:3])
    return dataclasses.replace(report, passed=False, failure=failure, summary=summary, perf=None)


def _run(
    puzzle: Puzzle,
    path: str,
    session: Session,
    executor: Child,
    funcs: dict[str, str],
    planned: list[PlannedCase],
    device: str,
    base: dict[str, Any],
    timeout_s: float,
    progress: ProgressFn,
) -> Report:
    results: list[CaseResult] = []
    params: dict[str, list[Param]] = {}
    scopes: dict[str, list[str]] = {}
    perf_out: PerfResult | None = None
    not_checked: list[str] = []
    ws = Workspace()
    doing = "starting"
    try:
        for case in planned:
            if case.key not in params:
                doing = f"compiling for {_describe(case.args)}"
                progress(doing)
                compile_request: CompileRequest = {
                    "op": "compile",
                    "key": case.key,
                    "prim_func": funcs[case.key],
                    "path": path,
                    "device": device,
                }
                reply = _call(executor, compile_request, timeout_s, {"compiled", "compile-error"})
                if reply["op"] == "compile-error":
                    d = _diagnostic(reply.get("diagnostic")) if reply.get("diagnostic") else None
                    d = d or Diagnostic("error", str(reply.get("message")), Span(1), "compile-error")
                    summary = f"line {d.span.line}: {d.message}"
                    return Report(**base, passed=False, failure="compile-error", diagnostics=[d], summary=summary)
                params[case.key] = [Param(p["name"], tuple(p["shape"]), p["dtype"]) for p in reply["params"]]
                scopes[case.key] = [str(x) for x in reply.get("scopes") or []]
            doing = f"running case {case.name} ({_describe(case.args)})"
            progress(doing)
            result = run_case(puzzle, case, params[case.key], executor, ws, device, timeout_s)
            results.append(result)
            if result.failure == "runtime-error":
                session.drop_executor()
            if not result.passed:
                break
            if case.name == TIMED:
                doing = f"timing at {_describe(case.args)}"
                progress(doing)
                n_bytes = _traffic(params[case.key])
                learner_us = _times(executor, case.key, timeout_s)
                baseline_us = torch_us = None
                if puzzle.perf.torch:
                    progress("timing torch's own version")
                    try:
                        torch_us = _times(executor, case.key, timeout_s, puzzle.perf.torch)
                    except RuntimeError as err:
                        not_checked.append(f"the comparison with torch ({err})")
                if puzzle.perf.baseline:
                    progress(f"timing {puzzle.perf.baseline_name}")
                    try:
                        baseline_us = _baseline_time(puzzle, executor, ws, timeout_s)
                    except (RuntimeError, KeyError) as err:
                        not_checked.append(f"the speed-up over {puzzle.perf.baseline_name} ({err})")
                perf_out = perf_result(
                    puzzle, case.args, learner_us, n_bytes, base["device"], baseline_us, scopes[case.key], torch_us
                )
    except ChildGone as gone:
        session.drop_executor()
        return exit_report(base, gone, doing, results)
    except Violation as violation:
        session.drop_executor()
        return _void(base, "kernel process", violation, results)
    finally:
        ws.close()
    return _summarise(puzzle, base, device, results, perf_out, not_checked)


def _traffic(params: list[Param]) -> int:
    """Bytes every parameter read or written once: the least any kernel can move."""
    from tilescope.puzzles.buffers import dtype_of

    return sum(math.prod(p.shape) * torch.empty((), dtype=dtype_of(p.dtype)).element_size() for p in params)


def _summarise(
    puzzle: Puzzle,
    base: dict[str, Any],
    device: str,
    results: list[CaseResult],
    perf_out: PerfResult | None,
    not_checked: list[str],
) -> Report:
    bad = next((r for r in results if not r.passed), None)
    hidden = sum(1 for r in results if r.name.startswith("hidden"))
    where = "on the GPU" if device == "cuda" else "on the CPU through the tile interpreter, every access checked"
    checked = [f"{len(results)} case runs {where} against the torch reference ({hidden} hidden), guarded"]
    if bad is not None:
        summary = f"case {bad.name} ({_describe(bad.args)}, {bad.values} values, seed {bad.seed}): {bad.problem}"
        return Report(**base, passed=False, failure=bad.failure, summary=summary, cases=results, checked=checked)
    summary = f"all {len(results)} case runs match the reference"
    if perf_out is not None:
        checked.append("the timed shape's outputs, then its time against the roofline")
        summary += "; " + perf_words(perf_out)
    elif device == "cuda":
        not_checked.append("performance (not asked for)")
    else:
        not_checked.append("performance: it needs a CUDA GPU")
    return Report(
        **base, passed=True, summary=summary, cases=results, perf=perf_out, checked=checked, not_checked=not_checked
    )


def perf_words(p: PerfResult) -> str:
    if p.error:
        return f"{p.time_us:.1f} µs: {p.error}"
    text = "★" * p.stars + "☆" * (3 - p.stars) + (f" ({p.capped})" if p.capped else "")
    if p.torch_ratio is not None:
        share = "" if p.percent is None else f", {p.percent:.0f}% of the {p.bound} roofline"
        name = p.baseline_name or "the baseline"
        naive = "" if p.speedup is None else f", {p.speedup:.2f}× {name}'s speed"
        if naive and not p.torch_target:
            naive += f" (three stars at {speedup_words(p.target, name)})"
        goal = f" (three stars at ≤ {p.torch_target:g}×)" if p.torch_target else ""
        return f"{p.time_us:.1f} µs, {p.torch_ratio:.2f}× torch's {p.torch_us:.1f} µs{goal}{share}{naive} {text}"
    if p.speedup is not None:
        name = p.baseline_name or "the baseline"
        return f"{p.time_us:.1f} µs, {p.speedup:.2f}× {name}'s speed (target {p.target:g}×) {text}"
    if p.percent is None:
        return f"{p.time_us:.1f} µs (target {p.target:g} µs) {text}"
    return f"{p.time_us:.1f} µs, {p.percent:.0f}% of the {p.bound} roofline (target {p.target:g}%) {text}"
