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

Fragments and ``local`` buffers belong to one thread each and are not tracked. Shadow state for
global buffers is kept only for the buffers the kernel writes, two small codes per element.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilescope.core.interpret.context import Stop
from tilescope.core.interpret.hazards.threads import ThreadMap, iteration
from tilescope.core.model import Hazard, HazardAccess, HazardKind

_SHARED = ("shared", "shared.dyn")
_NONE = -1
_MAX_CODES = 32000
"""Shadow codes are int16: two bytes per element of each written global buffer."""


class _Shadow:
    """Per element of one global buffer: the last writer and reader, as codes into ``Tracker._who``,
    and (for ``tilescope run``) the thread of the last write, where it is known."""

    def __init__(self, shape: tuple[int, ...], threads: bool) -> None:
        self.writer = np.full(shape, _NONE, dtype=np.int16)
        self.reader = np.full(shape, _NONE, dtype=np.int16)
        self.thread = np.full(shape, _NONE, dtype=np.int16) if threads else None


class Tracker:
    """Collects hazards over one interpreted launch; ``hazards()`` gives them folded by lines."""

    def __init__(self, threads: ThreadMap, written: set[str], *, keep_writers: bool = False) -> None:
        self.threads = threads
        self.keep_writers = keep_writers
        """Remember each output element's last writing thread, for ``writer_of``."""
        self._by_name: dict[str, _Shadow] = {}
        self.written = written
        """Global buffers the kernel stores to: only those can race across blocks."""
        self.atomics = 0
        """Non-zero inside a tile-level atomic: its read-modify-write is one atomic access."""
        self.frame: Any = None
        self._reads: list[tuple[Any, list[np.ndarray], np.ndarray | None, int]] | None = None
        self._shadows: dict[int, _Shadow] = {}
        self._who: list[tuple[tuple[int, ...], int, bool, str]] = []
        """(block, line, atomic, thread words) of every recorded global access, by code."""
        self._codes: dict[tuple[tuple[int, ...], int, bool], int] = {}
        self._found: dict[tuple[str, str, int, int], list[Any]] = {}

    def attach(self, frame: Any) -> None:
        self.frame = frame

    def forget_blocks(self) -> None:
        """A new launch of the same kernel: everything before it is ordered before it."""
        self._shadows.clear()

    # -- witnesses --------------------------------------------------------------------------

    def _block(self) -> tuple[int, ...]:
        return tuple(self.frame.findings.block)

    def _lane(self, flat: int, shape: tuple[int, ...], threads: np.ndarray | None) -> str:
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
        return self._lane(flat, shape, threads)

    def _add(
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

    # -- one statement ----------------------------------------------------------------------

    def begin_statement(self) -> None:
        self._reads = []

    def end_statement(self) -> None:
        self._reads = None

    def _lanes(self) -> tuple[int, ...]:
        return tuple(count for _, _, count, _ in reversed(self.frame.loops))

    def read(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        if memory.scope == "global":
            self._global_read(memory, arrays, live, line)
        if self._reads is not None and self.frame.lanes and memory.scope in (*_SHARED, "global"):
            self._reads.append((memory, arrays, live, line))

    def write(self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int) -> None:
        if memory.scope not in (*_SHARED, "global"):
            return
        if self._reads is not None and self.frame.lanes:
            self._statement(memory, arrays, values, live, line)
        if memory.scope == "global":
            self._global_write(memory, arrays, values, live, line, atomic=False)

    def atomic(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        if memory.scope == "global":
            self._global_write(memory, arrays, None, live, line, atomic=True)

    def box(self, memory: Any, where: tuple[slice, ...], write: bool, line: int, values: Any = None) -> None:
        """A tile operation's box: cooperative inside its block (TileLang synchronises around it),
        so only the across-block rule applies."""
        if memory.scope != "global":
            return
        grids = np.ogrid[where]
        arrays = [np.asarray(g) for g in grids]
        if write:
            self._global_write(memory, arrays, values, None, line, atomic=self.atomics > 0)
        elif self.atomics == 0:
            self._global_read(memory, arrays, None, line)

    def _flat(
        self, memory: Any, arrays: list[Any], live: np.ndarray | None, full: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray]:
        shaped = [np.broadcast_to(np.asarray(a), full) for a in arrays]
        mask = np.ones(full, dtype=bool) if live is None else np.broadcast_to(live, full)
        clipped = [np.clip(a, 0, max(0, s - 1)) for a, s in zip(shaped, memory.shape, strict=True)]
        flat = np.ravel_multi_index(clipped, memory.shape) if memory.shape else np.zeros(full, dtype=np.int64)
        return np.asarray(flat).reshape(full), mask

    def _statement(self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int) -> None:
        full = self._lanes()
        try:
            flat, mask = self._flat(memory, arrays, live, full)
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
        block = list(self._block())
        if w_elem.size >= 2:
            differ = value[1:] != value[:-1]
            if value.dtype.kind in "fc":
                differ &= ~(np.isnan(value[1:]) & np.isnan(value[:-1]))
            clash = (w_elem[1:] == w_elem[:-1]) & (w_thread[1:] != w_thread[:-1]) & differ
            if clash.any():
                k = int(np.flatnonzero(clash)[0])
                index = [int(i) for i in np.unravel_index(int(w_elem[k]), memory.shape)]
                first = HazardAccess(line, True, block, self._lane(int(w_lane[k]), full, thread if confirmed else None))
                second = HazardAccess(
                    line, True, block, self._lane(int(w_lane[k + 1]), full, thread if confirmed else None)
                )
                self._add("data-race", memory, index, first, second, int(clash.sum()), confirmed)
                return
        for other, r_arrays, r_live, r_line in self._reads or []:
            if other is not memory:
                continue
            try:
                r_flat, r_mask = self._flat(memory, r_arrays, r_live, full)
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
            witness = thread if confirmed else None
            first = HazardAccess(r_line, False, block, self._lane(int(r_lanes[k]), full, witness))
            second = HazardAccess(line, True, block, self._lane(int(w_lane[at[k]]), full, witness))
            # A read-modify-write that several threads make of one element loses updates even when
            # they store the same value (``hist[b] += 1``): that is a race, not a barrier's job.
            shared_writes = (w_elem[1:] == w_elem[:-1]) & (w_thread[1:] != w_thread[:-1])
            many = np.isin(r_elem[hit], w_elem[1:][shared_writes])
            if many.any():
                k = int(np.flatnonzero(hit)[int(np.flatnonzero(many)[0])])
                index = [int(i) for i in np.unravel_index(int(r_elem[k]), memory.shape)]
                at_k = int(at[k])
                twin = at_k + 1 if at_k + 1 < w_elem.size and w_elem[at_k + 1] == w_elem[at_k] else at_k - 1
                first = HazardAccess(line, True, block, self._lane(int(w_lane[at_k]), full, witness))
                second = HazardAccess(line, True, block, self._lane(int(w_lane[twin]), full, witness))
                self._add("data-race", memory, index, first, second, int(many.sum()), confirmed)
                return
            self._add("missing-barrier", memory, index, first, second, int(hit.sum()), confirmed)
            return

    # -- across blocks ----------------------------------------------------------------------

    def _code(self, line: int, atomic: bool) -> int:
        block = self._block()
        key = (block, line, atomic)
        code = self._codes.get(key)
        if code is None:
            if len(self._who) >= _MAX_CODES:
                raise Stop(f"stopped: more than {_MAX_CODES} (block, line) pairs to remember")
            code = self._codes[key] = len(self._who)
            self._who.append((block, line, atomic, "a thread"))
        return code

    def _shadow(self, memory: Any) -> _Shadow | None:
        if str(memory.name) not in self.written:
            return None
        shadow = self._shadows.get(id(memory))
        if shadow is None:
            shadow = self._shadows[id(memory)] = _Shadow(memory.shape, self.keep_writers)
            self._by_name[str(memory.name)] = shadow
        return shadow

    def writer_of(self, name: str, index: list[int]) -> str | None:
        """Who last wrote ``name[index]``: ``thread 7 of block (0, 1) at line 30``, or ``None``."""
        shadow = self._by_name.get(name)
        if shadow is None:
            return None
        code = int(shadow.writer[tuple(index)])
        if code == _NONE:
            return None
        block, line, atomic, _ = self._who[code]
        thread = int(shadow.thread[tuple(index)]) if shadow.thread is not None else _NONE
        who = f"thread {thread} of block {block}" if thread != _NONE else f"block {block}"
        return f"{who} at line {line}" + (" (atomically)" if atomic else "")

    def _record_threads(self, shadow: _Shadow, memory: Any, arrays: list[Any], live: np.ndarray | None) -> None:
        if shadow.thread is None or not self.frame.lanes:
            return
        full = self._lanes()
        threads = self.threads.of(self.frame.loops)
        if threads is None or threads.shape != full:
            return
        try:
            flat, mask = self._flat(memory, arrays, live, full)
        except ValueError:
            return
        shadow.thread.reshape(-1)[flat[mask]] = threads[mask]

    def _elements(self, memory: Any, arrays: list[Any], live: np.ndarray | None) -> np.ndarray:
        shaped = np.broadcast_arrays(*[np.asarray(a) for a in arrays], *([] if live is None else [live]))
        index = shaped[: len(arrays)]
        mask = shaped[-1] if live is not None else None
        if mask is not None:
            index = [a[mask] for a in index]
        flat = np.ravel_multi_index([np.reshape(a, -1) for a in index], memory.shape) if index else np.zeros(0, int)
        return np.unique(flat)

    def _other(self, codes: np.ndarray, block: tuple[int, ...]) -> np.ndarray:
        """Positions whose code names another block's access (and not an atomic one)."""
        if codes.size == 0:
            return np.zeros(0, dtype=bool)
        table = np.array([b != block and not atomic for b, _, atomic, _ in self._who] or [False])
        return (codes != _NONE) & table[np.clip(codes, 0, None)]

    def _report(
        self,
        memory: Any,
        flat: int,
        code: int,
        write: bool,
        line: int,
        now_write: bool,
        count: int,
        access: tuple[list[Any], np.ndarray | None] | None = None,
    ) -> None:
        block, other_line, _, _ = self._who[code]
        index = [int(i) for i in np.unravel_index(flat, memory.shape)]
        first = HazardAccess(other_line, write, list(block), "a thread")
        who = self._who_touched(memory, flat, access) if access is not None else "a thread"
        second = HazardAccess(line, now_write, list(self._block()), who)
        self._add("data-race", memory, index, first, second, count, True)

    def _who_touched(self, memory: Any, flat: int, access: tuple[list[Any], np.ndarray | None]) -> str:
        """The lane of this access that touched element ``flat``, in words."""
        if not self.frame.lanes:
            return "a thread"
        full = self._lanes()
        try:
            lanes, mask = self._flat(memory, access[0], access[1], full)
        except ValueError:
            return "a thread"
        hit = np.flatnonzero((lanes.reshape(-1) == flat) & mask.reshape(-1))
        if hit.size == 0:
            return "a thread"
        threads = self.threads.of(self.frame.loops)
        return self._lane(int(hit[0]), full, threads if threads is not None and threads.shape == full else None)

    def _touched(self, memory: Any, arrays: list[Any], live: np.ndarray | None) -> tuple[_Shadow, np.ndarray] | None:
        """The shadow of a global buffer and the elements this access touches (``None``: not tracked)."""
        shadow = self._shadow(memory)
        if shadow is None:
            return None
        try:
            return shadow, self._elements(memory, arrays, live)
        except ValueError:
            return None

    def _report_first(
        self,
        memory: Any,
        flat: np.ndarray,
        codes: np.ndarray,
        clash: np.ndarray,
        write: bool,
        line: int,
        now: bool,
        access: tuple[list[Any], np.ndarray | None],
    ) -> None:
        """Report the first clashing element of ``flat`` against the access ``codes`` names there."""
        k = int(np.flatnonzero(clash)[0])
        self._report(memory, int(flat[k]), int(codes[k]), write, line, now, int(clash.sum()), access)

    def _global_read(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        touched = self._touched(memory, arrays, live)
        if touched is None:
            return
        shadow, flat = touched
        writers = shadow.writer.reshape(-1)[flat]
        clash = self._other(writers, self._block())
        if clash.any():
            self._report_first(memory, flat, writers, clash, True, line, False, (arrays, live))
        shadow.reader.reshape(-1)[flat] = self._code(line, False)

    def _global_write(
        self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int, *, atomic: bool
    ) -> None:
        touched = self._touched(memory, arrays, live)
        if touched is None:
            return
        shadow, flat = touched
        block = self._block()
        writers = shadow.writer.reshape(-1)[flat]
        clash = self._other(writers, block)
        if not atomic and values is not None and clash.any():
            new = self._new_values(memory, arrays, values, live, flat)
            if new is not None:
                clash &= memory.data.reshape(-1)[flat] != new
        if atomic and clash.any():
            clash &= np.array([not self._who[c][2] for c in writers])
        if clash.any():
            self._report_first(memory, flat, writers, clash, True, line, True, (arrays, live))
        else:
            readers = shadow.reader.reshape(-1)[flat]
            clash = self._other(readers, block)
            if clash.any():
                self._report_first(memory, flat, readers, clash, False, line, True, (arrays, live))
        shadow.writer.reshape(-1)[flat] = self._code(line, atomic)
        if shadow.thread is not None:
            shadow.thread.reshape(-1)[flat] = _NONE
            self._record_threads(shadow, memory, arrays, live)

    @staticmethod
    def _new_values(memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, flat: np.ndarray) -> Any:
        """The values this write stores at ``flat`` (sorted element order), to tell a benign
        rewrite of the same value from a race."""
        shaped = np.broadcast_arrays(
            *[np.asarray(a) for a in arrays], np.asarray(values), *([] if live is None else [live])
        )
        index, vals = shaped[: len(arrays)], shaped[len(arrays)]
        if live is not None:
            mask = shaped[-1]
            index, vals = [a[mask] for a in index], vals[mask]
        elem = np.ravel_multi_index([np.reshape(a, -1) for a in index], memory.shape)
        last = {int(e): v for e, v in zip(elem, np.reshape(vals, -1), strict=True)}
        try:
            return np.array([last[int(e)] for e in flat], dtype=memory.dtype)
        except (KeyError, ValueError):
            return None
