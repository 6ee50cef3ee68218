"""Bank conflicts of every shared-memory access in the lowered IR, evaluated lane by lane. Runs in the worker.

The module read is the last one before ``MergeSharedMemoryAllocations``: layouts are inferred and
applied, swizzles, vectorisation, ``ldmatrix``/``stmatrix`` and ``cp.async`` are in place and buffers
are flat, but each shared buffer still has its own name. Every load, store and matrix instruction on a
shared buffer has its address evaluated for every thread of the block (numpy over the thread axis),
with enclosing loops at their first iteration except inner ones small enough to walk whole, and the
enclosing conditions deciding which lanes take part. The warp's request is then split into phases
and banks by :mod:`tilescope.core.perf.bank_conflicts`. TMA and ``wgmma`` read shared memory through the
async engines, not the load/store unit, and so have no bank conflicts to report.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tilescope.core.compat import spans
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Access, Buffer, Diagnostic, SharedAccess, SharedInstruction, SharedOp, Span
from tilescope.core.perf.bank_conflicts import BANK_BYTES, BANKS, phase_degrees
from tvm import tirx

MERGE_PASS = "tl.MergeSharedMemoryAllocations"
WARP = 32
INSTANCE_BUDGET = 64
"""Inner loops are walked whole while the product of their extents stays within this; outer ones run once."""


class Unknown(Exception):
    """An address or condition that depends on something other than threads, loop counters and constants."""


def module_before_merge(modules: list[Any], names: list[str]) -> Any | None:
    """The IR just before shared allocations are merged (the last one where each shared buffer has its name)."""
    index = next((i for i, n in enumerate(names) if n == MERGE_PASS), None)
    if index is None or index == 0:
        return None
    return modules[index - 1]


def _key(var: Any) -> int:
    return var.__hash__()


_ARITH: dict[type, Callable[[Any, Any], Any]] = {
    tirx.Add: np.add,
    tirx.Sub: np.subtract,
    tirx.Mul: np.multiply,
    tirx.FloorDiv: np.floor_divide,
    tirx.FloorMod: np.mod,
    tirx.Min: np.minimum,
    tirx.Max: np.maximum,
    tirx.EQ: np.equal,
    tirx.NE: np.not_equal,
    tirx.LT: np.less,
    tirx.LE: np.less_equal,
    tirx.GT: np.greater,
    tirx.GE: np.greater_equal,
    tirx.And: np.logical_and,
    tirx.Or: np.logical_or,
}


def _truncdiv(a: Any, b: Any) -> Any:
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) ^ (np.asarray(b) < 0), -q, q)


_CALLS: dict[str, Callable[..., Any]] = {
    "tirx.shift_left": np.left_shift,
    "tirx.shift_right": np.right_shift,
    "tirx.bitwise_and": np.bitwise_and,
    "tirx.bitwise_or": np.bitwise_or,
    "tirx.bitwise_xor": np.bitwise_xor,
    "tirx.bitwise_not": np.invert,
    "tirx.if_then_else": np.where,
    "tirx.likely": lambda x: x,
}


@dataclass
class _Env:
    """Values of the variables an address may use: threads as arrays over the block, loop counters as ints."""

    threads: int
    values: dict[int, Any] = field(default_factory=dict)
    binds: dict[int, Any] = field(default_factory=dict)

    def value(self, expr: Any) -> Any:
        match expr:
            case tirx.IntImm():
                return int(expr.value)
            case tirx.Var():
                k = _key(expr)
                if k in self.values:
                    return self.values[k]
                if k in self.binds:
                    return self.value(self.binds[k])
                raise Unknown(str(expr.name))
            case tirx.Cast():
                if not str(expr.dtype).startswith(("int", "uint", "bool")):
                    raise Unknown(str(expr))
                return self.value(expr.value)
            case tirx.Div() | tirx.Mod():
                a, b = self.value(expr.a), self.value(expr.b)
                q = _truncdiv(a, b)
                return q if isinstance(expr, tirx.Div) else a - b * q
            case tirx.Not():
                return np.logical_not(self.value(expr.a))
            case tirx.Select():
                return np.where(self.value(expr.condition), self.value(expr.true_value), self.value(expr.false_value))
            case tirx.Ramp():
                lanes = int(expr.lanes)
                return np.asarray(self.value(expr.base)) + np.asarray(self.value(expr.stride)) * np.arange(lanes)
            case tirx.Broadcast():
                return self.value(expr.value)
            case tirx.Call():
                name = str(getattr(expr.op, "name", ""))
                if name == "tl.tl_shuffle_elect":
                    group = int(self.value(expr.args[0])) or self.threads
                    return np.arange(self.threads)[:, None] % group == 0
                if name in _CALLS:
                    return _CALLS[name](*(self.value(a) for a in expr.args))
                raise Unknown(name)
        op = _ARITH.get(type(expr))
        if op is None:
            raise Unknown(type(expr).__name__)
        return op(self.value(expr.a), self.value(expr.b))


@dataclass(frozen=True)
class _Site:
    """One shared-memory instruction in the IR, with what encloses it."""

    buffer: str
    op: SharedOp
    instruction: SharedInstruction
    addresses: Callable[[_Env], np.ndarray]
    """Byte offsets each thread touches: shape ``(threads, bytes_per_thread // unit)`` of unit-sized chunks."""
    unit: int
    """Bytes each thread moves per chunk (the access width)."""
    phases: Callable[[int], list[list[int]]]
    """Lane groups served together, by access width."""
    loops: tuple[tuple[Any, Any, Any], ...]
    conditions: tuple[Any, ...]
    binds: tuple[tuple[Any, Any], ...]
    line: int | None


def lsu_phases(unit: int) -> list[list[int]]:
    """Accesses up to 4 bytes are served 32 lanes at a time, 8 bytes per half-warp, 16 bytes per quarter-warp."""
    per = WARP if unit <= BANK_BYTES else WARP * BANK_BYTES // unit
    return [list(range(p, p + per)) for p in range(0, WARP, per)]


def matrix_phases(count: int) -> Callable[[int], list[list[int]]]:
    """``ldmatrix``/``stmatrix``: one phase per 8×8 matrix, its eight row addresses from lanes ``8m..8m+7``."""
    return lambda _unit: [list(range(8 * m, 8 * m + 8)) for m in range(count)]


@dataclass
class _Walker:
    path: str
    threads: int = 1
    thread_var: Any | None = None
    shared: dict[int, tuple[str, str]] = field(default_factory=dict)
    sites: list[_Site] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def walk(
        self, stmt: Any, loops: tuple = (), conds: tuple = (), binds: tuple = (), line: int | None = None
    ) -> tuple:
        """Record the shared accesses under ``stmt``; a flat ``Bind`` returns the bindings its siblings see."""
        own = _line(stmt, self.path)
        line = own or line
        match stmt:
            case tirx.SeqStmt():
                for s in stmt.seq:
                    binds = self.walk(s, loops, conds, binds, line)
            case tirx.AttrStmt():
                if str(stmt.attr_key) == "thread_extent" and str(stmt.node.thread_tag) == "threadIdx.x":
                    self.thread_var, self.threads = stmt.node.var, int(stmt.value)
                self.walk(stmt.body, loops, conds, binds, line)
            case tirx.For():
                self.walk(stmt.body, (*loops, (stmt.loop_var, stmt.min, stmt.extent)), conds, binds, line)
            case tirx.IfThenElse():
                self.expr(stmt.condition, loops, conds, binds, line)
                self.walk(stmt.then_case, loops, (*conds, stmt.condition), binds, line)
                if stmt.else_case is not None:
                    self.walk(stmt.else_case, loops, (*conds, tirx.Not(stmt.condition)), binds, line)
            case tirx.Bind():
                self.expr(stmt.value, loops, conds, binds, line)
                return (*binds, (stmt.var, stmt.value))
            case tirx.AllocBuffer() | tirx.DeclBuffer():
                buf = stmt.buffer
                if str(buf.scope()).startswith("shared") and str(buf.scope()) != "shared.barrier":
                    self.shared.setdefault(_key(buf.data), (str(buf.name), str(buf.dtype)))
                if getattr(stmt, "body", None) is not None:
                    self.walk(stmt.body, loops, conds, binds, line)
            case tirx.BufferStore():
                self.expr(stmt.value, loops, conds, binds, line)
                for index in stmt.indices:
                    self.expr(index, loops, conds, binds, line)
                self.buffer_access(stmt.buffer, stmt.indices, "store", loops, conds, binds, line)
            case tirx.Evaluate():
                self.expr(stmt.value, loops, conds, binds, line)
            case tirx.AssertStmt() | tirx.While():
                body = getattr(stmt, "body", None)
                if body is not None:
                    self.walk(body, loops, conds, binds, line)
        return binds

    def expr(self, expr: Any, loops: tuple, conds: tuple, binds: tuple, line: int | None) -> None:
        """Find shared loads and matrix instructions inside an expression."""
        match expr:
            case tirx.BufferLoad():
                for index in expr.indices:
                    self.expr(index, loops, conds, binds, line)
                self.buffer_access(expr.buffer, expr.indices, "load", loops, conds, binds, line)
            case tirx.Call():
                name = str(getattr(expr.op, "name", ""))
                if name in ("tl.ptx_ldmatrix", "tl.ptx_stmatrix", "tirx.ptx_ldmatrix"):
                    self.matrix(expr, name, loops, conds, binds, line)
                    return
                if name == "tirx.ptx_cp_async" or name == "tl.ptx_cp_async":
                    self.cp_async(expr, loops, conds, binds, line)
                    return
                if name in ("tirx.tvm_access_ptr", "tirx.address_of", "tl.tma_load", "tl.tma_store"):
                    return
                for arg in expr.args:
                    self.expr(arg, loops, conds, binds, line)
            case tirx.Select():
                for part in (expr.condition, expr.true_value, expr.false_value):
                    self.expr(part, loops, conds, binds, line)
            case tirx.Ramp() | tirx.Broadcast() | tirx.Cast() | tirx.Not():
                for name in ("base", "stride", "value", "a"):
                    part = getattr(expr, name, None)
                    if part is not None:
                        self.expr(part, loops, conds, binds, line)
            case _ if type(expr) in _ARITH or isinstance(expr, tirx.Div | tirx.Mod):
                self.expr(expr.a, loops, conds, binds, line)
                self.expr(expr.b, loops, conds, binds, line)

    def _shared_name(self, data: Any) -> tuple[str, str] | None:
        return self.shared.get(_key(data))

    def buffer_access(
        self, buf: Any, indices: Any, op: SharedOp, loops: tuple, conds: tuple, binds: tuple, line: int | None
    ) -> None:
        found = self._shared_name(buf.data)
        if found is None:
            return
        name = found[0]
        bits = dtype_bits(str(buf.dtype).split("x")[0]) or 8
        shape = [s for s in buf.shape]
        index_exprs = list(indices)

        def addresses(env: _Env, index_exprs: list[Any] = index_exprs, shape: list[Any] = shape) -> np.ndarray:
            flat: Any = 0
            for i, index in enumerate(index_exprs):
                extent = env.value(shape[i]) if i else 1
                flat = flat * extent + env.value(index)
            return np.asarray(flat, dtype=np.int64) * bits // 8

        lanes = max(int(getattr(i.dtype, "lanes", 1) or 1) for i in index_exprs) if index_exprs else 1
        lanes = max(lanes, 1)
        element = max(bits // 8, 1)
        unit = element * lanes if lanes * element <= 16 and lanes & (lanes - 1) == 0 else element

        def chunks(
            env: _Env, addresses: Callable[[_Env], np.ndarray] = addresses, step: int = unit // element
        ) -> np.ndarray:
            return _per_thread(addresses(env), env.threads)[:, ::step]

        self.sites.append(
            _Site(name, op, "lds" if op == "load" else "sts", chunks, unit, lsu_phases, loops, conds, binds, line)
        )

    def _pointer(self, ptr: Any) -> tuple[str, int, Any] | None:
        """``(buffer, element bytes, offset)`` of a ``tvm_access_ptr`` or ``address_of`` into shared memory."""
        if not isinstance(ptr, tirx.Call):
            return None
        name = str(getattr(ptr.op, "name", ""))
        if name == "tirx.tvm_access_ptr":
            found = self._shared_name(ptr.args[1])
            if found is None:
                return None
            bits = dtype_bits(str(ptr.args[0].dtype)) or dtype_bits(found[1]) or 8
            return found[0], max(bits // 8, 1), ptr.args[2]
        if name == "tirx.address_of" and isinstance(ptr.args[0], tirx.BufferLoad):
            load = ptr.args[0]
            found = self._shared_name(load.buffer.data)
            if found is None or len(load.indices) != 1:
                return None
            bits = dtype_bits(str(load.buffer.dtype)) or 8
            return found[0], max(bits // 8, 1), load.indices[0]
        return None

    def matrix(self, call: Any, name: str, loops: tuple, conds: tuple, binds: tuple, line: int | None) -> None:
        pointer = next((p for p in (self._pointer(a) for a in call.args) if p is not None), None)
        if pointer is None:
            self.skipped.append(f"{name}: no shared pointer")
            return
        buffer, element, offset = pointer
        count = int(call.args[1]) if isinstance(call.args[1], tirx.IntImm) else 4

        def rows(env: _Env, offset: Any = offset, element: int = element) -> np.ndarray:
            return _per_thread(np.asarray(env.value(offset), dtype=np.int64) * element, env.threads)[:, :1]

        op: SharedOp = "load" if "ldmatrix" in name else "store"
        kind: SharedInstruction = "ldmatrix" if op == "load" else "stmatrix"
        self.sites.append(_Site(buffer, op, kind, rows, 16, matrix_phases(count), loops, conds, binds, line))

    def cp_async(self, call: Any, loops: tuple, conds: tuple, binds: tuple, line: int | None) -> None:
        pointer = self._pointer(call.args[0])
        if pointer is None:
            return
        buffer, element, offset = pointer
        size = call.args[2]
        unit = int(size) * element if isinstance(size, tirx.IntImm) else 16
        unit = unit if unit in (4, 8, 16) else 16

        def dst(env: _Env, offset: Any = offset, element: int = element) -> np.ndarray:
            return _per_thread(np.asarray(env.value(offset), dtype=np.int64) * element, env.threads)[:, :1]

        self.sites.append(_Site(buffer, "store", "cp.async", dst, unit, lsu_phases, loops, conds, binds, line))


def _per_thread(values: np.ndarray, threads: int) -> np.ndarray:
    """Values as ``(threads, k)``: a thread-independent scalar or vector is the same for every thread."""
    values = np.asarray(values, dtype=np.int64)
    if values.ndim == 0:
        return np.full((threads, 1), int(values))
    if values.ndim == 1:
        return np.broadcast_to(values[None, :], (threads, values.size))
    return np.broadcast_to(values.reshape(values.shape[0], -1), (threads, values.reshape(values.shape[0], -1).shape[1]))


def _line(stmt: Any, path: str) -> int | None:
    location = spans.location(spans.stmt_span(stmt))
    if not location:
        return None
    file, line = location
    return int(line) if file == path else None


@dataclass
class _Tally:
    requests: int = 0
    wavefronts: int = 0
    ideal: int = 0
    ways: int = 1
    lane_banks: list[int] | None = None
    worst: tuple[np.ndarray, np.ndarray] | None = None
    """Start bytes and active lanes of the worst request, for trying fixes on it."""


def _instances(loops: tuple, env: _Env) -> tuple[list[dict[int, int]], int | None]:
    """Loop-counter assignments to evaluate, innermost loops walked whole within the budget; and the trip count."""
    trips: int | None = 1
    walked: list[tuple[Any, int, int]] = []
    budget = INSTANCE_BUDGET
    fixed: dict[int, int] = {}
    for var, start, extent in reversed(loops):
        try:
            first = int(np.asarray(env.value(start)).reshape(-1)[0])
        except Unknown:
            first = 0
        count = int(extent) if isinstance(extent, tirx.IntImm) else None
        trips = trips * count if trips is not None and count is not None else None
        if count is not None and count <= budget:
            walked.append((var, first, count))
            budget //= count
        else:
            fixed[_key(var)] = first
            budget = 1
    assignments = [dict(fixed)]
    for var, first, count in walked:
        assignments = [{**a, _key(var): first + i} for a in assignments for i in range(count)]
    return assignments, trips


def _measure(site: _Site, threads: int, thread_var: Any) -> _Tally | None:
    env = _Env(threads)
    if thread_var is not None:
        env.values[_key(thread_var)] = np.arange(threads, dtype=np.int64)[:, None]
    for var, value in site.binds:
        env.binds[_key(var)] = value
    try:
        assignments, _trips = _instances(site.loops, env)
    except Unknown:
        return None
    tally = _Tally()
    for assignment in assignments:
        env.values.update(assignment)
        try:
            chunks = site.addresses(env)
            active = np.ones(threads, dtype=bool)
            for cond in site.conditions:
                try:
                    active &= _per_thread(np.asarray(env.value(cond), dtype=np.int64), threads)[:, 0] != 0
                except Unknown:
                    continue  # a condition on data: every lane is counted
        except Unknown:
            return None
        warps = -(-threads // WARP)
        lanes_on = np.zeros(warps * WARP, dtype=bool)
        lanes_on[:threads] = active
        lanes_on = lanes_on.reshape(warps, WARP)
        for chunk in range(chunks.shape[1]):
            start = np.zeros(warps * WARP, dtype=np.int64)
            start[:threads] = chunks[:, chunk]
            _tally_requests(tally, start.reshape(warps, WARP), lanes_on, site)
    return tally if tally.requests else None


def warp_costs(
    start: np.ndarray, active: np.ndarray, unit: int, phases: list[list[int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wavefronts, ideal wavefronts and worst phase degree of each of a batch of warp requests.

    ``start[w, lane]`` is the first byte lane ``lane`` of request ``w`` touches (it moves ``unit``
    bytes); ``active[w, lane]`` whether it takes part. A lane that does not is given the word of the
    phase's first active lane, which adds nothing; a phase without active lanes costs nothing.
    """
    words_per_lane = max(unit // BANK_BYTES, 1)
    count = start.shape[0]
    wavefronts = np.zeros(count, dtype=np.int64)
    ideal = np.zeros(count, dtype=np.int64)
    worst = np.ones(count, dtype=np.int64)
    for phase in phases:
        lanes = np.asarray([lane for lane in phase if lane < start.shape[1]], dtype=np.int64)
        if lanes.size == 0:
            continue
        on = active[:, lanes]
        taking = on.any(axis=1)
        first_on = np.argmax(on, axis=1)
        first = start[:, lanes] // BANK_BYTES
        first = np.where(on, first, first[np.arange(count), first_on][:, None])
        words = (first[:, :, None] + np.arange(words_per_lane)[None, None, :]).reshape(count, -1)
        degree = np.where(taking, phase_degrees(words), 0)
        wavefronts += degree
        ideal += taking
        worst = np.maximum(worst, degree)
    return wavefronts, ideal, worst


def request_cost(start: np.ndarray, active: np.ndarray, unit: int, phases: list[list[int]]) -> tuple[int, int, int]:
    """``(wavefronts, ideal wavefronts, worst phase degree)`` of one warp request (see :func:`warp_costs`)."""
    wavefronts, ideal, worst = warp_costs(start[None, :], active[None, :], unit, phases)
    return int(wavefronts[0]), int(ideal[0]), int(worst[0])


def _tally_requests(tally: _Tally, start: np.ndarray, active: np.ndarray, site: _Site) -> None:
    """Add a batch of warp requests (one per row; rows without an active lane are no request)."""
    taking = active.any(axis=1)
    if not taking.any():
        return
    start, active = start[taking], active[taking]
    wavefronts, ideal, worst = warp_costs(start, active, site.unit, site.phases(site.unit))
    heaviest = int(np.argmax(worst))
    if tally.worst is None or int(worst[heaviest]) > tally.ways:
        tally.worst = (start[heaviest].copy(), active[heaviest].copy())
    tally.requests += len(start)
    tally.wavefronts += int(wavefronts.sum())
    tally.ideal += int(ideal.sum())
    tally.ways = max(tally.ways, int(worst.max()))
    if tally.lane_banks is None:
        tally.lane_banks = [int(b // BANK_BYTES % BANKS) if a else -1 for b, a in zip(start[0], active[0], strict=True)]


def _tile_line(buffer: str, op: SharedOp, tile_ops: list[Access]) -> tuple[int | None, str | None]:
    """The tile operation that made an access: the first that writes (for a store) or reads (a load) the buffer."""
    for access in tile_ops:
        names = access.writes if op == "store" else access.reads
        if buffer in names and access.line is not None:
            return access.line, access.op
    return None, None


@dataclass
class _Group:
    tally: _Tally
    per_block: int
    tile_op: str | None
    site: _Site


def _trips(site: _Site, threads: int) -> tuple[int, int]:
    try:
        assignments, trips = _instances(site.loops, _Env(threads))
    except Unknown:
        return 1, 1
    return len(assignments), trips or len(assignments)


def _groups(
    module: Any, path: str, tile_ops: list[Access]
) -> dict[tuple[str, int | None, SharedOp, SharedInstruction], _Group]:
    walked = []
    for func in module.functions.values():
        if isinstance(func, tirx.PrimFunc) and func.attrs is not None and "tirx.is_global_func" in func.attrs:
            walker = _Walker(path)  # one per device kernel: each has its own threads
            walker.walk(func.body)
            walked.extend((site, walker) for site in walker.sites)
    grouped: dict[tuple[str, int | None, SharedOp, SharedInstruction], _Group] = {}
    for site, walker in walked:
        tally = _measure(site, walker.threads, walker.thread_var)
        if tally is None:
            continue
        line, tile_op = _tile_line(site.buffer, site.op, tile_ops)
        line = line or site.line
        walked, trips = _trips(site, walker.threads)
        per_block = tally.requests // max(walked, 1) * trips
        key = (site.buffer, line, site.op, site.instruction)
        group = grouped.get(key)
        if group is None:
            grouped[key] = _Group(tally, per_block, tile_op, site)
            continue
        old = group.tally
        if tally.ways > old.ways:
            old.worst, group.site = tally.worst, site
        old.requests += tally.requests
        old.wavefronts += tally.wavefronts
        old.ideal += tally.ideal
        old.ways = max(old.ways, tally.ways)
        group.per_block += per_block
    return grouped


def shared_accesses(module: Any | None, path: str, tile_ops: list[Access]) -> list[tuple[SharedAccess, _Group]]:
    """Every shared-memory access of the kernel's device function, one per buffer, line, op and instruction."""
    if module is None:
        return []
    found = []
    for (buffer, line, op, instruction), group in _groups(module, path, tile_ops).items():
        tally = group.tally
        record = SharedAccess(
            buffer=buffer,
            line=line,
            op=op,
            ways=tally.ways,
            wavefronts=round(tally.wavefronts / tally.requests, 2),
            ideal_wavefronts=round(tally.ideal / tally.requests, 2),
            instruction=instruction,
            tile_op=group.tile_op,
            requests_per_block=group.per_block,
            lane_banks=tally.lane_banks or [],
        )
        found.append((record, group))
    return sorted(found, key=lambda a: (a[0].line or 0, a[0].buffer, a[0].op))


WARN_WAYS = 4
"""A conflict degree from which a warning is given: below it the cost is usually hidden by other work."""


def padding_fix(group: _Group, shape: list[int], element: int) -> int | None:
    """The fewest elements of padding on the last dimension that make the worst request conflict-free.

    The worst request's addresses are unravelled over the buffer's logical shape and laid out again
    with a longer last row; the first padding (in 4-byte steps) whose request costs its ideal wins.
    """
    if group.tally.worst is None or len(shape) < 2 or any(d <= 0 for d in shape):
        return None
    start, active = group.tally.worst
    site = group.site
    elements = start // element
    size = math.prod(shape)
    stage, inner = np.divmod(elements, size)
    coords = np.unravel_index(np.clip(inner, 0, size - 1), shape)
    step = max(BANK_BYTES // element, 1)
    for pad in range(step, 8 * step + 1, step):
        padded = [*list(shape[:-1]), shape[-1] + pad]
        moved = (stage * math.prod(padded) + np.ravel_multi_index(coords, padded)) * element
        _wavefronts, _ideal, worst = request_cost(moved, active, site.unit, site.phases(site.unit))
        if worst == 1:
            return pad
    return None


def conflict_diagnostic(
    record: SharedAccess, group: _Group, buffer: Buffer | None, linear: bool, kernel: str
) -> Diagnostic | None:
    """A warning for an access of ``WARN_WAYS`` ways or more, with the padding that removes it where one does."""
    if record.ways < WARN_WAYS or record.line is None:
        return None
    what = {"lds": "loads", "sts": "stores", "cp.async": "cp.async stores"}.get(record.instruction, record.instruction)
    by = {"parallel": " by this T.Parallel loop", None: ""}.get(record.tile_op, f" by this T.{record.tile_op}")
    message = (
        f"{record.ways}-way shared-memory bank conflict: {what} of '{record.buffer}'{by} take "
        f"{record.wavefronts:g} wavefronts per warp request instead of {record.ideal_wavefronts:g}"
    )
    fix = None
    if buffer is not None and linear and all(isinstance(d, int) for d in buffer.shape):
        element = max((dtype_bits(buffer.dtype) or 8) // 8, 1)
        shape = [int(d) for d in buffer.shape]
        pad = padding_fix(group, shape, element)
        if pad is not None:
            padded = ", ".join(str(d) for d in shape[:-1]) + f", {shape[-1]} + {pad}"
            fix = f"allocate it as ({padded}) to make them conflict-free"
    if fix is None:
        fix = "a swizzled layout (T.annotate_layout with tilelang.layout.make_swizzled_layout) may remove them"
    return Diagnostic("warning", f"{message}; {fix}", Span(record.line), "bank-conflict", kernel=kernel, detail=fix)
