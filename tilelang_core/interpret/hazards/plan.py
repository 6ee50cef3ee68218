"""Which blocks the hazard check interprets, and when it stops.

Interpreting a whole grid at the file's own sizes can take minutes on a CPU, and the blocks where
kernels go wrong are few: the first ones (overlaps between neighbours show between blocks 0 and
1), and the last one along each axis, which is the ragged tail when the size is not a multiple
of the tile. So along the first grid axis the plan runs blocks 0, 1, the one before the last and
the last; along the others 0 and the last. A time budget ends the run between loop iterations;
the check then says which blocks ran.
"""

from __future__ import annotations

import time
from typing import Any

from tilescope.core.interpret.context import Stop
from tilescope.core.interpret.memory import Memory


def chosen(axis: int, extent: int) -> list[int]:
    """The blocks of one grid axis to run, in order."""
    picks = [0, 1, extent - 2, extent - 1] if axis == 0 else [0, extent - 1]
    return sorted({b for b in picks if 0 <= b < extent})


class Plan:
    """A frame's plan (``Frame.plan``): blocks per axis, the ones that ran, and the time budget."""

    def __init__(self, budget_s: float) -> None:
        self.budget_s = budget_s
        self.start = time.perf_counter()
        self.ran: list[list[int]] = []
        self._ticks = 0
        self.launches = 0
        self.partial = False
        """Whether some launch ran fewer blocks than its grid has."""

    def blocks(self, axis: int, extent: int) -> list[int]:
        picked = chosen(axis, extent)
        self.partial = self.partial or len(picked) < extent
        return picked

    def start_launch(self, frame: Any) -> None:
        """A kernel of several launches starts its next one: where blocks of an earlier launch were
        skipped, what they would have written counts as written (the tracker, for its part,
        forgets the earlier launches' blocks: launches run in order)."""
        self.launches += 1
        if self.launches > 1 and self.partial:
            for value in frame.values:
                if isinstance(value, Memory) and value.scope == "global":
                    value.written[...] = True

    def start_block(self, block: list[int], axis: int) -> None:
        self._check()
        self.ran.append(list(block[: axis + 1]))

    def blocks_run(self) -> list[list[int]]:
        """Every block that started, as its full index (outer-axis entries are dropped)."""
        depth = max((len(b) for b in self.ran), default=0)
        return [b for b in self.ran if len(b) == depth]

    def tick(self) -> None:
        self._ticks += 1
        if self._ticks & 15 == 0:
            self._check()

    def _check(self) -> None:
        if time.perf_counter() - self.start > self.budget_s:
            where = f" in block {tuple(self.ran[-1])}" if self.ran else ""
            raise Stop(f"stopped after {self.budget_s:g} s{where}")
