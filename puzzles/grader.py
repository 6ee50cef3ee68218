"""Grade a puzzle solution: compile it, check its values against the torch reference over every
case and seed with guarded outputs, then time it against the roofline.

With a CUDA GPU everything runs on it. Without one, the core's analyzer lowers the kernel for
sm_90 (and runs ptxas when it is installed), TileLang's C target runs the puzzles it can, and
the report lists what could not be checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from tilescope.core.errors import first_message
from tilescope.core.model import Diagnostic
from tilescope.puzzles import runner
from tilescope.puzzles.catalog import KERNEL_NAME, Case, Puzzle
from tilescope.puzzles.compare import GuardedOutput, compare, default_tolerance
from tilescope.puzzles.report import CaseResult, FailureKind, OutputCheck, PerfResult, Report
from tilescope.puzzles.timing import roofline, stars, time_cuda

ProgressFn = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _case_seed(case_index: int, seed: int) -> int:
    return 1000 * seed + case_index


def _groups(cases: Sequence[Case]) -> list[tuple[dict[str, int], list[tuple[int, Case]]]]:
    """Cases that share factory arguments share one compiled kernel."""
    groups: dict[str, tuple[dict[str, int], list[tuple[int, Case]]]] = {}
    for i, case in enumerate(cases):
        key = repr(sorted(case.args.items()))
        groups.setdefault(key, (case.args, []))[1].append((i, case))
    return list(groups.values())


def _tolerance(puzzle: Puzzle, dtype: torch.dtype) -> tuple[float, float]:
    atol, rtol = default_tolerance(dtype)
    return puzzle.tolerance.get("atol", atol), puzzle.tolerance.get("rtol", rtol)


def _fmt(x: float | None) -> str:
    return "none" if x is None else f"{x:.6g}"


def _judge(name: str, check: OutputCheck) -> tuple[FailureKind, str] | None:
    guard, comp = check.guard, check.comparison
    if not guard.ok:
        where = []
        if guard.after:
            start = "right after it" if not guard.first_after else f"{guard.first_after} elements after it"
            where.append(f"{guard.after} elements past its end, starting {start}")
        if guard.before:
            where.append(f"{guard.before} elements before its start, the nearest {guard.first_before} before it")
        return "out-of-bounds", f"The kernel wrote outside {name}: {' and '.join(where)}."
    if comp.ok:
        return None
    index = ", ".join(str(i) for i in comp.first_wrong or [])
    detail = (
        f"{name}[{index}] is {_fmt(comp.got)}, expected {_fmt(comp.expected)}; {comp.wrong} of {comp.total} "
        f"elements are wrong (max abs error {_fmt(comp.max_abs_error)}, max rel error {_fmt(comp.max_rel_error)}, "
        f"tolerance atol={comp.atol:g} rtol={comp.rtol:g})."
    )
    if check.unwritten:
        first = ", ".join(str(i) for i in check.first_unwritten or [])
        return "wrong-values", detail + f" {check.unwritten} elements were never written, the first at {name}[{first}]."
    got, exp = comp.got, comp.expected
    if got is not None and exp is not None and not math.isfinite(got) and math.isfinite(exp):
        return "non-finite", detail + " A non-finite value where a finite one was due: an overflow, or 0/0."
    return "wrong-values", detail


def run_case(
    puzzle: Puzzle,
    kernel: Callable[..., Any],
    declared: Sequence[runner.Param],
    case: Case,
    case_index: int,
    seed: int,
    device: str,
) -> CaseResult:
    """Run one case on ``device`` with guarded outputs and judge every output."""
    ref = puzzle.reference()
    gen = torch.Generator().manual_seed(_case_seed(case_index, seed))
    inputs = ref.inputs(case.args, gen, case.values, device)
    expected = list(ref.reference(*[t.clone() for t in inputs]))
    outputs = [GuardedOutput(tuple(e.shape), e.dtype, device, seed) for e in expected]
    tensors = [*inputs, *(o.view for o in outputs)]
    base = {"name": case.name, "args": case.args, "values": case.values, "seed": seed}
    problem = runner.signature_problem(declared, tensors)
    if problem:
        return CaseResult(**base, passed=False, failure="signature", problem=problem)
    saved = [t.clone() for t in inputs]
    try:
        kernel(*tensors)
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as err:
        return CaseResult(
            **base, passed=False, failure="runtime-error", problem=f"The kernel failed: {first_message(err)}"
        )
    checks = []
    verdicts = []
    for name, exp, out in zip(puzzle.outputs, expected, outputs, strict=True):
        atol, rtol = _tolerance(puzzle, exp.dtype)
        unwritten = out.unwritten()
        count = int(unwritten.sum())
        first = [int(i) for i in torch.nonzero(unwritten)[0]] if count else None
        check = OutputCheck(name, compare(exp, out.view, atol, rtol), out.check(), count, first)
        checks.append(check)
        verdict = _judge(name, check)
        if verdict:
            verdicts.append(verdict)
    if not verdicts:
        for t, before in zip(inputs, saved, strict=True):
            if not torch.equal(t, before) and not (t.isnan() & before.isnan()).any():
                verdicts.append(("input-modified", "The kernel changed one of its inputs."))
                break
    if verdicts:
        order = ["out-of-bounds", "non-finite", "wrong-values", "input-modified"]
        failure, problem = min(verdicts, key=lambda v: order.index(v[0]))
        return CaseResult(**base, passed=False, outputs=checks, failure=failure, problem=problem)
    return CaseResult(**base, passed=True, outputs=checks)


def _describe(args: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in args.items())


def _execute(
    puzzle: Puzzle, path: str, source: str, device: str, progress: ProgressFn
) -> tuple[list[CaseResult], list[Diagnostic]]:
    """Compile per distinct arguments and run every case and seed; stops at the first failing case."""
    results: list[CaseResult] = []
    for args, cases in _groups(puzzle.cases):
        progress(f"compiling for {_describe(args)} ({device})")
        try:
            func = runner.build(path, source, args)
            kernel = runner.compile_kernel(func, device, path, source)
        except runner.CompileFailure as failure:
            return results, [failure.diagnostic]
        declared = runner.params(func)
        for index, case in cases:
            for seed in range(puzzle.seeds):
                progress(f"case {case.name} ({case.values}, seed {seed})")
                result = run_case(puzzle, kernel, declared, case, index, seed, device)
                results.append(result)
                if not result.passed:
                    return results, []
    return results, []


def measure(puzzle: Puzzle, path: str, source: str) -> PerfResult:
    """Time the kernel at the puzzle's performance shape on this machine's GPU."""
    spec = puzzle.perf
    func = runner.build(path, source, spec.args)
    kernel = runner.compile_kernel(func, "cuda", path, source)
    ref = puzzle.reference()
    gen = torch.Generator().manual_seed(0)
    inputs = ref.inputs(spec.args, gen, "normal", "cuda")
    outputs = [torch.empty_like(e) for e in ref.reference(*inputs)]
    tensors = [*inputs, *outputs]
    time_us = time_cuda(lambda: kernel(*tensors))
    n_bytes = sum(t.numel() * t.element_size() for t in tensors)
    flops = int(ref.flops(spec.args)) if hasattr(ref, "flops") else 0
    peak = roofline()
    if spec.bound == "latency":
        achieved, ceiling, percent, score = time_us, 0.0, None, spec.target / time_us
    elif spec.bound == "compute":
        achieved = flops / (time_us * 1e-6)
        ceiling = peak.tensor_flops
        percent = 100.0 * achieved / ceiling
        score = percent / spec.target
    else:
        achieved = n_bytes / (time_us * 1e-6)
        ceiling = peak.bandwidth
        percent = 100.0 * achieved / ceiling
        score = percent / spec.target
    return PerfResult(
        args=spec.args,
        time_us=round(time_us, 2),
        bytes=n_bytes,
        flops=flops,
        bound=spec.bound,
        achieved=achieved,
        roofline=ceiling,
        percent=None if percent is None else round(percent, 1),
        target=spec.target,
        stars=stars(score),
        gpu=peak.gpu,
        roofline_source=peak.source,
    )


def _compile_only(
    puzzle: Puzzle, path: str, source: str, analyzer: Any, ptxas: bool, progress: ProgressFn
) -> tuple[list[Diagnostic], list[str], list[str]]:
    """Lower for sm_90 through the core's analyzer for every distinct shape; check the signature."""
    warnings: list[str] = []
    ref = puzzle.reference()
    for i, (args, cases) in enumerate(_groups(puzzle.cases)):
        progress(f"lowering for sm_90 with {_describe(args)}")
        analysis = analyzer.analyze(path, source, kernel=KERNEL_NAME, args=args, ptxas=ptxas and i == 0)
        errors = [d for d in analysis.all_diagnostics() if d.severity == "error"]
        warnings.extend(d.message for d in analysis.all_diagnostics() if d.severity == "warning")
        if errors:
            return errors, warnings, []
        model = analysis.kernel(KERNEL_NAME)
        if model is None:
            return list(analysis.all_diagnostics()), warnings, []
        gen = torch.Generator().manual_seed(0)
        inputs = ref.inputs(args, gen, cases[0][1].values, "cpu")
        tensors = [*inputs, *ref.reference(*inputs)]
        declared = [
            runner.Param(b.name, tuple(d if isinstance(d, int) else -1 for d in b.shape), b.dtype)
            for b in model.buffers
            if b.is_param
        ]
        problem = runner.signature_problem(declared, tensors)
        if problem:
            return [], warnings, [problem]
    return [], warnings, []


def grade(
    puzzle: Puzzle,
    path: str | Path,
    *,
    device: str | None = None,
    source: str | None = None,
    perf: bool = True,
    analyzer: Any = None,
    ptxas: bool | None = None,
    run_cpu: bool = True,
    progress: ProgressFn = _quiet,
) -> Report:
    """Check a solution file for ``puzzle``; never raises for a bad solution."""
    path = str(Path(path).resolve())
    source = Path(path).read_text() if source is None else source
    device = device or default_device()
    base = {"puzzle": puzzle.id, "path": path}
    if device == "cuda":
        return _grade_gpu(puzzle, path, source, perf, progress, base)
    return _grade_cpu(puzzle, path, source, analyzer, ptxas, run_cpu, progress, base)


def _verdict(results: list[CaseResult]) -> tuple[bool, FailureKind | None, str]:
    bad = next((r for r in results if not r.passed), None)
    if bad is None:
        return True, None, f"all {len(results)} case runs match the reference"
    where = f"case {bad.name} ({_describe(bad.args)}, {bad.values} values, seed {bad.seed})"
    return False, bad.failure, f"{where}: {bad.problem}"


def _grade_gpu(
    puzzle: Puzzle, path: str, source: str, perf: bool, progress: ProgressFn, base: dict[str, Any]
) -> Report:
    gpu = torch.cuda.get_device_name()
    results, diagnostics = _execute(puzzle, path, source, "cuda", progress)
    if diagnostics:
        d = diagnostics[0]
        return Report(
            **base,
            device=gpu,
            passed=False,
            failure="compile-error",
            diagnostics=diagnostics,
            summary=f"line {d.span.line}: {d.message}",
            cases=results,
        )
    passed, failure, summary = _verdict(results)
    checked = [f"compiled and ran on {gpu}", f"{len(results)} case runs against the torch reference, guarded"]
    perf_result = None
    not_checked = []
    if passed and perf:
        progress(f"timing at {_describe(puzzle.perf.args)}")
        try:
            perf_result = measure(puzzle, path, source)
            checked.append("performance against the roofline")
        except Exception as err:
            not_checked.append(f"performance: timing failed ({first_message(err)})")
    elif passed:
        not_checked.append("performance (not asked for)")
    if perf_result:
        summary += f"; {_perf_words(perf_result)}"
    return Report(
        **base,
        device=gpu,
        passed=passed,
        failure=failure,
        summary=summary,
        cases=results,
        perf=perf_result,
        checked=checked,
        not_checked=not_checked,
    )


def _perf_words(p: PerfResult) -> str:
    stars_text = "★" * p.stars + "☆" * (3 - p.stars)
    if p.percent is None:
        return f"{p.time_us:.1f} µs (target {p.target:g} µs) {stars_text}"
    return f"{p.time_us:.1f} µs, {p.percent:.0f}% of the {p.bound} roofline (target {p.target:g}%) {stars_text}"


def _grade_cpu(
    puzzle: Puzzle,
    path: str,
    source: str,
    analyzer: Any,
    ptxas: bool | None,
    run_cpu: bool,
    progress: ProgressFn,
    base: dict[str, Any],
) -> Report:
    from tilescope.core import Analyzer
    from tilescope.core.ptxas import find_nvcc

    have_ptxas = find_nvcc() is not None if ptxas is None else ptxas
    own = analyzer is None
    analyzer = analyzer or Analyzer()
    try:
        diagnostics, warnings, problems = _compile_only(puzzle, path, source, analyzer, have_ptxas, progress)
    finally:
        if own:
            analyzer.close()
    checked = ["lowered for sm_90 for every test shape"]
    if have_ptxas:
        checked.append("ptxas assembled the device code (registers and spills)")
    not_checked = ["performance: it needs a CUDA GPU"]
    if not have_ptxas:
        not_checked.append("ptxas: not installed (pip install 'tilescope[nvcc]')")
    if diagnostics:
        d = diagnostics[0]
        return Report(
            **base,
            device="cpu",
            passed=False,
            failure="compile-error",
            diagnostics=diagnostics,
            summary=f"line {d.span.line}: {d.message}",
            checked=[],
            not_checked=not_checked,
            warnings=warnings,
        )
    if problems:
        return Report(
            **base,
            device="cpu",
            passed=False,
            failure="signature",
            summary=problems[0],
            checked=checked,
            not_checked=not_checked,
            warnings=warnings,
        )
    if not (puzzle.cpu and run_cpu):
        not_checked.insert(0, "values: this puzzle needs a CUDA GPU to run (TileLang's C target cannot run it)")
        return Report(
            **base,
            device="cpu",
            passed=False,
            summary="compiles for sm_90; values not checked without a GPU",
            checked=checked,
            not_checked=not_checked,
            warnings=warnings,
        )
    results, diagnostics = _execute(puzzle, path, source, "cpu", progress)
    if diagnostics:
        d = diagnostics[0]
        return Report(
            **base,
            device="cpu",
            passed=False,
            failure="compile-error",
            diagnostics=diagnostics,
            summary=f"line {d.span.line}: {d.message}",
            cases=results,
            checked=checked,
            not_checked=not_checked,
        )
    passed, failure, summary = _verdict(results)
    checked.append(f"{len(results)} case runs on the CPU through TileLang's C target, guarded")
    not_checked.insert(0, "values on a GPU: the C target runs the same kernel through a different code path")
    return Report(
        **base,
        device="cpu",
        passed=passed,
        failure=failure,
        summary=summary + " (CPU, C target)",
        cases=results,
        checked=checked,
        not_checked=not_checked,
        warnings=warnings,
    )
