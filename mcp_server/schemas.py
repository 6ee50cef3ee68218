"""The MCP tools' inputs and answers: one dataclass each, whose JSON schema is the tool's ``inputSchema``
or ``outputSchema``, so the schemas an agent reads are generated from the types the answers follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field
from tilescope.core.codes import Code
from tilescope.core.ide import FileSummary, KernelLayout, PassDiff, TraceView, VariantsSummary
from tilescope.core.model import FileAnalysis, ProfileReport, RunReport, VariantsReport
from tilescope.mcp.answers import MAX_CHARS, Detail
from tilescope.puzzles.report import Report

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
