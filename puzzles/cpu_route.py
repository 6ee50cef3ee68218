"""The route of a check without a GPU: the kernel process runs every case through the core's tile
interpreter, every access checked, and the learner's file is also lowered for sm_90 by the core's
analyzer (and assembled by ptxas when it is installed), so that what a GPU would refuse to build
fails here too, at the learner's line.

The run is judged exactly as on a GPU (guards, poison, inputs), with the interpreter's out-of-bounds
findings as well; the report lists what could not be checked. The analyzer runs the file's factory,
so the content is verified again after it ran.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import Diagnostic
from tilescope.puzzles.cases import args_text
from tilescope.puzzles.catalog import KERNEL_NAME, Puzzle
from tilescope.puzzles.failures import refused
from tilescope.puzzles.manifest import ContentChanged, verify
from tilescope.puzzles.report import Report
from tilescope.puzzles.route import Attempt, Device
from tilescope.puzzles.session import Session
from tilescope.puzzles.verdict import Param, signature_problem

NOTHING_BUILT = {"protocol-violation", "child-exit", "out-of-memory", "timeout", "content-modified"}
"""Failures after which nothing was built: the same reasons as on a GPU, with nothing to lower. A
compile error is still lowered for sm_90, whose diagnostic (at the learner's line) is the one a GPU
check gives."""


@dataclass(frozen=True)
class CpuRoute:
    analyzer: Analyzer | None = None
    """The analyzer that lowers for sm_90, used by this check only (it runs the file's factory): a
    ``SealedAnalyzer``; None: one is made for the check and closed after it."""
    ptxas: bool | None = None
    """Assemble with ptxas; None: where it is installed."""
    lower: bool = True
    """False: the interpreter's run alone, without lowering for sm_90 (the grader's own tests)."""

    @property
    def device(self) -> Device:
        return "interpret"

    @property
    def timed(self) -> bool:
        return False

    def prepare(self, session: Session, attempt: Attempt) -> None:
        return None

    def finish(self, report: Report, attempt: Attempt) -> Report:
        """The interpreter's report, unless lowering for sm_90 fails: a GPU would then not run it at all."""
        if not self.lower or report.failure in NOTHING_BUILT:
            return report
        from tilescope.core.worker.ptxas import find_nvcc
        from tilescope.puzzles.seal import SealedAnalyzer

        have_ptxas = find_nvcc() is not None if self.ptxas is None else self.ptxas
        analyzer = self.analyzer or SealedAnalyzer(attempt.timeout_s)
        try:
            lowered = _lower(attempt, analyzer, have_ptxas)
            verify(attempt.puzzle.folder)  # the compiler worker ran the file's factory too
        except ContentChanged as changed:
            return refused(attempt.base, changed, "after the file's code ran")
        finally:
            if self.analyzer is None:
                analyzer.close()
        return _with_lowering(report, attempt.base, *lowered, have_ptxas)


def _groups(puzzle: Puzzle) -> list[tuple[dict[str, int], str]]:
    """Distinct factory arguments of the fixed cases the interpreter runs, with the first case's value kind."""
    seen: dict[str, tuple[dict[str, int], str]] = {}
    for case in puzzle.cpu_cases or puzzle.cases:
        seen.setdefault(repr(sorted(case.args.items())), (case.args, case.values))
    return list(seen.values())


def _lower(attempt: Attempt, analyzer: Analyzer, ptxas: bool) -> tuple[list[Diagnostic], list[str], str | None]:
    """Lower for sm_90 through the core's analyzer for every distinct shape, and check the signature the
    compiler sees: the errors, the warnings, and the first signature mismatch."""
    puzzle, progress = attempt.puzzle, attempt.progress
    warnings: list[str] = []
    ref = puzzle.reference()
    for i, (args, values) in enumerate(_groups(puzzle)):
        progress(f"lowering for sm_90 with {args_text(args)}")
        # The grader judges the run itself; the hazard check would turn a wrong solution into a build error.
        analysis = analyzer.analyze(
            attempt.path, attempt.source, kernel=KERNEL_NAME, args=args, ptxas=ptxas and i == 0, hazards_s=0
        )
        errors = [d for d in analysis.all_diagnostics() if d.severity == "error"]
        warnings.extend(d.message for d in analysis.all_diagnostics() if d.severity == "warning")
        if errors:
            return errors, warnings, None
        model = analysis.kernel(KERNEL_NAME)
        if model is None:
            return list(analysis.all_diagnostics()), warnings, None
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
            return [], warnings, problem
    return [], warnings, None


def _with_lowering(
    report: Report,
    base: dict[str, Any],
    diagnostics: list[Diagnostic],
    warnings: list[str],
    problem: str | None,
    have_ptxas: bool,
) -> Report:
    """The interpreter's report, or lowering's failure in its place, with what each checked."""
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
    if problem:
        return Report(**base, passed=False, failure="signature", summary=problem, **common)
    not_checked.insert(0, "values on a GPU: the interpreter runs TileLang's front-end output, not the generated CUDA")
    return dataclasses.replace(
        report,
        summary=report.summary + " (CPU, tile interpreter)",
        **{k: list(dict.fromkeys([*v, *getattr(report, k)])) for k, v in common.items()},
    )
