"""A kernel's arguments as the record hook writes them: values in ``record_values``'s form (or why they
have none), tensors as their shape and dtype, ``T.const`` names bound by the built kernel's tensor
shapes. Part of the record hook, copied beside it (``tilescope_hook_arguments``): it must import
nothing of Tilescope.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from typing import Any

try:
    # Written beside the hook at run time, so the checker cannot resolve it.
    import tilescope_record_values as _values  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside ``sitecustomize``
    from tilescope.core.record import record_values as _values


def plain(value: Any) -> Any:
    """``value`` as JSON where it is a plain value, a list of them, or a TVM or TileLang object (as text)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, bool | int | float | str) for v in value):
        return list(value)
    if type(value).__module__.startswith(("tvm", "tilelang")) or "dtype" in type(value).__name__.lower():
        with contextlib.suppress(Exception):
            return str(value)
    return None


def tensor(value: Any) -> dict[str, Any] | None:
    """A tensor's shape and dtype; ``None`` for anything else."""
    shape = getattr(value, "shape", None)
    if shape is None or not hasattr(value, "dtype"):
        return None
    try:
        return {"shape": [int(d) for d in shape], "dtype": str(value.dtype).removeprefix("torch.")}
    except (TypeError, ValueError):
        return None


def consts(func: Any, prim_func: Any) -> dict[str, int]:
    """``T.const`` names bound by the built kernel's tensor shapes (``A: T.Tensor((M, K))`` → ``M``, ``K``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return {}
    shapes: dict[str, list[str | None]] = {}
    for node in ast.walk(tree):
        target, call = None, None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, call = node.target.id, node.annotation
        elif isinstance(node, ast.arg) and node.annotation is not None:
            target, call = node.arg, node.annotation
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, call = node.targets[0].id, node.value
        if isinstance(call, ast.Subscript):  # T.Tensor[(M, K), dtype]: the shape is the first item
            index = call.slice
            first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if isinstance(index, ast.Tuple) and not isinstance(first, ast.Tuple | ast.List):
                first = index  # T.Tensor[M, K]: every item is a dimension
            call = ast.Call(func=call.value, args=[first], keywords=[])
        if target and isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Tuple | ast.List):
            dims = call.args[0].elts
            shapes[target] = [d.id if isinstance(d, ast.Name) else None for d in dims]
    bound: dict[str, int] = {}
    for param in getattr(prim_func, "params", []):
        buffer = prim_func.buffer_map.get(param) if hasattr(prim_func, "buffer_map") else None
        if buffer is None:
            continue
        names = shapes.get(str(buffer.name), [])
        for name, extent in zip(names, buffer.shape, strict=False):
            with contextlib.suppress(TypeError, ValueError):
                if name is not None:
                    bound.setdefault(name, int(extent))
    return bound


def arguments(given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """Each argument as a rebuildable value, a tensor's shape and dtype, or why it has no recorded form."""
    values: dict[str, Any] = {}
    tensors: dict[str, Any] = {}
    unrecorded: dict[str, str] = {}
    for name, value in given.items():
        described = tensor(value)
        if described is not None:
            tensors[name] = described
            continue
        try:
            values[name] = _values.encode(value)
        except _values.Unrecordable as why:
            unrecorded[name] = str(why)
    return values, tensors, unrecorded
