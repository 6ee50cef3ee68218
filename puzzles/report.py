"""What a check of a puzzle solution found: plain records, JSON-ready through the core's ``to_json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tilescope.core.model import Diagnostic
from tilescope.puzzles.catalog import Bound
from tilescope.puzzles.measures import Comparison, GuardReport

FailureKind = Literal[
    "compile-error",
    "signature",
    "runtime-error",
    "out-of-bounds",
    "input-modified",
    "non-finite",
    "wrong-values",
    "race",
    "timeout",
    "child-exit",
    "out-of-memory",
    "protocol-violation",
    "content-modified",
    "reference-bug",
]


@dataclass(frozen=True)
class OutputCheck:
    name: str
    comparison: Comparison
    guard: GuardReport
    unwritten: int = 0
    """Elements the kernel never stored to (they still hold the poison pattern)."""
    first_unwritten: list[int] | None = None


@dataclass(frozen=True)
class CaseId:
    """Which case: its name, sizes and value pattern, and the seed label shown to the learner."""

    name: str
    args: dict[str, int]
    values: str
    seed: int
    """0, 1 for fixed cases; the check's seed for hidden ones."""


@dataclass(frozen=True)
class CaseResult(CaseId):
    passed: bool
    outputs: list[OutputCheck] = field(default_factory=list)
    failure: FailureKind | None = None
    problem: str | None = None
    """The first thing wrong, in plain words."""


@dataclass(frozen=True)
class PerfResult:
    args: dict[str, int]
    time_us: float
    bytes: int
    flops: int
    bound: Bound
    achieved: float
    """Bytes/s for memory-bound puzzles, FLOP/s for compute-bound ones, microseconds for latency."""
    roofline: float
    percent: float | None
    """Percent of the roofline; ``None`` for latency-bound puzzles."""
    target: float
    stars: int
    gpu: str
    roofline_source: str
    error: str | None = None
    """Set when the time cannot be right (above the roofline, say): then it earns no stars."""
    baseline_us: float | None = None
    """The puzzle's own baseline kernel's time in the same run, for puzzles whose target is a speed-up over it."""
    speedup: float | None = None
    capped: str | None = None
    """Why the stars were held below three although the time met the target."""
    torch_us: float | None = None
    """The puzzle's torch baseline (``perf.torch``), timed in the same run, on the same GPU, the same way."""
    torch_ratio: float | None = None
    """This time over torch's: below 1.0 is faster than what a learner would otherwise use."""
    torch_target: float | None = None
    """The ratio at or under which the time earns three stars; the stars are graded on it where it is set."""
    baseline_name: str | None = None
    """What the baseline is (``the naive version``, ``the best unpipelined kernel``), where there is one."""


@dataclass(frozen=True)
class SanitizerFinding:
    """What compute-sanitizer said about one small case."""

    tool: str
    errors: int
    first: list[str]
    """The tool's lines for the first error: what, where (kernel and source line), which thread."""


Role = Literal["loader", "kernel", "compiler"]
"""A grading process: the ``loader`` runs the learner's Python, the ``kernel`` process compiles and runs
kernels, the ``compiler`` compiles the puzzle's own kernels."""


@dataclass(frozen=True)
class ChildExit:
    """How a grading process ended when it did not answer."""

    process: Role
    status: int | None
    signal: str | None
    timed_out: bool
    stderr: list[str]


@dataclass(frozen=True)
class Report:
    puzzle: str
    path: str
    device: str
    passed: bool
    summary: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    cases: list[CaseResult] = field(default_factory=list)
    perf: PerfResult | None = None
    failure: FailureKind | None = None
    checked: list[str] = field(default_factory=list)
    not_checked: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seed: int | None = None
    """The seed of this check's hidden cases, so that a failure can be reproduced."""
    exit: ChildExit | None = None
    sanitizer: list[SanitizerFinding] = field(default_factory=list)

    @property
    def stars(self) -> int:
        return self.perf.stars if self.passed and self.perf and not self.perf.error else 0

    def first_failure(self) -> CaseResult | None:
        return next((c for c in self.cases if not c.passed), None)
