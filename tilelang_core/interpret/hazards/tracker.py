"""The interpreter's access observer: the accesses that nothing orders, each with a witness.

TileLang places every barrier between statements itself (``tl.ThreadSync`` runs on every kernel,
per-thread code included), so what it cannot fix for the user is of two kinds, and those are what
is looked for:

* inside one statement, between threads: two threads storing different values to one shared or
  global element (``data-race``), or one thread overwriting an element another thread reads in the
  same statement (``missing-barrier``: the read needs a barrier before the write, which only a
  second statement can give). Lanes of a ``T.Parallel`` loop are iterations; ``ThreadMap`` says
  which thread runs each, and iterations of one thread are not a hazard;
* across blocks: blocks are never ordered, so a global element one block writes (not atomically)
  and another block reads or writes is a ``data-race``.

Fragments and ``local`` buffers belong to one thread each and are not tracked. The across-block rule
and its shadow state are ``across_blocks``; witnesses and the folded findings are ``witness``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilescope.core.interpret.hazards.across_blocks import AcrossBlocks
from tilescope.core.interpret.hazards.threads import ThreadMap
from tilescope.core.interpret.hazards.witness import Witness
from tilescope.core.model import Hazard, HazardAccess

_SHARED = ("shared", "shared.dyn")


class Tracker:
    """Collects hazards over one interpreted launch; ``hazards()`` gives them folded by lines."""

    def __init__(self, threads: ThreadMap, written: set[str], *, keep_writers: bool = False) -> None:
        self.threads = threads
        self.witness = Witness(threads)
        self.blocks = AcrossBlocks(self.witness, written, keep_writers)
        self.atomics = 0
        """Non-zero inside a tile-level atomic: its read-modify-write is one atomic access."""
        self._reads: list[tuple[Any, list[np.ndarray], np.ndarray | None, int]] | None = None

    @property
    def frame(self) -> Any:
        return self.witness.frame

    def attach(self, frame: Any) -> None:
        self.witness.frame = frame

    def forget_blocks(self) -> None:
        """A new launch of the same kernel: everything before it is ordered before it."""
        self.blocks.forget()

    def lane_words(self, lane: tuple[int, tuple[int, ...]]) -> str | None:
        """A finding's first offending lane in words (``thread 3 (i=0, j=6)``)."""
        return self.witness.lane_words(lane)

    def hazards(self) -> list[Hazard]:
        return self.witness.hazards()

    def writer_of(self, name: str, index: list[int]) -> str | None:
        """Who last wrote ``name[index]``: ``thread 7 of block (0, 1) at line 30``, or ``None``."""
        return self.blocks.writer_of(name, index)

    # -- one statement ----------------------------------------------------------------------

    def begin_statement(self) -> None:
        self._reads = []

    def end_statement(self) -> None:
        self._reads = None

    def read(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        if memory.scope == "global":
            self.blocks.read(memory, arrays, live, line)
        if self._reads is not None and self.frame.lanes and memory.scope in (*_SHARED, "global"):
            self._reads.append((memory, arrays, live, line))

    def write(self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int) -> None:
        if memory.scope not in (*_SHARED, "global"):
            return
        if self._reads is not None and self.frame.lanes:
            self._statement(memory, arrays, values, live, line)
        if memory.scope == "global":
            self.blocks.write(memory, arrays, values, live, line, atomic=False)

    def atomic(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        if memory.scope == "global":
            self.blocks.write(memory, arrays, None, live, line, atomic=True)

    def box(self, memory: Any, where: tuple[slice, ...], write: bool, line: int, values: Any = None) -> None:
        """A tile operation's box: cooperative inside its block (TileLang synchronises around it),
        so only the across-block rule applies."""
        if memory.scope != "global":
            return
        grids = np.ogrid[where]
        arrays = [np.asarray(g) for g in grids]
        if write:
            self.blocks.write(memory, arrays, values, None, line, atomic=self.atomics > 0)
        elif self.atomics == 0:
            self.blocks.read(memory, arrays, None, line)

    def _statement(self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int) -> None:
        full = self.witness.lanes()
        try:
            flat, mask = self.witness.flat(memory, arrays, live, full)
        except ValueError:
            return
        threads = self.threads.of(self.frame.loops)
        confirmed = threads is not None and threads.shape == full
        thread = threads if confirmed and threads is not None else np.arange(flat.size).reshape(full)
        lanes = np.flatnonzero(mask)
        if lanes.size < 2 and not self._reads:
            return
        w_elem, w_thread = flat.reshape(-1)[lanes], thread.reshape(-1)[lanes]
        order = np.lexsort((w_thread, w_elem))
        w_elem, w_thread, w_lane = w_elem[order], w_thread[order], lanes[order]
        value = np.broadcast_to(np.asarray(values), full).reshape(-1)[w_lane]
        block = list(self.witness.block())
        if w_elem.size >= 2:
            differ = value[1:] != value[:-1]
            if value.dtype.kind in "fc":
                differ &= ~(np.isnan(value[1:]) & np.isnan(value[:-1]))
            clash = (w_elem[1:] == w_elem[:-1]) & (w_thread[1:] != w_thread[:-1]) & differ
            if clash.any():
                k = int(np.flatnonzero(clash)[0])
                index = [int(i) for i in np.unravel_index(int(w_elem[k]), memory.shape)]
                by_thread = thread if confirmed else None
                first = HazardAccess(line, True, block, self.witness.lane(int(w_lane[k]), full, by_thread))
                second = HazardAccess(line, True, block, self.witness.lane(int(w_lane[k + 1]), full, by_thread))
                self.witness.add("data-race", memory, index, first, second, int(clash.sum()), confirmed)
                return
        for other, r_arrays, r_live, r_line in self._reads or []:
            if other is not memory:
                continue
            try:
                r_flat, r_mask = self.witness.flat(memory, r_arrays, r_live, full)
            except ValueError:
                continue
            r_lanes = np.flatnonzero(r_mask)
            r_elem, r_thread = r_flat.reshape(-1)[r_lanes], thread.reshape(-1)[r_lanes]
            at = np.clip(np.searchsorted(w_elem, r_elem), 0, w_elem.size - 1)
            hit = (w_elem[at] == r_elem) & (w_thread[at] != r_thread)
            if not hit.any():
                continue
            k = int(np.flatnonzero(hit)[0])
            index = [int(i) for i in np.unravel_index(int(r_elem[k]), memory.shape)]
            by_thread = thread if confirmed else None
            first = HazardAccess(r_line, False, block, self.witness.lane(int(r_lanes[k]), full, by_thread))
            second = HazardAccess(line, True, block, self.witness.lane(int(w_lane[at[k]]), full, by_thread))
            # A read-modify-write that several threads make of one element loses updates even when
            # they store the same value (``hist[b] += 1``): that is a race, not a barrier's job.
            shared_writes = (w_elem[1:] == w_elem[:-1]) & (w_thread[1:] != w_thread[:-1])
            many = np.isin(r_elem[hit], w_elem[1:][shared_writes])
            if many.any():
                k = int(np.flatnonzero(hit)[int(np.flatnonzero(many)[0])])
                index = [int(i) for i in np.unravel_index(int(r_elem[k]), memory.shape)]
                at_k = int(at[k])
                twin = at_k + 1 if at_k + 1 < w_elem.size and w_elem[at_k + 1] == w_elem[at_k] else at_k - 1
                first = HazardAccess(line, True, block, self.witness.lane(int(w_lane[at_k]), full, by_thread))
                second = HazardAccess(line, True, block, self.witness.lane(int(w_lane[twin]), full, by_thread))
                self.witness.add("data-race", memory, index, first, second, int(many.sum()), confirmed)
                return
            self.witness.add("missing-barrier", memory, index, first, second, int(hit.sum()), confirmed)
            return
