"""What an interpreted run found: plain, JSON-ready records (``to_json`` from the core's model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

FindingKind = Literal["out-of-bounds-read", "out-of-bounds-write", "uninitialised-read", "input-write"]


@dataclass(frozen=True)
class Finding:
    """Every access of one kind, to one buffer, from one source line; the first is kept exactly."""

    kind: FindingKind
    buffer: str
    index: list[int]
    """The first offending element, one index per dimension."""
    shape: list[int]
    line: int
    """The kernel-file line of the statement or tile operation that made the access (0: unknown)."""
    count: int
    """How many element accesses of this kind the line made."""


@dataclass(frozen=True)
class OutputStats:
    """Summary of one buffer after the run."""

    name: str
    shape: list[int]
    dtype: str
    finite: int
    nan: int
    inf: int
    minimum: float | None
    maximum: float | None
    mean: float | None
    unwritten: int
    """Elements the kernel never wrote (outputs only)."""


@dataclass(frozen=True)
class Comparison:
    """The outputs against a reference: the worst element and how many fall outside tolerance."""

    name: str
    wrong: int
    total: int
    max_abs_error: float
    first_wrong: list[int] | None
    atol: float
    rtol: float


@dataclass(frozen=True)
class RunReport:
    """One interpreted launch of a kernel (``tilescope run``)."""

    kernel: str
    args: dict[str, int | float | str | bool]
    grid: list[int]
    threads: list[int]
    seconds: float
    outputs: list[OutputStats] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    error: str | None = None
    """Why the kernel could not be interpreted or stopped (with its line), else ``None``."""
    line: int | None = None
