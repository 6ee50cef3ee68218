"""The MCP tools' handlers: plain functions ``(session, input) -> (answer as JSON, is it a failure)``.

A handler only picks the file, asks the core (a view or a typed request) and sizes the answer; it
computes no fact of its own. User code never runs in this process: the compiler worker and the
grading children run it, supervised, under their limits.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tilescope.core.codes import CODES, TIERS
from tilescope.core.codes import explain as explain_text
from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.compiler.profile import ProfileQuery, profile_file
from tilescope.core.compiler.variants import DEFAULT_TARGETS, run_variants
from tilescope.core.ide import (
    NoLayout,
    PassDiff,
    choose,
    file_summary,
    run_failed,
    trace_view,
    unified,
    variants_summary,
)
from tilescope.core.model import KernelModel, to_json
from tilescope.mcp.answers import sized
from tilescope.mcp.schemas import (
    ExplainAnswer,
    ExplainInput,
    FileInput,
    LayoutInput,
    PassDiffInput,
    ProfileInput,
    PuzzleInput,
    RunInput,
    VariantsInput,
)
from tilescope.mcp.session import Session
from tilescope.mcp.workspace import Refused


class Failed(Exception):
    """The tool ran but has no answer of its type (no kernel, no layout): an error result with this text."""


def _file(session: Session, given: FileInput | PuzzleInput) -> Path:
    if (given.path is None) == (given.source is None):
        raise Refused("give exactly one of `path` (a workspace file) or `source` (Python text)")
    if given.source is not None:
        return session.workspace.write_source(given.source)
    assert given.path is not None
    return session.workspace.file(given.path)


def _display(session: Session, path: Path, given: FileInput | PuzzleInput) -> str:
    return "<source>" if given.source is not None else session.workspace.relative(path)


def _model(session: Session, given: FileInput) -> tuple[Path, KernelModel]:
    path = _file(session, given)
    analysis = session.analyzer_for(given).analyze(str(path), target=given.target, kernel=given.kernel, args=given.args)
    model = analysis.kernel(given.kernel)
    if model is None:
        problems = "; ".join(f"line {d.span.line}: {d.message}" for d in analysis.all_diagnostics())
        raise Failed(f"no compiled kernel in {_display(session, path, given)}" + (f": {problems}" if problems else ""))
    return path, model


def check(session: Session, given: FileInput) -> tuple[dict[str, Any], bool]:
    path = _file(session, given)
    analysis = session.analyzer_for(given).analyze(str(path), target=given.target, kernel=given.kernel, args=given.args)
    shown = replace(analysis, path=_display(session, path, given))
    answer = {"summary": to_json(file_summary(shown))}
    if given.detail == "full":
        answer["full"] = to_json(shown)
    return sized(answer, given.detail, given.max_chars), not analysis.ok


def layout(session: Session, given: LayoutInput) -> tuple[dict[str, Any], bool]:
    _, model = _model(session, given)
    try:
        chosen = choose(model, given.buffer)
    except NoLayout as error:
        raise Failed(str(error)) from error
    return sized({"layout": to_json(chosen)}, given.detail, given.max_chars), False


def passes(session: Session, given: FileInput) -> tuple[dict[str, Any], bool]:
    _, model = _model(session, given)
    return sized({"trace": to_json(trace_view(model))}, given.detail, given.max_chars), False


def pass_diff(session: Session, given: PassDiffInput) -> tuple[dict[str, Any], bool]:
    path, model = _model(session, given)
    if not given.index < len(model.passes):
        last = len(model.passes) - 1
        raise Failed(f"pass {given.index} does not exist: kernel {model.kernel!r} ran passes 0..{last}")
    analyzer = session.analyzer_for(given)
    ask = {"kernel": model.kernel, "target": given.target, "args": given.args}
    before, after = analyzer.pass_irs(str(path), indices=[given.index - 1, given.index], **ask)
    diff = PassDiff(model.kernel, given.index, unified(before, after))
    return sized({"diff": to_json(diff)}, given.detail, given.max_chars), False


def variants(session: Session, given: VariantsInput) -> tuple[dict[str, Any], bool]:
    path = _file(session, given)
    report = run_variants(
        session.pool,
        str(path),
        kernel=given.kernel,
        targets=given.targets or list(DEFAULT_TARGETS),
        configs=given.configs,
        args=given.args,
    )
    answer = {"summary": to_json(variants_summary(report, _display(session, path, given)))}
    if given.detail == "full":
        answer["full"] = to_json(report)
    failed = not any(v.status != "does-not-fit" and v.kernels for v in report.variants)
    return sized(answer, given.detail, given.max_chars), failed


def run(session: Session, given: RunInput) -> tuple[dict[str, Any], bool]:
    path = _file(session, given)
    report = session.analyzer_for(given).run(str(path), kernel=given.kernel, args=given.args, seed=given.seed)
    return sized({"report": to_json(report)}, given.detail, given.max_chars), run_failed(report)


def profile(session: Session, given: ProfileInput) -> tuple[dict[str, Any], bool]:
    """``tilescope profile --json``: static figures here; on a GPU host the measured time and Nsight Compute's."""
    path = _file(session, given)
    query = ProfileQuery(
        file=str(path),
        kernel=given.kernel,
        args=dict(given.args or {}),
        target=given.target,
        timeout_s=session.timeout_s,
        memory_mb=session.memory_mb,
        runs=given.runs,
        warmup=given.warmup,
    )
    report = profile_file(query, session.analyzer_for(given))
    failed = report.static is None or (report.timing is not None and report.timing.error is not None)
    return sized(
        {"report": to_json(replace(report, path=_display(session, path, given)))}, given.detail, given.max_chars
    ), failed


def explain(session: Session, given: ExplainInput) -> tuple[dict[str, Any], bool]:
    entry = CODES.get(given.code)
    if entry is None:
        raise Refused(f"no diagnostic code {given.code!r}; the codes are in the resource tilescope://codes")
    answer = ExplainAnswer(code=entry, tier=TIERS[entry.tier], text=explain_text(given.code))
    return to_json(answer), False


def puzzles_check(session: Session, given: PuzzleInput) -> tuple[dict[str, Any], bool]:
    """Grade as ``tilescope puzzles check`` does: through the warm per-user grading service on a GPU machine,
    else in a grader of its own on the CPU path; the learner's file is loaded only in the sealed loader and the
    verdict made by the grader from its own bytes. Progress is not recorded: an agent's check is a question,
    not the learner's attempt."""

    from tilescope.puzzles import catalog
    from tilescope.puzzles.session import CheckOptions

    try:
        puzzle = catalog.get(given.puzzle)
    except KeyError as err:
        raise Refused(str(err.args[0])) from None
    path = _file(session, given)
    options = CheckOptions(device="cpu" if given.cpu else None, perf=given.perf, timeout_s=given.timeout_s)
    if not given.cpu and local_gpu() is not None:
        from tilescope.puzzles import service

        try:
            report = service.check(puzzle.id, str(path), options)
        except RuntimeError as err:
            raise Failed(f"the grading service failed: {err}") from None
    else:
        from tilescope.puzzles.isolated import IsolatedGrader

        with IsolatedGrader(keep_spare=False, cpu_only=given.cpu) as grader:
            report = grader.check(puzzle.id, path, options)
    return sized({"report": to_json(report)}, given.detail, given.max_chars), not report.passed
