"""Buffers of an interpreted kernel: numpy storage, a mask of written elements, every access checked.

An access is a tuple of index arrays (or scalars) that broadcast together, with an optional lane
mask: only lanes where the mask holds touch memory. Out-of-bounds lanes and reads of elements
nothing wrote are reported to ``Findings`` by buffer, first index and line, never raised; the
access then skips the bad lanes (a read yields zero there), so one run reports every problem.

``guard`` marks the dimensions TileLang bounds-checks itself: its ``LegalizeSafeMemoryAccess``
pass wraps every global load in ``if_then_else(in bounds, load, 0)`` and every global store in
``if (in bounds)`` on each dimension whose index is not a constant. Lanes outside a guarded
dimension are masked silently, as on the GPU; only the unguarded ones are findings.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from tilescope.core.model import Finding, FindingKind

_DTYPES: dict[str, Any] = {
    "bool": np.bool_,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "bfloat16": ml_dtypes.bfloat16,
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e4m3": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float8_e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "float8_e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "float4_e2m1fn": ml_dtypes.float4_e2m1fn,
}


class NotInterpretable(Exception):
    """The kernel uses something the interpreter cannot run exactly; ``line`` says where."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def np_dtype(name: str) -> np.dtype:
    """The numpy dtype of a TVM dtype name (fp8, bf16 and fp4 from ml_dtypes)."""
    dtype = _DTYPES.get(str(name))
    if dtype is None:
        raise NotInterpretable(f"not interpretable: dtype {name} has no CPU representation")
    return np.dtype(dtype)


class Findings:
    """Every checked-access problem of a run, folded by (kind, buffer, line).

    ``block`` is the block running now (the grid loops set it); ``tracker`` is an optional access
    observer (``tilescope.core.interpret.hazards``) that every checked access of a buffer is also shown to.
    """

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, int], list[Any]] = {}
        self.block: list[int] = []
        self.launches = 0
        """Launches started so far (a PrimFunc may hold several ``T.Kernel`` launches, run in order)."""
        self.tracker: Any = None

    def add(self, kind: FindingKind, memory: Memory, index: list[int], line: int, count: int, lane: Any = None) -> None:
        key = (kind, memory.name, line)
        entry = self._found.get(key)
        if entry is None:
            where = self.tracker.lane_words(lane) if self.tracker is not None and lane is not None else None
            self._found[key] = [index, count, memory.shape, list(self.block), where]
        else:
            entry[1] += count

    def records(self) -> list[Finding]:
        return [
            Finding(kind, buffer, [int(i) for i in index], [int(s) for s in shape], line, int(count), block, where)  # type: ignore[arg-type]  # kind is one of FindingKind's literals, built above
            for (kind, buffer, line), (index, count, shape, block, where) in self._found.items()
        ]

    def __bool__(self) -> bool:
        return bool(self._found)


def _first(arrays: list[np.ndarray], where: np.ndarray) -> list[int]:
    flat = int(np.flatnonzero(where)[0])
    return [int(a.reshape(-1)[flat]) for a in arrays]


def _lane(where: np.ndarray) -> tuple[int, tuple[int, ...]]:
    """The first lane where ``where`` holds, as (flat position, lane shape), for a finding's witness."""
    return int(np.flatnonzero(where)[0]), tuple(where.shape)


class Memory:
    """One buffer: ``data`` in its dtype, ``written`` per element, and its role in the launch."""

    __slots__ = ("data", "dtype", "findings", "input", "name", "scope", "shape", "watch_writes", "written")

    def __init__(
        self,
        name: str,
        data: np.ndarray,
        findings: Findings,
        *,
        scope: str,
        initialised: bool,
        input: bool = False,
        watch_writes: bool = False,
    ) -> None:
        self.name = name
        self.data = data
        self.dtype = data.dtype
        self.shape = tuple(int(s) for s in data.shape)
        self.scope = scope
        self.findings = findings
        self.written = np.ones(self.shape, dtype=bool) if initialised else np.zeros(self.shape, dtype=bool)
        self.input = input
        self.watch_writes = watch_writes

    def _lanes(self, index: tuple[Any, ...], extra: list[Any], mask: Any) -> tuple[list[np.ndarray], np.ndarray | None]:
        parts = [*index, *extra] if mask is None else [*index, *extra, mask]
        arrays = list(np.broadcast_arrays(*parts))
        if mask is None:
            return arrays, None
        return arrays[:-1], arrays[-1]

    def _out_of_bounds(
        self, arrays: list[np.ndarray], live: np.ndarray | None, guard: tuple[bool, ...] | None
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(lanes out of bounds on an unguarded dimension, lanes live after TileLang's own guard)."""
        bad = None
        for axis, a in enumerate(arrays):
            outside = (a < 0) | (a >= self.shape[axis])
            if guard is not None and guard[axis]:
                if outside.any():
                    live = ~outside if live is None else live & ~outside
                continue
            bad = outside if bad is None else bad | outside
        if bad is not None and live is not None:
            bad &= live
        return (bad if bad is not None and bad.any() else None), live

    def _check_rank(self, indices: int, line: int) -> None:
        if indices != len(self.shape):
            raise NotInterpretable(f"{self.name} indexed with {indices} indices, has {len(self.shape)} dims", line)

    def _in_bounds(
        self,
        kind: FindingKind,
        arrays: list[np.ndarray],
        live: np.ndarray | None,
        guard: tuple[bool, ...] | None,
        line: int,
    ) -> np.ndarray | None:
        """The lanes left live once out-of-bounds ones are reported as ``kind`` (and guarded ones dropped)."""
        bad, live = self._out_of_bounds(arrays, live, guard)
        if bad is not None:
            self.findings.add(kind, self, _first(arrays, bad), line, int(bad.sum()), _lane(bad))
            live = ~bad if live is None else live & ~bad
        return live

    def load(self, index: tuple[Any, ...], mask: Any, line: int, guard: tuple[bool, ...] | None = None) -> Any:
        """Values at ``index`` for the live lanes (zero elsewhere), checked."""
        if mask is None and all(type(i) is not np.ndarray for i in index):
            return self._load_scalar(index, line, guard)
        arrays, live = self._lanes(index, [], mask)
        self._check_rank(len(arrays), line)
        live = self._in_bounds("out-of-bounds-read", arrays, live, guard, line)
        if live is not None:
            arrays = [np.where(live, a, 0) for a in arrays]
        where = tuple(arrays)
        values = self.data[where]
        unset = ~self.written[where]
        if live is not None:
            unset &= live
            values = np.where(live, values, np.zeros((), self.dtype))
        if unset.any():
            self.findings.add("uninitialised-read", self, _first(arrays, unset), line, int(unset.sum()), _lane(unset))
        tracker = self.findings.tracker
        if tracker is not None:
            tracker.read(self, arrays, live, line)
        return values

    def _load_scalar(self, index: tuple[Any, ...], line: int, guard: tuple[bool, ...] | None) -> Any:
        self._check_rank(len(index), line)
        for axis, (i, extent) in enumerate(zip(index, self.shape, strict=True)):
            if not 0 <= i < extent:
                if guard is None or not guard[axis]:
                    self.findings.add("out-of-bounds-read", self, [int(x) for x in index], line, 1)
                return self.dtype.type(0)
        where = tuple(int(i) for i in index)
        if not self.written[where]:
            self.findings.add("uninitialised-read", self, list(where), line, 1)
        tracker = self.findings.tracker
        if tracker is not None:
            tracker.read(self, list(where), None, line)
        return self.data[where]

    def store(
        self, index: tuple[Any, ...], value: Any, mask: Any, line: int, guard: tuple[bool, ...] | None = None
    ) -> None:
        """Write ``value`` at ``index`` for the live lanes, in this buffer's dtype, checked."""
        arrays, live = self._lanes(index, [value], mask)
        values = arrays.pop()
        self._check_rank(len(arrays), line)
        live = self._in_bounds("out-of-bounds-write", arrays, live, guard, line)
        tracker = self.findings.tracker
        if tracker is not None:
            tracker.write(self, arrays, values, live, line)
        if live is not None:
            if not live.any():
                return
            arrays = [a[live] for a in arrays]
            values = values[live]
        where = tuple(arrays)
        if self.watch_writes:
            self.findings.add("input-write", self, [int(a.reshape(-1)[0]) for a in arrays], line, int(np.size(values)))
        self.data[where] = cast(values, self.dtype)
        self.written[where] = True

    def atomic(
        self, index: tuple[Any, ...], value: Any, mask: Any, line: int, guard: tuple[bool, ...] | None, op: Any
    ) -> None:
        """``T.atomic_add``/``max``/``min`` on elements: every live lane's update lands, repeated
        indices included (``ufunc.at``), in lane order."""
        arrays, live = self._lanes(index, [value], mask)
        values = arrays.pop()
        live = self._in_bounds("out-of-bounds-write", arrays, live, guard, line)
        tracker = self.findings.tracker
        if tracker is not None:
            tracker.atomic(self, arrays, live, line)
        if live is not None:
            arrays, values = [a[live] for a in arrays], values[live]
        where = tuple(np.reshape(a, -1) for a in arrays)
        values = np.reshape(values, -1)
        if values.size == 0:
            return
        unset = ~self.written[where]
        if unset.any():
            self.findings.add("uninitialised-read", self, _first(list(where), unset), line, int(unset.sum()))
        if self.watch_writes:
            self.findings.add("input-write", self, [int(a[0]) for a in where], line, int(values.size))
        op.at(self.data, where, cast(values, self.dtype))
        self.written[where] = True


def cast(value: Any, dtype: np.dtype) -> Any:
    """``value`` in ``dtype`` as the GPU converts: to floats rounding to nearest even, to fp8/fp4
    saturating at the largest finite value (CUDA's ``cvt.rn.satfinite``, which TileLang's fp8 types
    use), to integers truncating toward zero."""
    array = np.asarray(value)
    if array.dtype == dtype:
        return value
    if dtype.name.startswith(("float8", "float4")):
        finite = float(ml_dtypes.finfo(dtype).max)
        out = np.clip(array.astype(np.float32), -finite, finite).astype(dtype)
    elif dtype.kind in "iu" and array.dtype.kind in "fV":
        out = np.trunc(array.astype(np.float64)).astype(dtype)
    elif dtype.kind == "b":
        out = array != 0
    else:
        out = array.astype(dtype)
    return out if out.ndim else out[()]


def _clip(starts: list[int], extents: list[int], shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """Per dimension, the part of ``[start, start + extent)`` inside ``[0, size)``, box-relative."""
    out = []
    for start, extent, size in zip(starts, extents, shape, strict=True):
        lo, hi = max(0, -start), min(extent, size - start)
        out.append((lo, max(lo, hi)))
    return out


def _outside(
    starts: list[int], extents: list[int], inside: list[tuple[int, int]], guard: tuple[bool, ...] | None
) -> tuple[list[int] | None, int]:
    """The first element of a box outside an unguarded dimension, and how many there are."""
    kept = 1
    axis_out = None
    for axis, ((lo, hi), extent) in enumerate(zip(inside, extents, strict=True)):
        if guard is not None and guard[axis]:
            kept *= extent
            continue
        kept *= hi - lo
        if axis_out is None and (lo > 0 or hi < extent):
            axis_out = axis
    if axis_out is None:
        return None, 0
    index = [s + lo if hi > lo else s for s, (lo, hi) in zip(starts, inside, strict=True)]
    lo, hi = inside[axis_out]
    index[axis_out] = starts[axis_out] + (0 if lo > 0 else hi)
    return index, int(np.prod(extents)) - kept


def read_box(memory: Memory, starts: list[int], extents: list[int], line: int, guard: tuple[bool, ...] | None) -> Any:
    """The box ``[starts, starts + extents)`` of ``memory`` as an array (slices, not gathers), with
    the same checks as ``Memory.load``: outside a guarded dimension reads zero silently."""
    inside = _clip(starts, extents, memory.shape)
    bad, count = _outside(starts, extents, inside, guard)
    if bad is not None:
        memory.findings.add("out-of-bounds-read", memory, bad, line, count)
    out = np.zeros(extents, dtype=memory.dtype)
    if any(hi <= lo for lo, hi in inside):
        return out
    source = tuple(slice(s + lo, s + hi) for s, (lo, hi) in zip(starts, inside, strict=True))
    target = tuple(slice(lo, hi) for lo, hi in inside)
    out[target] = memory.data[source]
    if memory.findings.tracker is not None:
        memory.findings.tracker.box(memory, source, False, line)
    written = memory.written[source]
    if not written.all():
        where = np.argwhere(~written)[0]
        first = [int(s.start + w) for s, w in zip(source, where, strict=True)]
        memory.findings.add("uninitialised-read", memory, first, line, int((~written).sum()))
    return out


def write_box(memory: Memory, starts: list[int], values: np.ndarray, line: int, guard: tuple[bool, ...] | None) -> None:
    """Store ``values`` (shaped like the box) at ``starts``, with ``Memory.store``'s checks."""
    extents = list(values.shape)
    inside = _clip(starts, extents, memory.shape)
    bad, count = _outside(starts, extents, inside, guard)
    if bad is not None:
        memory.findings.add("out-of-bounds-write", memory, bad, line, count)
    if any(hi <= lo for lo, hi in inside):
        return
    target = tuple(slice(s + lo, s + hi) for s, (lo, hi) in zip(starts, inside, strict=True))
    if memory.findings.tracker is not None:
        memory.findings.tracker.box(memory, target, True, line, values[tuple(slice(lo, hi) for lo, hi in inside)])
    if memory.watch_writes:
        size = int(np.prod([t.stop - t.start for t in target]))
        memory.findings.add("input-write", memory, [t.start for t in target], line, size)
    memory.data[target] = cast(values[tuple(slice(lo, hi) for lo, hi in inside)], memory.dtype)
    memory.written[target] = True
