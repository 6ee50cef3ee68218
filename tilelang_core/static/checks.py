"""Static checks: mistakes visible in the source before anything compiles.

Each check returns ``Diagnostic`` records with a stable ``code``. They only speak when every number
involved is known; a symbolic extent never produces a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tilescope.core.model import Diagnostic, Span
from tilescope.core.static import catalog
from tilescope.core.static.evaluate import Value, is_known_int
from tilescope.core.targets import shared_memory_budget

if TYPE_CHECKING:
    from tilescope.core.static.kernels import Operand
    from tilescope.core.static.records import PrimitiveUse, StaticKernel
    from tilescope.core.static.recover import ParsedBlock

_ACCUMULATORS = {
    "float16": {"float32", "float16"},
    "bfloat16": {"float32"},
    "float32": {"float32"},
    "float64": {"float64"},
    "int8": {"int32"},
    "uint8": {"int32"},
}


def _span(node: ast.AST) -> Span:
    return Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]


def shape_text(shape: Sequence[Value]) -> str:
    """``128×32``; symbolic extents print as written (``M×K``)."""
    return "×".join(str(d) for d in shape) if shape else "scalar"


def kib(size: int) -> str:
    """``48 KB``, ``1.5 KB``, ``2 MB``: sizes as people read them (1 KB = 1024 bytes)."""
    if size >= 1024 * 1024:
        value, unit = size / (1024 * 1024), "MB"
    else:
        value, unit = size / 1024, "KB"
    return f"{value:.0f} {unit}" if value.is_integer() else f"{value:.1f} {unit}"


def _error(message: str, node: ast.AST, code: str, kernel: str, severity: str = "error") -> Diagnostic:
    return Diagnostic(severity, message, _span(node), code, kernel=kernel)  # type: ignore[arg-type]


def _known(shape: Sequence[Value] | None) -> bool:
    return shape is not None and all(is_known_int(d) for d in shape)


def _keyword(call: ast.Call, name: str, position: int) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return call.args[position] if len(call.args) > position else None


def _flag(call: ast.Call, name: str, position: int) -> bool | None:
    node = _keyword(call, name, position)
    if node is None:
        return False
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, bool) else None


def check_op(name: str, call: ast.Call, operands: list[Operand | None], kernel: str) -> list[Diagnostic]:
    """Shape and dtype agreement of one tile op's operands."""
    if name == "copy" and len(operands) >= 2:
        return _check_copy(call, operands[0], operands[1], kernel)
    if name in ("gemm", "gemm_v1", "gemm_v2", "wgmma_gemm") and len(operands) >= 3:
        return _check_gemm(call, operands[0], operands[1], operands[2], kernel)
    if name.startswith("reduce_") and len(operands) >= 2:
        return _check_reduce(name, call, operands[0], operands[1], kernel)
    return []


def _check_copy(call: ast.Call, src: Operand | None, dst: Operand | None, kernel: str) -> list[Diagnostic]:
    if src is None or dst is None or not _known(src.shape) or not _known(dst.shape):
        return []
    assert src.shape is not None and dst.shape is not None
    squeeze_src = [d for d in src.shape if d != 1]
    squeeze_dst = [d for d in dst.shape if d != 1]
    if squeeze_src == squeeze_dst:
        return []
    message = (
        f"T.copy shapes differ: {src.buffer.buffer.name} is {shape_text(src.shape)} "
        f"but {dst.buffer.buffer.name} is {shape_text(dst.shape)}"
    )
    return [_error(message, call, "copy-shape", kernel)]


def _check_gemm(
    call: ast.Call, a: Operand | None, b: Operand | None, c: Operand | None, kernel: str
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    if a is None or b is None or c is None:
        return found
    names = a.buffer.buffer.name, b.buffer.buffer.name, c.buffer.buffer.name
    trans_a, trans_b = _flag(call, "transpose_A", 3), _flag(call, "transpose_B", 4)
    shapes = a.shape, b.shape, c.shape
    if trans_a is not None and trans_b is not None and all(_known(s) and len(s) == 2 for s in shapes):
        (a0, a1), (b0, b1), (c0, c1) = shapes  # type: ignore[misc]
        m, k_a = (a1, a0) if trans_a else (a0, a1)
        k_b, n = (b1, b0) if trans_b else (b0, b1)
        if k_a != k_b:
            message = f"T.gemm K mismatch: {names[0]} gives K = {k_a}, {names[1]} gives K = {k_b}"
            flipped_k = b0 if trans_b else b1
            if flipped_k == k_a:
                setting = "False" if trans_b else "True"
                message += f"; {names[1]} is {b0}×{b1}, so pass transpose_B={setting} or allocate it as {b1}×{b0}"
            found.append(_error(message, call, "gemm-shape", kernel))
        elif (m, n) != (c0, c1):
            message = f"T.gemm output shape: {names[0]}·{names[1]} is {m}×{n} but {names[2]} is {c0}×{c1}"
            found.append(_error(message, call, "gemm-shape", kernel))
    found.extend(_check_gemm_dtypes(call, a, b, c, kernel))
    return found


def _check_gemm_dtypes(call: ast.Call, a: Operand, b: Operand, c: Operand, kernel: str) -> list[Diagnostic]:
    da, db, dc = a.buffer.buffer.dtype, b.buffer.buffer.dtype, c.buffer.buffer.dtype
    names = a.buffer.buffer.name, b.buffer.buffer.name, c.buffer.buffer.name
    found: list[Diagnostic] = []
    if da != db and not (da.startswith("float8") and db.startswith("float8")):
        message = f"T.gemm operands differ in dtype: {names[0]} is {da}, {names[1]} is {db}"
        found.append(_error(message, call, "gemm-dtype", kernel))
    allowed = {"float32"} if da.startswith("float8") else _ACCUMULATORS.get(da)
    if allowed is None:
        return found
    if dc not in allowed:
        wanted = " or ".join(sorted(allowed))
        message = f"T.gemm accumulator {names[2]} is {dc}; {da} inputs accumulate in {wanted}"
        found.append(_error(message, call, "gemm-accum-dtype", kernel))
    elif dc == "float16":
        message = f"T.gemm accumulates in float16 ({names[2]}): sums of {da} products lose precision; use float32"
        found.append(_error(message, call, "gemm-accum-dtype", kernel, "warning"))
    return found


def _check_reduce(name: str, call: ast.Call, src: Operand | None, dst: Operand | None, kernel: str) -> list[Diagnostic]:
    if src is None or dst is None or not _known(src.shape) or not _known(dst.shape):
        return []
    assert src.shape is not None and dst.shape is not None
    dim_node = _keyword(call, "dim", 2)
    dim = dim_node.value if isinstance(dim_node, ast.Constant) else -1 if dim_node is None else None
    if not is_known_int(dim) or not -len(src.shape) <= dim < len(src.shape):
        return []
    dim %= len(src.shape)
    kept = [*src.shape[:dim], *src.shape[dim + 1 :]]
    expected = [kept, [*src.shape[:dim], 1, *src.shape[dim + 1 :]]]
    found: list[Diagnostic] = []
    if list(dst.shape) not in expected and not (not kept and list(dst.shape) == [1]):
        message = (
            f"T.{name} along dim {dim} of {src.buffer.buffer.name} ({shape_text(src.shape)}) "
            f"gives {shape_text(kept)}, but {dst.buffer.buffer.name} is {shape_text(dst.shape)}"
        )
        found.append(_error(message, call, "reduce-shape", kernel))
    if src.buffer.buffer.dtype != dst.buffer.buffer.dtype:
        message = (
            f"T.{name} converts {src.buffer.buffer.dtype} ({src.buffer.buffer.name}) "
            f"to {dst.buffer.buffer.dtype} ({dst.buffer.buffer.name})"
        )
        found.append(_error(message, call, "reduce-dtype", kernel, "warning"))
    return found


def check_kernel(kernel: StaticKernel) -> list[Diagnostic]:
    """Whole-kernel budgets: shared memory per block and fragments over the thread count."""
    found: list[Diagnostic] = []
    budget = shared_memory_budget(kernel.target)
    if kernel.shared_bytes is not None and budget is not None and kernel.shared_bytes > budget:
        parts = ", ".join(
            f"{d.buffer.name} {kib(d.buffer.bytes or 0)}" + (f" × {d.stages} stages" if d.stages > 1 else "")
            for d in kernel.buffers
            if d.buffer.scope.startswith("shared") and d.buffer.bytes
        )
        anchor = kernel.launch.span if kernel.launch else kernel.ref.span
        message = (
            f"shared memory {kib(kernel.shared_bytes)} per block exceeds the {kernel.target} limit of "
            f"{kib(budget)} ({parts})"
        )
        found.append(Diagnostic("warning", message, anchor, "shared-memory", kernel=kernel.ref.name))
    threads = kernel.launch.threads if kernel.launch else None
    if is_known_int(threads):
        assert isinstance(threads, int)
        for decl in kernel.buffers:
            if decl.buffer.scope != "local.fragment" or not all(isinstance(d, int) for d in decl.buffer.shape):
                continue
            count = 1
            for dim in decl.buffer.shape:
                count *= int(dim)
            if count > threads and count % threads:
                message = (
                    f"{decl.buffer.name} has {count} elements, which {threads} threads cannot share evenly "
                    f"({count} % {threads} = {count % threads})"
                )
                found.append(Diagnostic("warning", message, decl.anchor, "fragment-threads", kernel=kernel.ref.name))
    return found


def check_primitives(block: ParsedBlock, aliases: frozenset[str]) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    """Every ``T.<name>`` in a block, and diagnostics for unknown names and wrong arguments."""
    key = ("primitives", aliases)
    cached = block.memo.get(key)
    if cached is None:
        cached = _check_primitives(block.nodes, aliases)
        block.memo[key] = cached
    return cached  # type: ignore[return-value]


def _check_primitives(nodes: list[ast.AST], aliases: frozenset[str]) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    from tilescope.core.static.records import PrimitiveUse

    uses: list[PrimitiveUse] = []
    found: list[Diagnostic] = []
    calls: dict[int, ast.Call] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            calls[id(node.func)] = node
    for node in nodes:
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases):
            continue
        end = node.end_col_offset or 0
        span = Span(node.end_lineno or node.lineno, end - len(node.attr), node.end_lineno, end)
        call = calls.get(id(node))
        uses.append(PrimitiveUse(node.attr, span, call is not None))
        primitive = catalog.lookup(node.attr)
        if primitive is None:
            guess = catalog.closest(node.attr)
            hint = f"; did you mean T.{guess}?" if guess else ""
            found.append(
                Diagnostic(
                    "error",
                    f"T.{node.attr} is not part of tilelang.language{hint}",
                    span,
                    "unknown-primitive",
                )
            )
        elif call is not None and primitive.kind == "function" and primitive.params is not None:
            message = _argument_problem(primitive, call)
            if message:
                found.append(Diagnostic("error", message, _span(call), "wrong-arguments"))
    uses.sort(key=lambda u: (u.span.line, u.span.column))
    return uses, found


def _argument_problem(primitive: catalog.Primitive, call: ast.Call) -> str | None:
    params = primitive.params or ()
    kinds = {p.kind for p in params}
    positional = [p for p in params if p.kind in ("positional_only", "positional_or_keyword")]
    by_keyword = {p.name for p in params if p.kind in ("positional_or_keyword", "keyword_only")}
    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if "var_positional" not in kinds and not starred and len(call.args) > len(positional):
        return f"T.{primitive.name} takes {len(positional)} positional arguments but {len(call.args)} were given"
    if "var_keyword" not in kinds:
        for keyword in call.keywords:
            if keyword.arg is not None and keyword.arg not in by_keyword:
                close = [n for n in by_keyword if n.lower() == keyword.arg.lower()]
                hint = f"; did you mean {close[0]}?" if close else ""
                return f"T.{primitive.name} has no argument {keyword.arg!r}{hint}"
    if starred:
        return None
    by_position = {p.name for p in positional[: len(call.args)]}
    for keyword in call.keywords:
        if keyword.arg in by_position:
            return f"T.{primitive.name} got multiple values for argument {keyword.arg!r}"
    given = by_position | {k.arg for k in call.keywords if k.arg}
    missing = [
        p.name
        for p in params
        if p.default is None
        and p.kind in ("positional_only", "positional_or_keyword", "keyword_only")
        and p.name not in given
    ]
    if missing:
        return f"T.{primitive.name} is missing {', '.join(missing)}"
    return None
