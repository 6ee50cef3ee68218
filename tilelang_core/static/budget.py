"""One budget of work per analysis, so that no text can make the static tier wait.

Every expression node evaluated, every item a comprehension or builtin walks (whether or not a
filter lets it through), every statement and call the run-along follows is one step. An analysis
may spend ``STEPS`` steps and ``SECONDS`` of wall-clock time (the guard for work a step count
misjudges); past either, ``charge`` raises ``OverBudget``, evaluation gives unknown values from then
on (a cheap answer, never a wait), and ``analyze_source`` says where in a ``not-evaluated`` note.

Running out first abandons the run-along (what it reached stands) and opens a small reserve
(``RESERVE`` steps, ``RESERVE_SECONDS``), so that the kernels' own expressions (a default
``block_M=128``) are still read; past the reserve, every value is unknown.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

STEPS = 60_000
"""Steps one analysis may spend: three times what the most demanding of TileLang's examples needs (18,437)."""
SECONDS = 0.75
"""Wall-clock time one analysis may spend evaluating."""
RESERVE = 20_000
RESERVE_SECONDS = 0.15
_CLOCK_EVERY = 1024
"""Steps between two looks at the clock."""


class OverBudget(Exception):
    """The analysis has spent its budget: what is still to evaluate is not evaluated."""


@dataclass
class Budget:
    steps: int = STEPS
    seconds: float = SECONDS
    spent: int = 0
    exceeded: bool = False
    line: int | None = None
    """The file line being evaluated when the budget ran out, where the run-along knows it."""

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.seconds
        self._limit = self.steps
        self._spent_out = False

    def charge(self, steps: int = 1) -> None:
        """Spend ``steps``; ``OverBudget`` when the steps or the time run out (the budget, then the
        reserve), and ever after the reserve."""
        if self._spent_out:
            raise OverBudget
        before = self.spent
        self.spent += steps
        late = self.spent // _CLOCK_EVERY != before // _CLOCK_EVERY and time.monotonic() > self._deadline
        if self.spent <= self._limit and not late:
            return
        if self.exceeded:
            self._spent_out = True
        else:
            self.exceeded = True
            self._limit = self.spent + RESERVE
            self._deadline = time.monotonic() + RESERVE_SECONDS
        raise OverBudget

    def check(self) -> None:
        """``OverBudget`` once the budget (not only the reserve) is spent: for following the run."""
        if self.exceeded:
            raise OverBudget

    def at(self, line: int) -> None:
        """Where the budget ran out, kept from the innermost statement that saw it."""
        if self.line is None:
            self.line = line


_current: ContextVar[Budget | None] = ContextVar("tilescope_static_budget", default=None)


@contextmanager
def budgeted(budget: Budget | None = None) -> Iterator[Budget]:
    """Run an analysis under ``budget`` (a fresh one by default); nested calls share the outer one."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    mine = budget if budget is not None else Budget()
    token = _current.set(mine)
    try:
        yield mine
    finally:
        _current.reset(token)


def charge(steps: int = 1) -> None:
    """Spend ``steps`` of the current analysis's budget (nothing outside an analysis)."""
    budget = _current.get()
    if budget is not None:
        budget.charge(steps)


def current() -> Budget | None:
    return _current.get()


def check() -> None:
    """``OverBudget`` once the current analysis's budget is spent (its reserve is for plain values)."""
    budget = _current.get()
    if budget is not None:
        budget.check()
