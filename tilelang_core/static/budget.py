"""Budgets of work and of size, so that no text can make the static tier wait or fill the memory.

Every expression node evaluated, every item a comprehension or builtin walks (whether or not a
filter lets it through), every statement and call the run-along follows is one step. The
run-along of a file (``flow``, the one part that loops, recurses and follows calls) spends one
budget of ``RUN_STEPS`` steps and ``RUN_SECONDS``; an expression evaluated on its own (a default,
a shape, a module constant) spends one of ``EXPRESSION_STEPS`` and ``EXPRESSION_SECONDS``. So an
analysis costs at most a fixed amount plus an amount per expression of the text: linear in the
document, whatever it computes. Past a budget ``charge`` raises ``OverBudget``, what is left to
evaluate is unknown (a cheap answer, never a wait), and ``analyze_source`` says where in a
``not-evaluated`` note.

Size is bounded the same way: no value evaluated holds more than ``MAX_SIZE`` characters and
items (``symbolic.size`` measures one), and building or measuring a value costs a step per
``UNITS_PER_STEP`` of its size, so a run-along builds at most ``RUN_STEPS * UNITS_PER_STEP`` in
all. A builder predicts its result's size before building it (``len(s) * n``, ``len(s) +
count * (len(new) - len(old))``); past the limit nothing is built and the budget ends there
(``too_large``), as when it runs out of steps: the value is unknown and the note says why.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import NoReturn

RUN_STEPS = 60_000
"""Steps one run-along may spend: three times what the most demanding of TileLang's examples needs (18,437)."""
RUN_SECONDS = 0.5
EXPRESSION_STEPS = 20_000
EXPRESSION_SECONDS = 0.2
_CLOCK_EVERY = 1024
"""Steps between two looks at the clock."""
MAX_SIZE = 1 << 16
"""The largest value evaluated, in characters of its strings plus items of its containers (65,536):
size lists, config dicts and dtype names are far smaller; 16 M items of a split are not."""
UNITS_PER_STEP = 64
"""Characters or items built (or measured) for the price of one step."""


class OverBudget(Exception):
    """The budget is spent: what is still to evaluate under it is not evaluated."""


@dataclass
class Budget:
    steps: int
    seconds: float
    spent: int = 0
    exceeded: bool = False
    by_time: bool = False
    """Whether the clock ran out first (the steps are deterministic, the clock depends on the machine)."""
    line: int | None = None
    """The file line being evaluated when the budget ran out, where the run-along knows it."""
    by_size: bool = False
    """Whether a value larger than ``MAX_SIZE`` ended it (rather than the steps or the clock)."""

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.seconds

    def charge(self, steps: int = 1) -> None:
        """Spend ``steps``; ``OverBudget`` once the steps or the time are spent, and ever after."""
        if self.exceeded:
            raise OverBudget
        before = self.spent
        self.spent += steps
        if self.spent > self.steps:
            self.exceeded = True
        elif self.spent // _CLOCK_EVERY != before // _CLOCK_EVERY and time.monotonic() > self._deadline:
            self.exceeded = self.by_time = True
        if self.exceeded:
            raise OverBudget

    def at(self, line: int) -> None:
        """Where the budget ran out, kept from the innermost statement that saw it."""
        if self.exceeded and self.line is None:
            self.line = line


_current: ContextVar[Budget | None] = ContextVar("tilescope_static_budget", default=None)
_spent: ContextVar[list[Budget] | None] = ContextVar("tilescope_static_spent", default=None)


@contextmanager
def budgeted(steps: int, seconds: float) -> Iterator[Budget]:
    """Run under a fresh budget, or under the one already running (an expression of the run-along
    spends the run-along's); a budget that ran out is kept for ``collected``."""
    outer = _current.get()
    if outer is not None:
        yield outer
        return
    mine = Budget(steps, seconds)
    token = _current.set(mine)
    try:
        yield mine
    finally:
        _current.reset(token)
        spent = _spent.get()
        if mine.exceeded and spent is not None:
            spent.append(mine)


@contextmanager
def collected() -> Iterator[list[Budget]]:
    """The budgets that ran out while this runs (one analysis)."""
    spent: list[Budget] = []
    token = _spent.set(spent)
    try:
        yield spent
    finally:
        _spent.reset(token)


def report(spent: list[Budget]) -> None:
    """Count budgets that ran out in a reading done before, now reused, for the current analysis."""
    collector = _spent.get()
    if collector is not None:
        collector.extend(spent)


def charge(steps: int = 1) -> None:
    """Spend ``steps`` of the running budget (nothing outside one)."""
    budget = _current.get()
    if budget is not None:
        budget.charge(steps)


def current() -> Budget | None:
    return _current.get()


def too_large() -> NoReturn:
    """A value would exceed ``MAX_SIZE``: it is not built, and the running budget ends here."""
    budget = _current.get()
    if budget is not None and not budget.exceeded:
        budget.exceeded = budget.by_size = True
    raise OverBudget


def charge_size(units: int) -> None:
    """Pay for building (or measuring) a value of ``units`` characters and items, predicted before it
    is built: ``too_large`` past ``MAX_SIZE``."""
    if units > MAX_SIZE:
        too_large()
    if units >= UNITS_PER_STEP:
        charge(units // UNITS_PER_STEP)
