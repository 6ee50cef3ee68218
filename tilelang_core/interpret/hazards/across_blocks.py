"""Hazards across blocks: blocks are never ordered, so a global element one block writes (not atomically)
and another block reads or writes is a ``data-race``. Shadow state is kept only for the global buffers
the kernel writes, two small codes per element (the last writer and reader), and, for ``tilescope
run``, the thread of each element's last write.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tilescope.core.interpret.context import Stop
from tilescope.core.interpret.hazards.witness import Witness
from tilescope.core.model import HazardAccess

_NONE = -1
_MAX_CODES = 32000
"""Shadow codes are int16: two bytes per element of each written global buffer."""


class _Shadow:
    """Per element of one global buffer: the last writer and reader, as codes into ``AcrossBlocks._who``,
    and (for ``tilescope run``) the thread of the last write, where it is known."""

    def __init__(self, shape: tuple[int, ...], threads: bool) -> None:
        self.writer = np.full(shape, _NONE, dtype=np.int16)
        self.reader = np.full(shape, _NONE, dtype=np.int16)
        self.thread = np.full(shape, _NONE, dtype=np.int16) if threads else None


class AcrossBlocks:
    """The shadow state of the written global buffers, and the races it shows between blocks."""

    def __init__(self, witness: Witness, written: set[str], keep_writers: bool) -> None:
        self.witness = witness
        self.written = written
        """Global buffers the kernel stores to: only those can race across blocks."""
        self.keep_writers = keep_writers
        """Remember each output element's last writing thread, for ``writer_of``."""
        self._by_name: dict[str, _Shadow] = {}
        self._shadows: dict[int, _Shadow] = {}
        self._who: list[tuple[tuple[int, ...], int, bool, str]] = []
        """(block, line, atomic, thread words) of every recorded global access, by code."""
        self._codes: dict[tuple[tuple[int, ...], int, bool], int] = {}

    def forget(self) -> None:
        """A new launch of the same kernel: everything before it is ordered before it."""
        self._shadows.clear()

    def _code(self, line: int, atomic: bool) -> int:
        block = self.witness.block()
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
        if shadow.thread is None or not self.witness.frame.lanes:
            return
        full = self.witness.lanes()
        threads = self.witness.threads.of(self.witness.frame.loops)
        if threads is None or threads.shape != full:
            return
        try:
            flat, mask = self.witness.flat(memory, arrays, live, full)
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
        second = HazardAccess(line, now_write, list(self.witness.block()), who)
        self.witness.add("data-race", memory, index, first, second, count, True)

    def _who_touched(self, memory: Any, flat: int, access: tuple[list[Any], np.ndarray | None]) -> str:
        """The lane of this access that touched element ``flat``, in words."""
        if not self.witness.frame.lanes:
            return "a thread"
        full = self.witness.lanes()
        try:
            lanes, mask = self.witness.flat(memory, access[0], access[1], full)
        except ValueError:
            return "a thread"
        hit = np.flatnonzero((lanes.reshape(-1) == flat) & mask.reshape(-1))
        if hit.size == 0:
            return "a thread"
        threads = self.witness.threads.of(self.witness.frame.loops)
        return self.witness.lane(int(hit[0]), full, threads if threads is not None and threads.shape == full else None)

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

    def read(self, memory: Any, arrays: list[Any], live: np.ndarray | None, line: int) -> None:
        touched = self._touched(memory, arrays, live)
        if touched is None:
            return
        shadow, flat = touched
        writers = shadow.writer.reshape(-1)[flat]
        clash = self._other(writers, self.witness.block())
        if clash.any():
            self._report_first(memory, flat, writers, clash, True, line, False, (arrays, live))
        shadow.reader.reshape(-1)[flat] = self._code(line, False)

    def write(
        self, memory: Any, arrays: list[Any], values: Any, live: np.ndarray | None, line: int, *, atomic: bool
    ) -> None:
        touched = self._touched(memory, arrays, live)
        if touched is None:
            return
        shadow, flat = touched
        block = self.witness.block()
        writers = shadow.writer.reshape(-1)[flat]
        clash = self._other(writers, block)
        if not atomic and values is not None and clash.any():
            new = self._new_values(memory, arrays, values, live, flat)
            if new is not None:
                old = memory.data.reshape(-1)[flat]
                clash &= (old != new) & ((old == old) | (new == new))  # NaN over NaN is the same value too
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
