"""The MCP tools: one table of plain functions over the core's views, with typed inputs and answers.

Each tool takes one input record (a dataclass: its JSON schema is the tool's ``inputSchema``) and
returns one answer record (its schema is the ``outputSchema``), both generated from the types, so
the schemas an agent reads are the ones the answers follow. A handler only picks the file, asks the
core and sizes the answer; it computes no fact of its own. User code never runs in this process:
the compiler worker and the grading children run it, supervised, under their limits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

from pydantic import Field, TypeAdapter
from tilescope.core.codes import CODES, TIERS, Code
from tilescope.core.codes import explain as explain_text
from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.compiler.profile import ProfileQuery, profile_file
from tilescope.core.compiler.service import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Analyzer
from tilescope.core.compiler.variants import DEFAULT_TARGETS, Pool, run_variants
from tilescope.core.ide import (
    FileSummary,
    KernelLayout,
    NoLayout,
    PassDiff,
    TraceView,
    VariantsSummary,
    choose,
    file_summary,
    run_failed,
    trace_view,
    unified,
    variants_summary,
)
from tilescope.core.model import FileAnalysis, KernelModel, ProfileReport, RunReport, VariantsReport, to_json
from tilescope.mcp.answers import MAX_CHARS, Detail, sized
from tilescope.mcp.workspace import Refused, Workspace
from tilescope.puzzles.report import Report

In = TypeVar("In")

PathField = Annotated[
    str | None, Field(description="a file of the workspace, relative to its root (give this or `source`)")
]
SourceField = Annotated[
    str | None,
    Field(description="Python source text to analyse instead of a file (at most 1 MiB; never executed here)"),
]
KernelField = Annotated[str | None, Field(description="one kernel of the file by name (default: every, or the first)")]
TargetField = Annotated[
    str, Field(description="sm_80, sm_90, sm_100 (CUDA), gfx942 (HIP), ascend (Ascend 950) or metal")
]
ArgsField = Annotated[
    dict[str, Any] | None, Field(description="kernel arguments that override the file's own, e.g. {'M': 1024}")
]
DetailField = Annotated[
    Detail, Field(description="brief (default: lists cut short), normal, or full (the complete record as well)")
]
MaxCharsField = Annotated[int, Field(ge=1000, le=2_000_000, description="budget of the answer's JSON text")]


@dataclass
class FileInput:
    path: PathField = None
    source: SourceField = None
    kernel: KernelField = None
    target: TargetField = "sm_90"
    args: ArgsField = None
    detail: DetailField = "brief"
    max_chars: MaxCharsField = MAX_CHARS


@dataclass
class LayoutInput(FileInput):
    buffer: Annotated[
        str | None, Field(description="the fragment or shared buffer (default: the first in plot order)")
    ] = None


@dataclass
class PassDiffInput(FileInput):
    index: Annotated[int, Field(ge=0, description="the pass, as numbered by the `passes` tool")] = 0


@dataclass
class VariantsInput(FileInput):
    targets: Annotated[list[str] | None, Field(description="targets to lower for (default: the five known)")] = None
    configs: Annotated[list[int] | None, Field(description="autotune config indices (default: every one)")] = None


@dataclass
class RunInput(FileInput):
    seed: Annotated[int, Field(description="seed of the random inputs")] = 0


@dataclass
class ProfileInput(FileInput):
    target: Annotated[
        str | None, Field(description="sm_XX for the static figures (default: this GPU's, else sm_90)")
    ] = None
    runs: Annotated[int, Field(ge=1, le=1000, description="timed runs on the GPU")] = 20
    warmup: Annotated[int, Field(ge=0, le=100, description="untimed runs first")] = 3


@dataclass
class PuzzleInput:
    puzzle: Annotated[str, Field(description="the puzzle's number or name, e.g. '03' or 'tiled_gemm'")]
    path: PathField = None
    source: SourceField = None
    cpu: Annotated[bool, Field(description="grade on the CPU tile interpreter even where a GPU exists")] = False
    perf: Annotated[bool, Field(description="time the kernel against torch (GPU only) for stars")] = True
    timeout_s: Annotated[float, Field(gt=0, le=600, description="seconds the learner's code may take")] = 60.0
    detail: DetailField = "brief"
    max_chars: MaxCharsField = MAX_CHARS


@dataclass
class ExplainInput:
    code: Annotated[str, Field(description="a diagnostic code, as in a diagnostic's `code` (e.g. 'gemm-shape')")]


@dataclass
class CheckAnswer:
    detail: Detail
    summary: FileSummary
    omitted: list[str]
    full: FileAnalysis | None = None


@dataclass
class LayoutAnswer:
    detail: Detail
    layout: KernelLayout
    omitted: list[str]


@dataclass
class PassesAnswer:
    detail: Detail
    trace: TraceView
    omitted: list[str]


@dataclass
class PassDiffAnswer:
    detail: Detail
    diff: PassDiff
    omitted: list[str]


@dataclass
class VariantsAnswer:
    detail: Detail
    summary: VariantsSummary
    omitted: list[str]
    full: VariantsReport | None = None


@dataclass
class RunAnswer:
    detail: Detail
    report: RunReport
    omitted: list[str]


@dataclass
class ProfileAnswer:
    detail: Detail
    report: ProfileReport
    omitted: list[str]


@dataclass
class PuzzleAnswer:
    detail: Detail
    report: Report
    omitted: list[str]


@dataclass
class ExplainAnswer:
    code: Code
    tier: str
    """Which part of Tilescope emits it, in words."""
    text: str
    """What ``tilescope explain CODE`` prints."""


class Failed(Exception):
    """The tool ran but has no answer of its type (no kernel, no layout): an error result with this text."""


@dataclass
class Session:
    """What every tool reads: the workspace, and the compiler tier's workers (started on first use)."""

    workspace: Workspace
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    python: str | None = None
    dry_run: bool = True
    """The workspace is the user's own (they named it at start): sizes may come from its programs' dry runs."""
    _stack: ExitStack = field(default_factory=ExitStack)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _analyzer: Analyzer | None = None
    _source_analyzer: Analyzer | None = None
    _pool: Pool | None = None

    @property
    def analyzer(self) -> Analyzer:
        """For the workspace's files: the user named the workspace, so its programs may be dry-run."""
        with self._lock:
            if self._analyzer is None:
                self._analyzer = self._stack.enter_context(
                    Analyzer(
                        timeout_s=self.timeout_s, memory_mb=self.memory_mb, python=self.python, dry_run=self.dry_run
                    )
                )
            return self._analyzer

    @property
    def source_analyzer(self) -> Analyzer:
        """For the source text an agent sends: sealed as a learner's file is (it writes only its worker's own
        folder, reads no secret, has no network), and never dry-run (its ``__main__`` would run unsealed)."""
        with self._lock:
            if self._source_analyzer is None:
                self._source_analyzer = self._stack.enter_context(
                    Analyzer(timeout_s=self.timeout_s, memory_mb=self.memory_mb, python=self.python, sealed=True)
                )
            return self._source_analyzer

    def analyzer_for(self, given: FileInput) -> Analyzer:
        return self.analyzer if given.source is None else self.source_analyzer

    @property
    def pool(self) -> Pool:
        """The variants' workers, sealed: a tool call may name source text as well as a workspace file."""
        with self._lock:
            if self._pool is None:
                self._pool = Pool(1, self.timeout_s, self.memory_mb, sealed=True)
                self._stack.callback(self._pool.close)
            return self._pool

    def close(self) -> None:
        self._stack.close()
        self.workspace.close()


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
    before = analyzer.pass_ir(str(path), index=given.index - 1, **ask)
    after = analyzer.pass_ir(str(path), index=given.index, **ask)
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


@dataclass(frozen=True)
class ToolSpec(Generic[In]):
    name: str
    title: str
    description: str
    given: type[In]
    answer: type
    handler: Callable[[Session, In], tuple[dict[str, Any], bool]]

    def input_schema(self) -> dict[str, Any]:
        return TypeAdapter(self.given).json_schema()

    def output_schema(self) -> dict[str, Any]:
        return TypeAdapter(self.answer).json_schema(mode="serialization")

    def parse(self, arguments: dict[str, Any]) -> In:
        return TypeAdapter(self.given).validate_python(arguments)


TOOLS: list[ToolSpec[Any]] = [
    ToolSpec(
        "check",
        "Analyse kernels with the real compiler",
        "Lower a file's TileLang kernels with the real TileLang compiler (the release of the analysing "
        "interpreter) and answer what it decided: buffers with shapes, dtypes, scopes and lines; the "
        "launch; inferred layouts; pipelines; shared memory; and every diagnostic at its line. "
        "detail=full adds the complete record `tilescope check --json` prints.",
        FileInput,
        CheckAnswer,
        check,
    ),
    ToolSpec(
        "layout",
        "One buffer's inferred layout",
        "The thread and register (fragment) or bank (shared) map TileLang inferred for one buffer, as "
        "`tilescope layout --json` prints it, with the bank-conflict figures of its accesses.",
        LayoutInput,
        LayoutAnswer,
        layout,
    ),
    ToolSpec(
        "passes",
        "The compiler's passes",
        "Every pass TileLang ran on the kernel, in order, with its phase, time, whether it changed the IR, "
        "and what it does; the index is what `pass_diff` takes.",
        FileInput,
        PassesAnswer,
        passes,
    ),
    ToolSpec(
        "pass_diff",
        "The IR before and after one pass",
        "The unified diff of the IR (TVMScript) across pass `index`, each row with the Python source line "
        "TileLang kept for it.",
        PassDiffInput,
        PassDiffAnswer,
        pass_diff,
    ),
    ToolSpec(
        "variants",
        "Every target and autotune config",
        "Lower the kernel for several targets and every autotune config (never running the autotuner): "
        "which fit, and each one's threads, shared memory and registers, as `tilescope variants --json`.",
        VariantsInput,
        VariantsAnswer,
        variants,
    ),
    ToolSpec(
        "run",
        "Run a kernel on the CPU",
        "Interpret one kernel on the CPU with Tilescope's tile interpreter, no GPU needed: output "
        "statistics, NaN/Inf, never-written elements, out-of-bounds and uninitialised accesses with lines.",
        RunInput,
        RunAnswer,
        run,
    ),
    ToolSpec(
        "profile",
        "Why a kernel is slow",
        "Static speed figures (occupancy and what limits it, shared-memory bank conflicts per access, the "
        "roofline bound) and, on a host with an NVIDIA GPU, the measured time and Nsight Compute's conflicts "
        "and occupancy beside them, as `tilescope profile --json`. Without a GPU it says so.",
        ProfileInput,
        ProfileAnswer,
        profile,
    ),
    ToolSpec(
        "explain",
        "What a diagnostic code means",
        "A diagnostic code's usual severity, the part of Tilescope that emits it, its message and how to fix it, "
        "as `tilescope explain CODE` prints it.",
        ExplainInput,
        ExplainAnswer,
        explain,
    ),
    ToolSpec(
        "puzzles_check",
        "Grade a puzzle solution",
        "Grade a solution of one of Tilescope's TileLang puzzles with the sealed grader (fixed, hidden and timed "
        "cases; on the CPU tile interpreter where there is no GPU): the verdict, each case, and stars against "
        "torch on a GPU, as `tilescope puzzles check --json`.",
        PuzzleInput,
        PuzzleAnswer,
        puzzles_check,
    ),
]


def find(name: str) -> ToolSpec[Any] | None:
    return next((tool for tool in TOOLS if tool.name == name), None)
