"""Grade a puzzle solution: on a GPU through ``judge`` (loader, kernel process, verdict here); without
one through ``grade_cpu``, the single entry of the CPU path.

Without a GPU, every puzzle is lowered for sm_90 by the core's analyzer (and assembled by ptxas
when it is installed), then run through the core's tile interpreter in the kernel process on
tensors this process owns and judged here exactly as on a GPU (guards, poison, inputs), with the
interpreter's out-of-bounds findings as well; the report lists what could not be checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from tilescope.core.model import Diagnostic
from tilescope.puzzles import judge
from tilescope.puzzles.catalog import KERNEL_NAME, Puzzle
from tilescope.puzzles.report import Report
from tilescope.puzzles.session import Session
from tilescope.puzzles.verdict import Param, signature_problem

ProgressFn = Callable[[str], None]
LOADER_FAILURES = {"protocol-violation", "child-exit", "out-of-memory", "timeout", "content-modified"}
"""Failures of the loader itself: nothing was built. A compile error is still lowered for sm_90, whose
diagnostic (at the learner's line) is the one a GPU check gives."""


def _quiet(_: str) -> None:
    return None


def _groups(puzzle: Puzzle) -> list[tuple[dict[str, int], str]]:
    """Distinct factory arguments of the fixed cases the interpreter runs, with the first case's value kind."""
    seen: dict[str, tuple[dict[str, int], str]] = {}
    for case in puzzle.cpu_cases or puzzle.cases:
        seen.setdefault(repr(sorted(case.args.items())), (case.args, case.values))
    return list(seen.values())


def _describe(args: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in args.items())


def _compile_only(
    puzzle: Puzzle, path: str, source: str, analyzer: Any, ptxas: bool, progress: ProgressFn
) -> tuple[list[Diagnostic], list[str], list[str]]:
    """Lower for sm_90 through the core's analyzer for every distinct shape; check the signature."""
    warnings: list[str] = []
    ref = puzzle.reference()
    for i, (args, values) in enumerate(_groups(puzzle)):
        progress(f"lowering for sm_90 with {_describe(args)}")
        # The grader judges the run itself; the hazard check would turn a wrong solution into a build error.
        analysis = analyzer.analyze(path, source, kernel=KERNEL_NAME, args=args, ptxas=ptxas and i == 0, hazards_s=0)
        errors = [d for d in analysis.all_diagnostics() if d.severity == "error"]
        warnings.extend(d.message for d in analysis.all_diagnostics() if d.severity == "warning")
        if errors:
            return errors, warnings, []
        model = analysis.kernel(KERNEL_NAME)
        if model is None:
            return list(analysis.all_diagnostics()), warnings, []
        gen = torch.Generator().manual_seed(0)
        inputs = ref.inputs(args, gen, values, "cpu")
        tensors = [*inputs, *ref.reference(*inputs)]
        declared = [
            Param(b.name, tuple(d if isinstance(d, int) else -1 for d in b.shape), b.dtype)
            for b in model.buffers
            if b.is_param
        ]
        problem = signature_problem(declared, tensors)
        if problem:
            return [], warnings, [problem]
    return [], warnings, []


def grade_cpu(
    puzzle: Puzzle,
    path: str | Path,
    *,
    session: Session | None = None,
    analyzer: Any = None,
    ptxas: bool | None = None,
    timeout_s: float = judge.DEFAULT_TIMEOUT_S,
    seed: int | None = None,
    progress: ProgressFn = _quiet,
) -> Report:
    """Check a solution without a GPU: lower it for sm_90, then run and judge it through the interpreter
    (``timeout_s`` as for ``judge.check``). ``analyzer`` runs the file's factory too: a ``SealedAnalyzer``."""
    from tilescope.core.worker.ptxas import find_nvcc
    from tilescope.puzzles.manifest import ContentChanged, verify
    from tilescope.puzzles.seal import SealedAnalyzer

    path = str(Path(path).resolve())
    source = Path(path).read_text()
    base = {"puzzle": puzzle.id, "path": path, "device": "cpu"}
    have_ptxas = find_nvcc() is not None if ptxas is None else ptxas
    own_session = session is None
    session = session or Session(cpu_only=True, keep_spare=False)
    try:
        report = judge.check(
            puzzle,
            path,
            session,
            device="interpret",
            perf=False,
            timeout_s=timeout_s,
            seed=seed,
            progress=progress,
        )
        if report.failure in LOADER_FAILURES:  # the same reasons as on a GPU: nothing was lowered or run
            return report
        own = analyzer is None
        analyzer = analyzer or SealedAnalyzer(timeout_s)
        try:
            diagnostics, warnings, problems = _compile_only(puzzle, path, source, analyzer, have_ptxas, progress)
            verify(puzzle.folder)  # the compiler worker ran the file's factory too
        except ContentChanged as changed:
            return judge.refused({**base, "seed": report.seed}, changed, "after the file's code ran")
        finally:
            if own:
                analyzer.close()
        return _cpu_report(report, base, diagnostics, warnings, problems, have_ptxas)
    finally:
        if own_session:
            session.close()


def _cpu_report(
    report: Report,
    base: dict[str, Any],
    diagnostics: list[Diagnostic],
    warnings: list[str],
    problems: list[str],
    have_ptxas: bool,
) -> Report:
    """The interpreter's report, unless lowering for sm_90 failed: a GPU would then not run it at all."""
    checked = ["lowered for sm_90 for every test shape"]
    if have_ptxas:
        checked.append("ptxas assembled the device code (registers and spills)")
    not_checked = ["performance: it needs a CUDA GPU"]
    if not have_ptxas:
        not_checked.append("ptxas: not installed (pip install 'tilescope[nvcc]')")
    common: dict[str, Any] = {"checked": checked, "not_checked": not_checked, "warnings": warnings}
    if diagnostics:
        d = diagnostics[0]
        summary = f"line {d.span.line}: {d.message}"
        return Report(**base, passed=False, failure="compile-error", diagnostics=diagnostics, summary=summary, **common)
    if problems:
        return Report(**base, passed=False, failure="signature", summary=problems[0], **common)
    not_checked.insert(0, "values on a GPU: the interpreter runs TileLang's front-end output, not the generated CUDA")
    return dataclasses.replace(
        report,
        summary=report.summary + " (CPU, tile interpreter)",
        **{k: list(dict.fromkeys([*v, *getattr(report, k)])) for k, v in common.items()},
    )
