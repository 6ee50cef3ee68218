"""Static checks: mistakes visible in the source before anything compiles.

Each check returns ``Diagnostic`` records with a stable ``code``, and the ``QuickFix`` where the
fix is certain. The rule: an error only where the code cannot work whatever the unknown values
are; a warning only where the compiler would say the same. They speak only when every number and
dtype involved is known: a symbolic extent or a dtype parameter never produces a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeGuard

from tilescope.core.codes import diagnostic
from tilescope.core.display import kib, shape_text
from tilescope.core.model import Access, Diagnostic, Span
from tilescope.core.static.records import BufferDecl, QuickFix, SharedFloor, TextEdit
from tilescope.core.static.symbolic import Value, dtype_name, is_known_int
from tilescope.core.static.syntax import keyword, span_of
from tilescope.core.targets import shared_memory_budget

if TYPE_CHECKING:
    from tilescope.core.static.operand import Operand
    from tilescope.core.static.records import StaticKernel

GEMMS = frozenset({"gemm", "gemm_v1", "gemm_v2", "wgmma_gemm"})
_ACCUMULATORS = {
    "float16": {"float32", "float16"},
    "bfloat16": {"float32"},
    "float32": {"float32"},
    "float64": {"float64"},
    "int8": {"int32"},
    "uint8": {"int32"},
}
"""Accumulator dtypes TileLang's gemm accepts for each input dtype; any other cannot build."""
_MIXABLE = (("int8", "uint8"), ("int4", "uint4"))
"""Input dtypes the MMA instructions mix (and float8 formats with each other)."""
Findings = tuple[list[Diagnostic], list[QuickFix]]


def _known(shape: Sequence[Value] | None) -> TypeGuard[Sequence[Value]]:
    return shape is not None and all(is_known_int(d) for d in shape)


def _flag(call: ast.Call, name: str, position: int) -> bool | None:
    node = keyword(call, name, position)
    if node is None:
        return False
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def check_op(name: str, call: ast.Call, operands: list[Operand | None], kernel: str) -> Findings:
    """Shape and dtype agreement of one tile op's operands."""
    if name == "copy" and len(operands) >= 2:
        return _check_copy(call, operands[0], operands[1], kernel), []
    if name in GEMMS and len(operands) >= 3:
        return _check_gemm(call, operands[0], operands[1], operands[2], kernel)
    if name.startswith("reduce_") and len(operands) >= 2:
        return _check_reduce(name, call, operands[0], operands[1], kernel), []
    return [], []


def _check_copy(call: ast.Call, src: Operand | None, dst: Operand | None, kernel: str) -> list[Diagnostic]:
    if src is None or dst is None or not _known(src.shape) or not _known(dst.shape):
        return []
    assert src.shape is not None and dst.shape is not None
    # TileLang raises only for two whole buffers of different shapes; regions of different extents
    # (``T.copy(A[:, :2], B[:, :3])``) it aligns by its own rule and builds.
    if not (isinstance(src.node, ast.Name) and isinstance(dst.node, ast.Name)):
        return []
    squeeze_src = [d for d in src.shape if d != 1]
    squeeze_dst = [d for d in dst.shape if d != 1]
    if squeeze_src == squeeze_dst:
        return []
    return [
        diagnostic(
            "copy-shape",
            span_of(call),
            kernel=kernel,
            src=src.buffer.buffer.name,
            src_shape=shape_text(src.shape),
            dst=dst.buffer.buffer.name,
            dst_shape=shape_text(dst.shape),
        )
    ]


def _check_gemm(call: ast.Call, a: Operand | None, b: Operand | None, c: Operand | None, kernel: str) -> Findings:
    found: list[Diagnostic] = []
    fixes: list[QuickFix] = []
    if a is None or b is None or c is None:
        return found, fixes
    names = a.buffer.buffer.name, b.buffer.buffer.name, c.buffer.buffer.name
    trans_a, trans_b = _flag(call, "transpose_A", 3), _flag(call, "transpose_B", 4)
    shapes = a.shape, b.shape, c.shape
    if trans_a is not None and trans_b is not None and all(_known(s) and len(s) == 2 for s in shapes):
        (a0, a1), (b0, b1), (c0, c1) = shapes  # type: ignore[misc]  # _known checked every shape has two extents
        m, k_a = (a1, a0) if trans_a else (a0, a1)
        k_b, n = (b1, b0) if trans_b else (b0, b1)
        if k_a != k_b:
            flipped_k = b0 if trans_b else b1
            setting = "False" if trans_b else "True"
            k = {"a": names[0], "k_a": k_a, "b": names[1], "k_b": k_b}
            if flipped_k == k_a:
                found.append(
                    diagnostic(
                        "gemm-shape",
                        span_of(call),
                        form="k_transposed",
                        kernel=kernel,
                        b0=b0,
                        b1=b1,
                        setting=setting,
                        fields=k,
                    )
                )
            else:
                found.append(diagnostic("gemm-shape", span_of(call), kernel=kernel, fields=k))
            if flipped_k == k_a:
                fixes.append(
                    QuickFix(found[-1], f"Pass transpose_B={setting}", [_set_keyword(call, "transpose_B", setting)])
                )
        elif (m, n) != (c0, c1):
            output = {"a": names[0], "b": names[1], "m": m, "n": n, "c": names[2], "c0": c0, "c1": c1}
            found.append(diagnostic("gemm-shape", span_of(call), form="output", kernel=kernel, fields=output))
    found.extend(_check_gemm_dtypes(call, a, b, c, kernel))
    return found, fixes


def _set_keyword(call: ast.Call, name: str, value: str) -> TextEdit:
    """The edit that gives ``call`` the keyword ``name=value``, replacing the one written."""
    for item in call.keywords:
        if item.arg == name:
            node = item.value
            return TextEdit(span_of(node), value)
    line, column = call.end_lineno or call.lineno, (call.end_col_offset or 1) - 1
    return TextEdit(Span(line, column, line, column), f", {name}={value}")


def _check_gemm_dtypes(call: ast.Call, a: Operand, b: Operand, c: Operand, kernel: str) -> list[Diagnostic]:
    """Only dtypes known by name are compared; a dtype parameter (``accum_dtype``) is unknown."""
    da, db, dc = (dtype_name(o.buffer.buffer.dtype) for o in (a, b, c))
    names = a.buffer.buffer.name, b.buffer.buffer.name, c.buffer.buffer.name
    found: list[Diagnostic] = []
    if da is None:
        return found
    mixable = (da.startswith("float8") and (db or "").startswith("float8")) or any(
        {da, db} <= set(pair) for pair in _MIXABLE
    )
    if db is not None and da != db and not mixable:
        found.append(diagnostic("gemm-dtype", span_of(call), kernel=kernel, a=names[0], da=da, b=names[1], db=db))
    # float8 inputs accumulate in float32 or float16 (mma.sync on sm_89, WGMMA, tcgen05): TileLang builds both.
    allowed = {"float32", "float16"} if da.startswith("float8") else _ACCUMULATORS.get(da)
    if allowed is not None and dc is not None and dc not in allowed:
        wanted = " or ".join(sorted(allowed))
        found.append(
            diagnostic("gemm-accum-dtype", span_of(call), kernel=kernel, c=names[2], dc=dc, da=da, wanted=wanted)
        )
    return found


def _check_reduce(name: str, call: ast.Call, src: Operand | None, dst: Operand | None, kernel: str) -> list[Diagnostic]:
    if src is None or dst is None or not _known(src.shape) or not _known(dst.shape):
        return []
    assert src.shape is not None and dst.shape is not None
    dim_node = keyword(call, "dim", 2)
    dim = dim_node.value if isinstance(dim_node, ast.Constant) else -1 if dim_node is None else None
    if not is_known_int(dim) or not -len(src.shape) <= dim < len(src.shape):
        return []
    dim %= len(src.shape)
    kept = [*src.shape[:dim], *src.shape[dim + 1 :]]
    expected = [kept, [*src.shape[:dim], 1, *src.shape[dim + 1 :]]]
    found: list[Diagnostic] = []
    if list(dst.shape) not in expected and not (not kept and list(dst.shape) == [1]):
        found.append(
            diagnostic(
                "reduce-shape",
                span_of(call),
                kernel=kernel,
                name=name,
                dim=dim,
                src=src.buffer.buffer.name,
                shape=shape_text(src.shape),
                kept=shape_text(kept),
                dst=dst.buffer.buffer.name,
                b=shape_text(dst.shape),
            )
        )
    return found


@dataclass(frozen=True)
class Loop:
    """A loop of a kernel body and the tile-op accesses inside it."""

    line: int
    stages: int
    """``num_stages`` of a ``T.Pipelined`` loop when known, else 1."""
    accesses: list[Access]


def shared_floor(kernel: StaticKernel, loops: Sequence[Loop] = ()) -> SharedFloor | None:
    """The largest set of shared buffers certainly live at once, counted as TileLang keeps them.

    TileLang merges shared buffers whose lifetimes do not overlap, so the sum of all allocations
    is no bound. What no merging undoes: the shared buffers one loop touches are live together
    for the whole loop (every iteration needs them again), and in a ``T.Pipelined`` loop a buffer
    a copy from global memory fills and another op reads is kept once per stage.
    """
    sizes = {
        d.buffer.name: d.buffer.bytes
        for d in kernel.buffers
        if d.buffer.scope.startswith("shared") and d.buffer.scope != "shared.tmem"
    }
    global_names = {d.buffer.name for d in kernel.buffers if d.buffer.scope == "global"}
    groups = [Loop(a.line or 0, 1, [a]) for a in kernel.accesses] + list(loops)
    best: SharedFloor | None = None
    for group in groups:
        names = list(dict.fromkeys(n for a in group.accesses for n in (*a.reads, *a.writes) if n in sizes))
        if not names or any(sizes[n] is None for n in names):
            continue
        parts = [(n, sizes[n] or 0, _copies(n, group, global_names)) for n in names]
        total = sum(size * copies for _, size, copies in parts)
        if best is None or total > best.bytes:
            best = SharedFloor(total, group.line, parts)
    return best


def check_kernel(kernel: StaticKernel) -> list[Diagnostic]:
    """Shared memory per block, warned only when the certain lower bound, or TileLang's own layout
    where the text says it exactly, exceeds the budget."""
    budget = shared_memory_budget(kernel.target)
    floor = kernel.shared_floor
    planned = kernel.shared_planned
    anchor = kernel.launch.span if kernel.launch else kernel.ref.span
    if budget is not None and floor is not None and floor.bytes > budget:
        listed = ", ".join(f"{n} {kib(size)}" + (f" × {c} stages" if c > 1 else "") for n, size, c in floor.parts)
        return [
            diagnostic(
                "shared-memory",
                anchor,
                kernel=kernel.ref.name,
                size=kib(floor.bytes),
                line=floor.line,
                parts=listed,
                target=kernel.target,
                budget=kib(budget),
            )
        ]
    if budget is not None and planned is not None and planned > budget:
        limits = {"size": kib(planned), "target": kernel.target, "budget": kib(budget)}
        return [diagnostic("shared-memory", anchor, form="planned", kernel=kernel.ref.name, fields=limits)]
    return []


def _copies(name: str, loop: Loop, global_names: set[str]) -> int:
    """Stages a pipelined loop keeps of ``name``: all of them when a copy from global memory fills
    it and another op reads it (TileLang's producer/consumer pattern), else one."""
    if loop.stages <= 1:
        return 1
    writers = [
        a for a in loop.accesses if name in a.writes and a.op == "copy" and any(r in global_names for r in a.reads)
    ]
    readers = [a for a in loop.accesses if name in a.reads and name not in a.writes]
    return loop.stages if writers and readers else 1


def shared_bytes(buffers: list[BufferDecl]) -> int | None:
    """Every shared allocation with its pipeline copies, before TileLang merges any."""
    total = 0
    for decl in buffers:
        if not decl.buffer.scope.startswith("shared") or decl.buffer.scope == "shared.tmem":
            continue
        if decl.buffer.bytes is None:
            return None
        total += decl.buffer.bytes * decl.stages
    return total
