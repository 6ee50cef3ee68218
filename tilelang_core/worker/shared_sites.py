"""The shared-memory accesses of lowered IR, found and evaluated lane by lane. Runs in the worker.

A walk of the module before ``MergeSharedMemoryAllocations`` (each shared buffer still named) that
records every load, store and matrix instruction on a shared buffer as a site: its address expression,
the enclosing loops and conditions, the unit it moves and how the warp's request splits into phases.
``Env`` evaluates those expressions for every thread of the block at once (numpy over the thread
axis); ``roofline`` uses it for global traffic too. ``shared_access`` turns the sites into figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tilescope.core.compat import spans
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import SharedInstruction, SharedOp
from tilescope.core.perf.bank_conflicts import BANK_BYTES
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


def var_key(var: Any) -> int:
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


def truncdiv(a: Any, b: Any) -> Any:
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
class Env:
    """Values of the variables an address may use: threads as arrays over the block, loop counters as ints."""

    threads: int
    values: dict[int, Any] = field(default_factory=dict)
    binds: dict[int, Any] = field(default_factory=dict)

    def value(self, expr: Any) -> Any:
        match expr:
            case tirx.IntImm():
                return int(expr.value)
            case tirx.Var():
                k = var_key(expr)
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
                q = truncdiv(a, b)
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
class Site:
    """One shared-memory instruction in the IR, with what encloses it."""

    buffer: str
    op: SharedOp
    instruction: SharedInstruction
    addresses: Callable[[Env], np.ndarray]
    """Byte offsets each thread touches: shape ``(threads, bytes_per_thread // unit)`` of unit-sized chunks."""
    unit: int
    """Bytes each thread moves per chunk (the access width)."""
    phases: Callable[[int], list[list[int]]]
    """Lane groups served together, by access width."""
    loops: tuple[tuple[Any, Any, Any], ...]
    conditions: tuple[Any, ...]
    binds: tuple[tuple[Any, Any], ...]
    line: int | None


@dataclass
class ThreadAxes:
    """A block's thread indices as the lowered IR binds them (``threadIdx.x``, ``.y``, ``.z``: a kernel of
    ``threads=(32, 8)`` or ``T.get_thread_binding(1)`` has more than one), laid out as CUDA forms warps:
    ``x`` fastest, then ``y``, then ``z``."""

    axes: dict[str, tuple[Any, int]] = field(default_factory=dict)

    def bind(self, stmt: Any) -> bool:
        """Record ``stmt`` if it is a ``thread_extent`` of a thread index; whether it was."""
        tag = str(stmt.node.thread_tag) if str(stmt.attr_key) == "thread_extent" else ""
        if tag not in ("threadIdx.x", "threadIdx.y", "threadIdx.z") or not isinstance(stmt.value, tirx.IntImm):
            return False
        self.axes[tag[-1]] = (stmt.node.var, int(stmt.value))
        return True

    @property
    def threads(self) -> int:
        return math.prod(extent for _var, extent in self.axes.values())

    def fill(self, env: Env) -> None:
        """Each index as an array over the block's threads, in linear (warp) order."""
        linear = np.arange(self.threads, dtype=np.int64)
        stride = 1
        for axis in "xyz":
            if axis in self.axes:
                var, extent = self.axes[axis]
                env.values[var_key(var)] = ((linear // stride) % extent)[:, None]
                stride *= extent


def lsu_phases(unit: int) -> list[list[int]]:
    """Accesses up to 4 bytes are served 32 lanes at a time, 8 bytes per half-warp, 16 bytes per quarter-warp."""
    per = WARP if unit <= BANK_BYTES else WARP * BANK_BYTES // unit
    return [list(range(p, p + per)) for p in range(0, WARP, per)]


def matrix_phases(count: int) -> Callable[[int], list[list[int]]]:
    """``ldmatrix``/``stmatrix``: one phase per 8×8 matrix, its eight row addresses from lanes ``8m..8m+7``."""
    return lambda _unit: [list(range(8 * m, 8 * m + 8)) for m in range(count)]


@dataclass
class Walker:
    path: str
    axes: ThreadAxes = field(default_factory=ThreadAxes)
    shared: dict[int, tuple[str, str]] = field(default_factory=dict)
    sites: list[Site] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def walk(
        self, stmt: Any, loops: tuple = (), conds: tuple = (), binds: tuple = (), line: int | None = None
    ) -> tuple:
        """Record the shared accesses under ``stmt``; a flat ``Bind`` returns the bindings its siblings see."""
        own = stmt_line(stmt, self.path)
        line = own or line
        match stmt:
            case tirx.SeqStmt():
                for s in stmt.seq:
                    binds = self.walk(s, loops, conds, binds, line)
            case tirx.AttrStmt():
                self.axes.bind(stmt)
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
                    self.shared.setdefault(var_key(buf.data), (str(buf.name), str(buf.dtype)))
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
        return self.shared.get(var_key(data))

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

        def addresses(env: Env, index_exprs: list[Any] = index_exprs, shape: list[Any] = shape) -> np.ndarray:
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
            env: Env, addresses: Callable[[Env], np.ndarray] = addresses, step: int = unit // element
        ) -> np.ndarray:
            return per_thread(addresses(env), env.threads)[:, ::step]

        self.sites.append(
            Site(name, op, "lds" if op == "load" else "sts", chunks, unit, lsu_phases, loops, conds, binds, line)
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

        def rows(env: Env, offset: Any = offset, element: int = element) -> np.ndarray:
            return per_thread(np.asarray(env.value(offset), dtype=np.int64) * element, env.threads)[:, :1]

        op: SharedOp = "load" if "ldmatrix" in name else "store"
        kind: SharedInstruction = "ldmatrix" if op == "load" else "stmatrix"
        self.sites.append(Site(buffer, op, kind, rows, 16, matrix_phases(count), loops, conds, binds, line))

    def cp_async(self, call: Any, loops: tuple, conds: tuple, binds: tuple, line: int | None) -> None:
        pointer = self._pointer(call.args[0])
        if pointer is None:
            return
        buffer, element, offset = pointer
        size = call.args[2]
        unit = int(size) * element if isinstance(size, tirx.IntImm) else 16
        unit = unit if unit in (4, 8, 16) else 16

        def dst(env: Env, offset: Any = offset, element: int = element) -> np.ndarray:
            return per_thread(np.asarray(env.value(offset), dtype=np.int64) * element, env.threads)[:, :1]

        self.sites.append(Site(buffer, "store", "cp.async", dst, unit, lsu_phases, loops, conds, binds, line))


def per_thread(values: np.ndarray, threads: int) -> np.ndarray:
    """Values as ``(threads, k)``: a thread-independent scalar or vector is the same for every thread."""
    values = np.asarray(values, dtype=np.int64)
    if values.ndim == 0:
        return np.full((threads, 1), int(values))
    if values.ndim == 1:
        return np.broadcast_to(values[None, :], (threads, values.size))
    return np.broadcast_to(values.reshape(values.shape[0], -1), (threads, values.reshape(values.shape[0], -1).shape[1]))


def stmt_line(stmt: Any, path: str) -> int | None:
    location = spans.location(spans.stmt_span(stmt))
    if not location:
        return None
    file, line = location
    return int(line) if file == path else None
