"""What differs between grading on a GPU and on the CPU, as one strategy the judge is handed.

``judge.check`` runs every check the same way: the loader builds the learner's kernels, the kernel
process runs every planned case, the judge makes the verdict. A route says where the kernel process
runs them (``device``), whether the timed shape is run, what to start ahead (``prepare``) and what
to add once the run is over (``finish``): compute-sanitizer on a GPU (``gpu_route``), lowering for
sm_90 without one (``cpu_route``). A route never calls the judge: the judge calls it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    from tilescope.puzzles.cases import PlannedCase
    from tilescope.puzzles.catalog import Puzzle
    from tilescope.puzzles.report import Report
    from tilescope.puzzles.session import Session

ProgressFn = Callable[[str], None]
Device = Literal["cuda", "interpret"]


def quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class Attempt:
    """One check once the learner's file is read: what a route may look at to finish its report."""

    puzzle: Puzzle
    path: str
    source: str
    base: dict[str, Any]
    """The fields every report of this check starts from: puzzle, path, device, seed."""
    planned: list[PlannedCase]
    funcs: dict[str, str]
    """PrimFunc JSON by case key; empty when the file did not load."""
    timeout_s: float
    progress: ProgressFn


class Route(Protocol):
    """The device-specific part of a check."""

    @property
    def device(self) -> Device:
        """What the kernel process runs the cases on: CUDA, or the core's tile interpreter."""
        ...

    @property
    def timed(self) -> bool:
        """Whether the plan ends with the timed shape, checked and then timed."""
        ...

    def prepare(self, session: Session, attempt: Attempt) -> None:
        """Work to start once the kernels are built, before the kernel process runs them."""
        ...

    def finish(self, report: Report, attempt: Attempt) -> Report:
        """The report with what this route adds, once the cases ran or the file failed to load."""
        ...
