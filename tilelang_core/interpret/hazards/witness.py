"""Where an access of the interpreted kernel happened, in words (``thread 3 (i=0, j=6)`` of a block), and
the hazards found so far, folded by lines: what every rule of the tracker reports through.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilescope.core.interpret.hazards.threads import ThreadMap, iteration
from tilescope.core.model import Hazard, HazardAccess, HazardKind


class Witness:
    """The frame being interpreted (its block, its lanes, the threads that run them) and the findings."""

    def __init__(self, threads: ThreadMap) -> None:
        self.threads = threads
        self.frame: Any = None
        self._found: dict[tuple[str, str, int, int], list[Any]] = {}

    def block(self) -> tuple[int, ...]:
        return tuple(self.frame.findings.block)

    def lanes(self) -> tuple[int, ...]:
        """The extents of the frame's lane axes, outermost loop last (the lanes' array shape)."""
        return tuple(count for _, _, count, _ in reversed(self.frame.loops))

    def lane(self, flat: int, shape: tuple[int, ...], threads: np.ndarray | None) -> str:
        loops = self.frame.loops
        if not loops:
            return "every thread"
        position = tuple(int(p) for p in np.unravel_index(flat, shape)) if shape else ()
        if loops[0][0] == "threadIdx.x":
            return f"thread {position[-1]}" if position else "every thread"
        words = iteration(loops, position)
        if threads is not None and len(shape) == len(loops):
            return f"thread {int(threads.reshape(-1)[flat])} ({words})"
        return f"iteration {words}" if words else "every iteration"

    def lane_words(self, lane: tuple[int, tuple[int, ...]]) -> str | None:
        """A finding's first offending lane in words (``thread 3 (i=0, j=6)``)."""
        if self.frame is None or not self.frame.loops:
            return None
        flat, shape = lane
        threads = self.threads.of(self.frame.loops)
        if threads is not None and threads.shape != shape:
            threads = None
        return self.lane(flat, shape, threads)

    @staticmethod
    def flat(
        memory: Any, arrays: list[Any], live: np.ndarray | None, full: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The element each lane of an access touches (as a flat index, clipped into the buffer), and which
        lanes are live."""
        shaped = [np.broadcast_to(np.asarray(a), full) for a in arrays]
        mask = np.ones(full, dtype=bool) if live is None else np.broadcast_to(live, full)
        clipped = [np.clip(a, 0, max(0, s - 1)) for a, s in zip(shaped, memory.shape, strict=True)]
        flat = np.ravel_multi_index(clipped, memory.shape) if memory.shape else np.zeros(full, dtype=np.int64)
        return np.asarray(flat).reshape(full), mask

    def add(
        self,
        kind: HazardKind,
        memory: Any,
        index: list[int],
        first: HazardAccess,
        second: HazardAccess,
        count: int,
        confirmed: bool,
    ) -> None:
        key = (kind, str(memory.name), first.line, second.line)
        entry = self._found.get(key)
        if entry is None:
            self._found[key] = [
                Hazard(kind, str(memory.name), str(memory.scope), index, first, second, 0, confirmed),
                count,
            ]
        else:
            entry[1] += count

    def hazards(self) -> list[Hazard]:
        out = []
        for hazard, count in self._found.values():
            out.append(
                Hazard(
                    hazard.kind,
                    hazard.buffer,
                    hazard.scope,
                    hazard.index,
                    hazard.first,
                    hazard.second,
                    int(count),
                    hazard.confirmed,
                )
            )
        return out
