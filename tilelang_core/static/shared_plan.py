"""Shared memory per block as TileLang 0.1.15 lays it out, computed from the source.

TileLang puts every ``shared.dyn`` buffer of a launch into one arena and lets buffers whose
lifetimes do not overlap share bytes (``MergeSharedMemoryAllocations``,
``src/transform/merge_shared_memory_allocations.cc``). Its rules, followed here:

* lifetimes are counted in the top-level statements of the launch body: an access anywhere inside
  a loop or a branch counts for the statement that holds it (the pass attributes a touch to the
  scope at the allocation's level, and TileLang allocates at the launch);
* ``InjectSoftwarePipeline`` keeps ``num_stages`` copies of a buffer that a copy stage of a
  ``T.Pipelined`` loop fills (a statement that reads global memory and writes shared memory) and
  another statement of the loop reads (``pipeline_planning.cc``);
* a buffer nothing touches is never placed; a single buffer is never merged; a reduction that may
  get a workspace from TileLang (``reduce_workspace``) leaves no figure;
* on sm_90 and later, warp specialisation puts the copies of every pipelined loop in a producer
  branch ahead of all the compute, so with two such loops in a launch the lifetimes are not the
  text's: no figure then; with one, the figure stands only where it is the same with and without
  that reordering (whether TileLang specialises depends on its TMA lowering);
* the packer: intervals in program order (larger first on ties, then by name), best fit among
  freed blocks, else the free block at the top of the arena, else a new block at the top; offsets
  aligned to 16 bytes, 1024 for buffers that TMA copies or WGMMA descriptors address on sm_90 and
  later; the total rounded up to 16.

The figure is exact only where all of that is known from the text; otherwise ``None`` (and only the
certain lower bound of ``checks.shared_floor`` is used for warnings).
"""

from __future__ import annotations

import ast
import bisect
import copy
import heapq
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from tilescope.core.model import Dim
from tilescope.core.static.discover import LAUNCHES
from tilescope.core.static.records import BufferDecl, StaticKernel
from tilescope.core.static.reduce_workspace import may_need_workspace
from tilescope.core.static.syntax import primitive_name

_ALIGN = 16
_SWIZZLE_ALIGN = 1024
_NO_TOUCH = ("annotate_", "use_swizzle")
"""Calls that name buffers without touching their memory (layout annotations)."""
_COPIES = frozenset({"copy", "async_copy", "tma_copy", "copy_cluster", "im2col", "c2d_im2col"})
"""Tile ops that move a source region (first argument) into a destination (second)."""


@dataclass(frozen=True)
class _Interval:
    name: str
    start: int
    end: int
    size: int
    alignment: int


def planned_shared_bytes(
    body: ast.FunctionDef, kernel: StaticKernel, aliases: frozenset[str], dead: AbstractSet[int] = frozenset()
) -> int | None:
    """The shared memory TileLang allocates per block for the largest launch, or ``None`` when unsure.

    ``dead`` holds the ``id`` of statements in branches a known condition rules out."""
    pruned = _prune(body, dead) if dead else body
    assert isinstance(pruned, ast.FunctionDef)
    body = pruned
    decls = {d.buffer.name: d for d in kernel.buffers}
    if any(d.buffer.scope.startswith("shared") and d.buffer.bytes is None for d in decls.values()):
        return None
    stages = {(p.span.line, p.span.column): p.num_stages for p in kernel.pipelines}
    threads = {(launch.span.line, launch.span.column): launch.threads for launch in kernel.launches}
    totals: list[int | None] = []
    for stmt in ast.walk(body):
        if not isinstance(stmt, ast.With):
            continue
        for item in stmt.items:
            call = item.context_expr
            if primitive_name(call, aliases) in LAUNCHES:
                count = threads.get((call.lineno, call.col_offset), "?")
                totals.append(_launch_bytes(stmt.body, decls, stages, count, aliases, kernel.target))
    if not totals or any(t is None for t in totals):
        return None
    return max(t for t in totals if t is not None)


def _launch_bytes(
    body: list[ast.stmt],
    decls: dict[str, BufferDecl],
    stages: dict[tuple[int, int], Dim],
    threads: Dim,
    aliases: frozenset[str],
    target: str,
) -> int | None:
    if may_need_workspace(body, decls, aliases, threads, target):
        return None
    dynamic = {n for n, d in decls.items() if d.buffer.scope == "shared.dyn"}
    static = {n for n, d in decls.items() if d.buffer.scope == "shared"}
    touched: list[set[str]] = []
    versions: dict[str, int] = {}
    aligned: set[str] = set()
    produced: set[str] = set()
    staged = 0
    for stmt in body:
        if _allocation(stmt, aliases):
            continue
        names = _names(stmt, aliases, dynamic | static)
        if names:
            touched.append(names)
        for loop in (n for n in ast.walk(stmt) if isinstance(n, ast.For)):
            found = _pipeline_versions(loop, decls, stages, aliases)
            if found is None:
                return None
            if found:
                staged += 1
                produced |= found.keys()
            for name, count in found.items():
                versions[name] = max(versions.get(name, 1), count)
        if _hopper(target):
            aligned |= _swizzled(stmt, decls, aliases)
    if staged > 1 and _hopper(target):
        return None  # warp specialisation moves every loop's copies ahead of all compute: lifetimes change
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for index, names in enumerate(touched):
        for name in names:
            first.setdefault(name, index)
            last[name] = index
    static_bytes = sum(_size(decls[n], versions) for n in static if n in first)
    placed = [n for n in sorted(dynamic) if n in first]
    if len(placed) <= 1:
        return static_bytes + sum(_size(decls[n], versions) for n in placed)
    sizes = {n: _size(decls[n], versions) for n in placed}
    orders = [first]
    if _hopper(target) and produced:
        # Warp specialisation, where TileLang applies it, runs the pipeline's copies in a producer
        # branch laid out ahead of all the compute: those buffers then live from the very start.
        orders.append({n: -1 if n in produced else index for n, index in first.items()})
    figures = {
        _pack([_Interval(n, start[n], last[n] + 1, sizes[n], align(n)) for n in placed])
        for start in orders
        for align in (lambda n: _ALIGN, lambda n: _SWIZZLE_ALIGN if n in aligned else _ALIGN)
    }
    if len(figures) > 1:
        return None  # the figure depends on which copies become TMA or warp-specialised: not in the text
    return static_bytes + _align(figures.pop(), _ALIGN)


def _prune(node: ast.AST, dead: AbstractSet[int]) -> ast.AST:
    """``node`` without the statements in ``dead``: shallow copies along the way, the cached tree untouched."""
    changes: dict[str, object] = {}
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            kept = [_prune(v, dead) if isinstance(v, ast.AST) else v for v in value if id(v) not in dead]
            if len(kept) != len(value) or any(a is not b for a, b in zip(kept, value, strict=False)):
                changes[name] = kept
        elif isinstance(value, ast.AST):
            moved = _prune(value, dead)
            if moved is not value:
                changes[name] = moved
    if not changes:
        return node
    copied = copy.copy(node)
    for name, value in changes.items():
        setattr(copied, name, value)
    return copied


def _size(decl: BufferDecl, versions: dict[str, int]) -> int:
    return (decl.buffer.bytes or 0) * versions.get(decl.buffer.name, 1)


def _hopper(target: str) -> bool:
    digits = "".join(c for c in target.removeprefix("sm_") if c.isdigit())
    return target.startswith("sm_") and bool(digits) and int(digits) >= 90


def _allocation(stmt: ast.stmt, aliases: frozenset[str]) -> bool:
    value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr) else None
    name = primitive_name(value, aliases) if value is not None else None
    return name is not None and (name.startswith("alloc_") or name.startswith(_NO_TOUCH))


def _names(node: ast.AST, aliases: frozenset[str], wanted: set[str]) -> set[str]:
    """The shared buffers a statement touches (its allocations and layout annotations left out)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call) and (primitive_name(current, aliases) or "").startswith(_NO_TOUCH):
            continue
        if isinstance(current, ast.stmt) and _allocation(current, aliases):
            continue  # an allocation, even inside a branch, touches nothing
        if isinstance(current, ast.Name) and current.id in wanted:
            found.add(current.id)
        stack.extend(ast.iter_child_nodes(current))
    return found


def _pipeline_versions(
    loop: ast.For, decls: dict[str, BufferDecl], stages: dict[tuple[int, int], Dim], aliases: frozenset[str]
) -> dict[str, int] | None:
    """Copies ``InjectSoftwarePipeline`` keeps of each buffer of a ``T.Pipelined`` loop; ``None`` when
    the stage count is not a number or the loop assigns stages itself (``order=``/``stage=``)."""
    call = loop.iter
    if primitive_name(call, aliases) != "Pipelined" or not isinstance(call, ast.Call):
        return {}
    if any(k.arg in ("order", "stage") for k in call.keywords):
        return None
    count = stages.get((call.lineno, call.col_offset), 0)
    if not isinstance(count, int):
        return None
    if count <= 1:
        return {}
    effects = [_effects(stmt, decls, aliases) for stmt in loop.body]
    versions: dict[str, int] = {}
    for index, (stmt, (writes, _)) in enumerate(zip(loop.body, effects, strict=True)):
        filled = {n for n in writes if decls[n].buffer.scope.startswith("shared")}
        if not filled or not _reads_global(stmt, decls, aliases):
            continue
        for name in filled:
            if any(name in reads for i, (_, reads) in enumerate(effects) if i != index):
                versions[name] = count
    return versions


def _effects(stmt: ast.stmt, decls: dict[str, BufferDecl], aliases: frozenset[str]) -> tuple[set[str], set[str]]:
    """Buffers a statement writes and reads (tile ops by their operand roles, stores by their targets)."""
    writes: set[str] = set()
    reads: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            name = primitive_name(node, aliases) or ""
            operands = [_base(a) for a in node.args]
            if name in _COPIES:
                dest = operands[1] if len(operands) > 1 else None
                if dest in decls:
                    writes.add(dest)
                if operands and operands[0] in decls:
                    reads.add(operands[0])
            else:
                reads |= {o for o in operands if o in decls}
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in decls:
            (writes if isinstance(node.ctx, ast.Store) else reads).add(node.value.id)
    return writes, reads


def _reads_global(stmt: ast.stmt, decls: dict[str, BufferDecl], aliases: frozenset[str]) -> bool:
    """A copy stage: the statement reads global memory (a global buffer, or a copy from a tensor
    the kernel views under another name)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            name = primitive_name(node, aliases) or ""
            if name in _COPIES:
                source = _base(node.args[0]) if node.args else None
                if source is None or source not in decls or decls[source].buffer.scope == "global":
                    return True
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name):
            decl = decls.get(node.value.id)
            if decl is not None and decl.buffer.scope == "global":
                return True
    return False


def _swizzled(stmt: ast.stmt, decls: dict[str, BufferDecl], aliases: frozenset[str]) -> set[str]:
    """Shared buffers a TMA copy (from or to global memory) or a gemm operand descriptor addresses."""
    found: set[str] = set()
    for node in ast.walk(stmt):
        if not isinstance(node, ast.Call):
            continue
        name = primitive_name(node, aliases) or ""
        operands = [_base(a) for a in node.args]
        if name in _COPIES and len(operands) >= 2:
            ends = [operands[0], operands[1]]
            scopes = [decls[e].buffer.scope if e in decls else "global" for e in ends]
            if "global" in scopes:
                found |= {e for e, s in zip(ends, scopes, strict=True) if e is not None and s.startswith("shared")}
        elif name.startswith("gemm") or name.endswith("gemm"):
            found |= {o for o in operands[:2] if o in decls and decls[o].buffer.scope.startswith("shared")}
    return found


def _base(node: ast.expr) -> str | None:
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _pack(intervals: list[_Interval]) -> int:
    """TileLang's ``LinearScanPack``: the arena size for these lifetimes."""
    free: list[list[int]] = []  # [offset, size], sorted by offset, coalesced
    active: list[tuple[int, int, int, int]] = []  # (end, order, offset, size)
    top = 0

    def insert(offset: int, size: int) -> None:
        if size <= 0:
            return
        index = bisect.bisect_left([b[0] for b in free], offset)
        free.insert(index, [offset, size])
        if index + 1 < len(free) and free[index][0] + free[index][1] >= free[index + 1][0]:
            end = max(free[index][0] + free[index][1], free[index + 1][0] + free[index + 1][1])
            free[index][1] = end - free[index][0]
            del free[index + 1]
        if index > 0 and free[index - 1][0] + free[index - 1][1] >= free[index][0]:
            end = max(free[index - 1][0] + free[index - 1][1], free[index][0] + free[index][1])
            free[index - 1][1] = end - free[index - 1][0]
            del free[index]

    for order, interval in enumerate(sorted(intervals, key=lambda i: (i.start, -i.size, i.name))):
        while active and active[0][0] <= interval.start:
            _, _, offset, size = heapq.heappop(active)
            insert(offset, size)
        need, alignment = interval.size, interval.alignment
        best, waste = -1, None
        for index, (offset, size) in enumerate(free):
            head = _align(offset, alignment) - offset
            if head > size or size - head < need:
                continue
            if waste is None or size - need < waste:
                best, waste = index, size - need
        if best >= 0:
            offset, size = free.pop(best)
            start = _align(offset, alignment)
            insert(start + need, size - (start - offset) - need)
            insert(offset, start - offset)
        elif free and free[-1][0] + free[-1][1] == top and _align(free[-1][0], alignment) < top:
            offset, size = free.pop()
            start = _align(offset, alignment)
            insert(offset, start - offset)
            top = start + need
        else:
            start = _align(top, alignment)
            insert(top, start - top)
            top = start + need
        heapq.heappush(active, (interval.end, order, start, need))
    return top
