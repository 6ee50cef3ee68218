"""What the grader measured in an output: plain records without torch, so that whatever only reads a
report (the shell talking to the warm grading service, the app) imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Comparison:
    shape: list[int]
    total: int
    wrong: int
    atol: float
    rtol: float
    first_wrong: list[int] | None
    """The first wrong element's index, in row-major order."""
    expected: float | None
    got: float | None
    max_abs_error: float
    max_rel_error: float
    """Against |expected|, floored at ``atol`` so that near-zero expected values do not explode it."""
    heatmap: list[list[float]]
    """The fraction of wrong elements per cell of a coarse grid over the output (rows x columns)."""
    nan: int = 0
    """Elements that are NaN where a number was due; the error figures above leave them out."""

    @property
    def abs_error_words(self) -> str:
        """``max abs error 0.5``, or ``max abs error nan`` when an element is NaN where a number was due."""
        if self.nan:
            return f"max abs error nan ({self.nan} NaN where numbers were due)"
        return f"max abs error {self.max_abs_error:.3g}"

    @property
    def ok(self) -> bool:
        return self.wrong == 0


@dataclass(frozen=True)
class GuardReport:
    """Elements written in the guard before and after one tensor, counted exactly within the guard."""

    before: int
    after: int
    first_after: int | None
    """How far past the end (in elements, 0 = right after it) the first stray write landed."""
    first_before: int | None
    """How far before the start (in elements, 1 = right before it) the nearest stray write landed."""
    band: int = 0
    """Elements in each guard: stray writes farther away than this are not seen here."""

    @property
    def ok(self) -> bool:
        return self.before == 0 and self.after == 0
