"""Whether TileLang gives a reduction shared scratch memory, decided only where its rules are certain.

``tl.reduce`` adds a workspace (``block_threads`` elements of shared memory) when the threads that
share one reduced row span more than a warp (``src/backend/common/op/reduce.h``). Where the row
lives depends on the inferred layout; the one case read here exactly is a row reduction of a
``T.gemm`` accumulator: its layout is the gemm's, and a row stays inside one warp exactly when the
gemm's warp partition puts every warp on its own rows (``n_warp == 1``). The partition follows
``src/cuda/op/gemm.cc`` (``ComputeWgmmaWarpPartition`` on Hopper when WGMMA applies,
``ComputeDefaultWarpPartition`` otherwise). Anything else that reduces across threads counts as
possibly needing a workspace.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from tilescope.core.model import Dim
from tilescope.core.static.records import BufferDecl
from tilescope.core.static.syntax import keyword, primitive_name

_ROW_REDUCTIONS = ("reduce_max", "reduce_min", "reduce_sum", "reduce_abssum", "reduce_absmax")
_POLICIES = ("Square", "FullRow", "FullCol")
_WGMMA_INPUTS = {
    ("float16", "float16", "float16"),
    ("float16", "float16", "float32"),
    ("bfloat16", "bfloat16", "float32"),
}
"""(A, B, C) dtypes WGMMA takes with only ``K % 16 == 0`` asked (``CheckWgmma``)."""


def may_need_workspace(
    statements: Iterable[ast.stmt],
    decls: dict[str, BufferDecl],
    aliases: frozenset[str],
    threads: Dim,
    target: str,
) -> bool:
    """Whether any reduction among ``statements`` may get a shared workspace from TileLang."""
    statements = list(statements)
    calls = [n for stmt in statements for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    reductions = [c for c in calls if any(w in (primitive_name(c, aliases) or "") for w in ("reduce", "cumsum"))]
    if not reductions:
        return False
    if isinstance(threads, int) and threads <= 32:
        return False
    if not isinstance(threads, int) or threads % 32:
        return True
    partitions = _accumulators(calls, decls, aliases, threads // 32, target)
    return any(not _stays_in_a_warp(c, decls, aliases, partitions) for c in reductions)


def _stays_in_a_warp(
    call: ast.Call, decls: dict[str, BufferDecl], aliases: frozenset[str], partitions: dict[str, int | None]
) -> bool:
    """A row reduction of a gemm accumulator whose warps each own whole rows."""
    if primitive_name(call, aliases) not in _ROW_REDUCTIONS or not call.args:
        return False
    source = call.args[0]
    if not isinstance(source, ast.Name) or source.id not in partitions or partitions[source.id] != 1:
        return False
    dim = keyword(call, "dim", 2)
    value: object = None
    if dim is None:
        value = -1
    elif isinstance(dim, ast.Constant):
        value = dim.value
    elif isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub) and isinstance(dim.operand, ast.Constant):
        value = -dim.operand.value if isinstance(dim.operand.value, int) else None
    return len(decls[source.id].buffer.shape) == 2 and value in (1, -1)


def _accumulators(
    calls: list[ast.Call], decls: dict[str, BufferDecl], aliases: frozenset[str], warps: int, target: str
) -> dict[str, int | None]:
    """Each gemm accumulator's ``n_warp``; ``None`` when gemms disagree or the partition is unknown."""
    found: dict[str, int | None] = {}
    for call in calls:
        if primitive_name(call, aliases) != "gemm" or len(call.args) < 3:
            continue
        names = [a.id if isinstance(a, ast.Name) else None for a in call.args[:3]]
        a, b, c = (decls.get(n) if n else None for n in names)
        n_warp = None if a is None or b is None or c is None else _n_warp(call, a, b, c, warps, target, aliases)
        name = names[2]
        if name is not None:
            found[name] = n_warp if found.get(name, n_warp) == n_warp else None
    return found


def _n_warp(
    call: ast.Call, a: BufferDecl, b: BufferDecl, c: BufferDecl, warps: int, target: str, aliases: frozenset[str]
) -> int | None:
    shape_a, shape_c = a.buffer.shape, c.buffer.shape
    if len(shape_c) != 2 or len(shape_a) != 2 or not all(isinstance(d, int) for d in (*shape_a, *shape_c)):
        return None
    policy_node = keyword(call, "policy", 5)
    policy = "Square"
    if policy_node is not None:
        policy = ast.unparse(policy_node).rsplit(".", 1)[-1]
        if policy not in _POLICIES:
            return None
    transposed = keyword(call, "transpose_A", 3)
    if transposed is not None and not isinstance(transposed, ast.Constant):
        return None
    k = shape_a[0] if transposed is not None and transposed.value else shape_a[1]
    m, n = int(shape_c[0]), int(shape_c[1])
    hopper = target in ("sm_90", "sm_90a")
    wgmma = (
        hopper
        and m >= 64
        and warps % 4 == 0
        and b.buffer.scope.startswith("shared")
        and (a.buffer.dtype, b.buffer.dtype, c.buffer.dtype) in _WGMMA_INPUTS
        and int(k) % 16 == 0
    )
    if not wgmma and hopper and m >= 64 and warps % 4 == 0 and b.buffer.scope.startswith("shared"):
        return None  # another WGMMA dtype combination may apply: not read here
    if target.startswith("sm_") and not target.startswith(("sm_8", "sm_9")):
        return None  # Volta, Turing and Blackwell choose other instructions
    return _partition(m, n, warps, policy, group=4 if wgmma else 1, n_per_warp=8)


def _partition(m: int, n: int, warps: int, policy: str, group: int, n_per_warp: int) -> int | None:
    """``n_warp`` of TileLang's warp partition (``group`` 4 for WGMMA's warpgroups, else 1)."""

    def valid(mw: int, nw: int) -> bool:
        return mw * nw == warps and mw % group == 0 and m % (mw * 16) == 0 and n % (nw * n_per_warp) == 0

    choices = [mw for mw in range(1, warps + 1) if warps % mw == 0 and valid(mw, warps // mw)]
    if not choices:
        return None
    if policy == "FullRow":
        return warps // max(choices)
    if policy == "FullCol":
        return warps // min(choices)
    ideal = m / n if n else 1.0
    best = min(choices, key=lambda mw: (abs((m / (mw * 16)) / (n / ((warps // mw) * n_per_warp)) - ideal), mw))
    return warps // best
