"""The buffers a kernel body declares, read statically: ``T.alloc_*`` (and a dialect's allocators),
``T.empty`` outputs, and annotated parameters or names (``A: T.Tensor((M, K), "float16")``), each
with its shape as far as the file's values give it, its dtype, scope and size in bytes.
"""

from __future__ import annotations

import ast

from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Buffer, Dim, Span
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.records import BufferDecl
from tilescope.core.static.symbolic import Value, as_dim, dtype_name, is_known_int
from tilescope.core.static.syntax import arguments, primitive_name, source_text, span_of

SCOPES = {
    "alloc_shared": "shared.dyn",
    "alloc_fragment": "local.fragment",
    "alloc_local": "local",
    "alloc_global": "global",
    "alloc_tmem": "shared.tmem",
    "alloc_reducer": "local.fragment",
}
"""TileLang's common allocators and the scopes of what they allocate."""
_TENSOR_ANNOTATIONS = {"Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer", "LocalBuffer"}
_ANNOTATION_SCOPES = {
    "SharedBuffer": "shared.dyn",
    "FragmentBuffer": "local.fragment",
    "LocalBuffer": "local",
}


def allocation(
    target: ast.Name,
    call: ast.Call,
    allocator: str,
    scopes: dict[str, str],
    env: dict[str, Value],
    aliases: frozenset[str],
) -> BufferDecl:
    """``x = T.alloc_shared((M, K), dtype)`` (or ``T.alloc_var(dtype)``), in the scope its allocator gives
    (``scopes``) unless the call names one."""
    args = arguments(call, ["dtype", "init"] if allocator == "alloc_var" else ["shape", "dtype", "scope"])
    if allocator == "alloc_var":
        shape: list[Value] = [1]
        dtype = _dtype(args.get("dtype"), "int32", env, aliases)
        scope_node = args.get("scope")
        scope = "local.var"
    else:
        shape = _shape(args.get("shape"), env, aliases)
        dtype = _dtype(args.get("dtype"), "float32", env, aliases)
        scope_node = args.get("scope")
        scope = scopes[allocator]
    if scope_node is not None:
        scope_value = evaluate(scope_node, env, aliases)
        scope = scope_value if isinstance(scope_value, str) else scope
    buffer = _make(target.id, shape, dtype, scope, target.lineno, False)
    written = source_text(args.get("shape")) if allocator != "alloc_var" else None
    return BufferDecl(buffer, span_of(target), span_of(call), allocator, written=written)


def empty_tensor(target: ast.Name, call: ast.Call, env: dict[str, Value], aliases: frozenset[str]) -> BufferDecl:
    """``C = T.empty((M, N), dtype)``: an output the kernel returns, a global parameter."""
    shape_nodes = list(call.args)
    keywords = {k.arg: k.value for k in call.keywords}
    dtype_node = keywords.get("dtype")
    first = evaluate(shape_nodes[0], env, aliases) if shape_nodes else None
    if shape_nodes and (isinstance(shape_nodes[0], ast.Tuple | ast.List) or isinstance(first, tuple)):
        shape = list(first) if isinstance(first, tuple) else _shape(shape_nodes[0], env, aliases)
        dtype_node = shape_nodes[1] if len(shape_nodes) > 1 else dtype_node
    else:
        shape = [evaluate(n, env, aliases) for n in shape_nodes]
    dtype = _dtype(dtype_node, "float32", env, aliases)
    buffer = _make(target.id, shape, dtype, "global", target.lineno, True)
    written = ", ".join(source_text(n) or "?" for n in shape_nodes[:1] if isinstance(n, ast.Tuple | ast.List))
    return BufferDecl(buffer, span_of(target), span_of(call), "empty", written=written or None)


def annotated(
    name: str, annotation: ast.expr, name_span: Span, env: dict[str, Value], aliases: frozenset[str]
) -> BufferDecl | None:
    """A name annotated as a tensor or buffer (``T.Tensor((M, K), dtype)``, ``T.SharedBuffer[...]``); ``None``
    for any other annotation."""
    kind = primitive_name(annotation.value if isinstance(annotation, ast.Subscript) else annotation, aliases)
    if kind not in _TENSOR_ANNOTATIONS:
        return None
    if isinstance(annotation, ast.Subscript):
        parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        shape_node, dtype_node = parts[0], parts[1] if len(parts) > 1 else None
    elif isinstance(annotation, ast.Call):
        args = arguments(annotation, ["shape", "dtype"])
        shape_node, dtype_node = args.get("shape"), args.get("dtype")
    else:
        return None
    scope = _ANNOTATION_SCOPES.get(kind, "global")
    shape = _shape(shape_node, env, aliases)
    dtype = _dtype(dtype_node, "float32", env, aliases)
    buffer = _make(name, shape, dtype, scope, name_span.line, scope == "global")
    return BufferDecl(buffer, name_span, span_of(annotation), kind, written=source_text(shape_node))


def _shape(node: ast.expr | None, env: dict[str, Value], aliases: frozenset[str]) -> list[Value]:
    value = evaluate(node, env, aliases)
    if isinstance(value, tuple):
        return list(value)
    return [value]


def _dtype(node: ast.expr | None, fallback: str, env: dict[str, Value], aliases: frozenset[str]) -> str:
    if node is None:
        return fallback
    value = evaluate(node, env, aliases)
    return dtype_name(value) or str(value)


def _make(name: str, shape: list[Value], dtype: str, scope: str, line: int, is_param: bool) -> Buffer:
    dims: list[Dim] = [as_dim(v) for v in shape]
    return Buffer(name, dims, dtype, scope, _bytes(shape, dtype), line, is_param)


def _bytes(shape: list[Value], dtype: str) -> int | None:
    bits = dtype_bits(dtype)
    if bits is None or not all(is_known_int(d) for d in shape):
        return None
    count = 1
    for dim in shape:
        count *= dim
    return count * bits // 8
