"""A roofline bound from the lowered IR: FLOPs and bytes of one launch at the kernel's sizes. Runs in the worker.

Every statement of the device function is counted as often as it runs: the product of its loops'
trip counts, times the threads its conditions let through (evaluated over the block, loops at their
first iteration), times the blocks of the grid. Global loads and stores (``cp.async`` and TMA
included) give the bytes requested; ``mma``/``wgmma`` give tensor-core FLOPs (one instruction per
warp or warpgroup) and floating-point arithmetic in stores the rest. The bound divides the bytes
each parameter tensor must move at least once by the datasheet bandwidth, and the FLOPs by the
datasheet peak of their kind, for each GPU of :data:`tilescope.core.perf.peaks.PEAKS`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Buffer, Roofline, SharedAccess
from tilescope.core.perf.peaks import bounds
from tilescope.core.worker.shared_sites import Env, ThreadAxes, Unknown, per_thread, var_key
from tvm import tirx

_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)")
_FLOAT_OPS = (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max)
_MATH_CALLS = ("tirx.exp", "tirx.exp2", "tirx.log", "tirx.log2", "tirx.sqrt", "tirx.rsqrt", "tirx.tanh", "tirx.fma")


@dataclass
class _Count:
    grid: int = 1
    axes: ThreadAxes = field(default_factory=ThreadAxes)
    global_vars: dict[int, int] = field(default_factory=dict)
    """Data variables of global buffers, with bytes per element."""
    global_bytes: float = 0.0
    tensor_flops: float = 0.0
    flops: float = 0.0

    def runs(self, loops: tuple, conds: tuple, per: int = 1) -> float:
        """How often a statement runs in one block: trips times threads let through, per ``per`` threads."""
        trips = math.prod(int(e) for _v, e in loops if isinstance(e, tirx.IntImm))
        threads = self.axes.threads
        env = Env(threads)
        self.axes.fill(env)
        for var, _extent in loops:
            env.values[var_key(var)] = 0
        active = np.ones(threads, dtype=bool)
        for cond in conds:
            try:
                active &= per_thread(np.asarray(env.value(cond), dtype=np.int64), threads)[:, 0] != 0
            except Unknown:
                continue
        return trips * max(int(active.sum()), 1) / per

    def walk(self, stmt: Any, loops: tuple = (), conds: tuple = ()) -> None:
        match stmt:
            case tirx.SeqStmt():
                for s in stmt.seq:
                    self.walk(s, loops, conds)
            case tirx.AttrStmt():
                if str(stmt.attr_key) == "thread_extent":
                    tag = str(stmt.node.thread_tag)
                    if not self.axes.bind(stmt) and tag.startswith("blockIdx"):
                        self.grid *= int(stmt.value) if isinstance(stmt.value, tirx.IntImm) else 1
                self.walk(stmt.body, loops, conds)
            case tirx.For():
                self.walk(stmt.body, (*loops, (stmt.loop_var, stmt.extent)), conds)
            case tirx.IfThenElse():
                self.walk(stmt.then_case, loops, (*conds, stmt.condition))
                if stmt.else_case is not None:
                    self.walk(stmt.else_case, loops, (*conds, tirx.Not(stmt.condition)))
            case tirx.AllocBuffer() | tirx.DeclBuffer():
                if str(stmt.buffer.scope()) == "global":
                    self.global_vars[var_key(stmt.buffer.data)] = max((dtype_bits(str(stmt.buffer.dtype)) or 8) // 8, 1)
                if getattr(stmt, "body", None) is not None:
                    self.walk(stmt.body, loops, conds)
            case tirx.BufferStore():
                runs = self.runs(loops, conds)
                self.global_bytes += runs * self._global(stmt.buffer, stmt.indices)
                self.flops += runs * _float_ops(stmt.value)
                self.expr(stmt.value, runs)
            case tirx.Evaluate():
                self.call(stmt.value, loops, conds)

    def _global(self, buf: Any, indices: Any) -> int:
        if var_key(buf.data) not in self.global_vars and str(buf.scope()) != "global":
            return 0
        lanes = max((int(getattr(i.dtype, "lanes", 1) or 1) for i in indices), default=1)
        return lanes * max((dtype_bits(str(buf.dtype).split("x")[0]) or 8) // 8, 1)

    def expr(self, expr: Any, runs: float) -> None:
        def visit(node: Any) -> None:
            if isinstance(node, tirx.BufferLoad):
                self.global_bytes += runs * self._global(node.buffer, node.indices)

        tirx.stmt_functor.post_order_visit(expr, visit)

    def call(self, call: Any, loops: tuple, conds: tuple) -> None:
        if not isinstance(call, tirx.Call):
            return
        name = str(getattr(call.op, "name", ""))
        if name in ("tirx.ptx_mma", "tl.ptx_mma"):
            self.tensor_flops += self.runs(loops, conds, 32) * _shape_flops(call)
        elif name.startswith(("tl.ptx_wgmma", "tirx.ptx_wgmma")):
            self.tensor_flops += self.runs(loops, conds, 128) * _shape_flops(call)
        elif name in ("tirx.ptx_cp_async", "tl.ptx_cp_async"):
            self.global_bytes += self.runs(loops, conds) * _pointer_bytes(call.args[1], call.args[2])
        elif name in ("tl.tma_load", "tl.tma_store"):
            pointer = next((a for a in call.args if _is_access_ptr(a)), None)
            if pointer is not None:
                self.global_bytes += self.runs(loops, conds) * _pointer_bytes(pointer, pointer.args[3])
        else:
            self.expr(call, self.runs(loops, conds))


def _is_access_ptr(arg: Any) -> bool:
    return isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")) == "tirx.tvm_access_ptr"


def _pointer_bytes(pointer: Any, count: Any) -> int:
    if not _is_access_ptr(pointer) or not isinstance(count, tirx.IntImm):
        return 0
    return int(count) * max((dtype_bits(str(pointer.args[0].dtype)) or 8) // 8, 1)


def _shape_flops(call: Any) -> int:
    """FLOPs of one matrix instruction, from its ``mMnNkK`` shape argument."""
    for arg in call.args:
        found = _SHAPE.fullmatch(str(arg.value)) if isinstance(arg, tirx.StringImm) else None
        if found:
            return 2 * math.prod(int(g) for g in found.groups())
    return 0


def _float_ops(expr: Any) -> int:
    count = 0

    def visit(node: Any) -> None:
        nonlocal count
        dtype = getattr(node, "dtype", None)
        if dtype is None or not str(dtype).startswith(("float", "bfloat")):
            return
        lanes = int(getattr(dtype, "lanes", 1) or 1)
        if isinstance(node, _FLOAT_OPS) or (
            isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")) in _MATH_CALLS
        ):
            count += lanes

    tirx.stmt_functor.post_order_visit(expr, visit)
    return count


def from_ir(module: Any | None, buffers: list[Buffer], shared: list[SharedAccess], dtype: str) -> Roofline | None:
    """FLOPs and bytes of one launch of the kernel's device function, and its bound on each known GPU."""
    if module is None:
        return None
    counts = []
    for func in module.functions.values():
        if isinstance(func, tirx.PrimFunc) and func.attrs is not None and "tirx.is_global_func" in func.attrs:
            count = _Count()  # one per device kernel: each has its own grid and threads
            for param in func.params:
                count.global_vars[var_key(param)] = 0
            count.walk(func.body)
            counts.append(count)
    if not counts:
        return None
    compulsory = sum(b.bytes or 0 for b in buffers if b.is_param and b.scope == "global")
    shared_bytes = sum(a.requests_per_block * a.ideal_wavefronts * 128 for a in shared) * counts[0].grid
    tensor = int(sum(c.tensor_flops * c.grid for c in counts))
    flops = int(sum(c.flops * c.grid for c in counts)) + tensor
    return Roofline(
        flops=flops,
        tensor_flops=tensor,
        global_bytes=int(sum(c.global_bytes * c.grid for c in counts)),
        compulsory_bytes=compulsory,
        shared_bytes=int(shared_bytes),
        arithmetic_intensity=round(flops / compulsory, 3) if compulsory else 0.0,
        bounds=bounds(flops - tensor, tensor, compulsory, dtype),
    )
