"""What the run-along answers without following the file's code: methods of known values, ``is``/``in``.

``"e4m3".startswith("e4")``, ``cfg.get("block_M", 128)``, ``shapes.append(n)`` and ``x is None`` on
values the run-along already knows have plain answers; anything else is ``LIBRARY``, a call it does
not follow, whose value ``evaluate`` decides.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, MutableMapping

from tilescope.core.static.budget import charge_size, too_large
from tilescope.core.static.flow_values import MAX_ITEMS, Record, builtin, items_of, known
from tilescope.core.static.symbolic import Shaped, Sym, Value, admitted, dtype_name

_STR_METHODS = {"isdigit", "isalpha", "isalnum", "lower", "upper", "strip", "startswith", "endswith", "replace"}
_STR_METHODS |= {"split"}
IDENTITY = {ast.Is, ast.IsNot, ast.In, ast.NotIn}
"""The comparisons ``identity`` answers."""


class Library:
    """A call the run-along does not follow: ``evaluate`` decides what it yields."""


LIBRARY = Library()


def known_method(
    owner_name: str,
    base: Value,
    attr: str,
    args: list[Value],
    kwargs: dict[str, Value],
    scope: Mapping[str, Value],
    aliases: frozenset[str],
    opaque: bool,
) -> Value | Library:
    """The value of ``base.attr(*args, **kwargs)`` (``owner_name`` when ``base`` is a plain name), or ``LIBRARY``."""
    if owner_name in ("itertools", "math") and not opaque:
        found = builtin(attr, owner_name, args, kwargs)
        if found is not None:
            return found
    if owner_name in aliases and attr == "dtype" and len(args) == 1 and dtype_name(args[0]):
        return dtype_name(args[0])
    if attr == "as_torch" and dtype_name(base) and not args:
        return base
    if isinstance(base, str) and attr in _STR_METHODS and all(isinstance(a, str) for a in args) and not kwargs:
        try:
            charge_size(_predicted(base, attr, args))
            result = getattr(base, attr)(*args)
            return tuple(result) if isinstance(result, list) else result
        except (TypeError, ValueError):
            return Sym(f"{attr}(…)")
    if isinstance(base, str) and attr == "join" and len(args) == 1 and isinstance(args[0], tuple):
        parts = args[0]
        if not all(isinstance(a, str) for a in parts):
            return Sym("join(…)")
        charge_size(sum(map(len, parts)) + len(base) * max(len(parts) - 1, 0))
        return base.join(parts)
    if owner_name and attr in ("append", "extend", "update") and isinstance(scope, MutableMapping):
        return _mutate(owner_name, base, attr, args, scope)
    if isinstance(base, Record) and attr in ("get", "items", "keys", "values"):
        if attr == "get" and args:
            return base.get(args[0]) if base.has(args[0]) else (args[1] if len(args) > 1 else None)
        pairs = base.items
        return tuple(pairs if attr == "items" else (p[0 if attr == "keys" else 1] for p in pairs))
    return LIBRARY


def _predicted(base: str, attr: str, args: list[Value]) -> int:
    """The size of ``base.attr(*args)``, known before it is built: a ``replace`` grows the text by
    ``count * (len(new) - len(old))``, a ``split`` has a slot for each part besides their characters."""
    if attr == "replace" and len(args) == 2:
        old, new = args
        count = base.count(old) if old else len(base) + 1
        return len(base) + count * max(len(new) - len(old), 0)
    if attr == "split":
        parts = base.count(args[0]) + 1 if args and args[0] else len(base) // 2 + 1
        if parts > MAX_ITEMS:
            too_large()
        return len(base) + parts
    return len(base)


def _mutate(name: str, base: Value, attr: str, args: list[Value], scope: MutableMapping[str, Value]) -> Value | Library:
    added = items_of(args[0]) if len(args) == 1 else None
    if isinstance(base, tuple) and attr == "append" and len(args) == 1 and len(base) < MAX_ITEMS:
        scope[name] = admitted((*base, args[0]))
    elif isinstance(base, tuple) and attr == "extend" and added is not None and len(base) + len(added) <= MAX_ITEMS:
        scope[name] = admitted((*base, *added))
    elif isinstance(base, Record) and attr == "update" and len(args) == 1 and isinstance(args[0], Record):
        scope[name] = admitted(Record(tuple({**dict(base.items), **dict(args[0].items)}.items())))
    elif isinstance(base, tuple | Record):
        scope[name] = Sym(name)
    else:
        return LIBRARY
    return None


def fp8_type(target: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """TileLang's ``determine_fp8_type``: with a CUDA build of PyTorch (a CUDA target), E4M3FN or E5M2."""
    fmt = args[0] if args else kwargs.get("fp8_format", "e4m3")
    if not target.startswith("sm_") or fmt not in ("e4m3", "e5m2"):
        return Sym("determine_fp8_type(…)")
    return "float8_e4m3fn" if fmt == "e4m3" else "float8_e5m2"


def identity(op: ast.cmpop, left: Value, right: Value, node: ast.AST) -> Value:
    """``x is None``, ``k in {...}`` on known values."""
    if isinstance(op, ast.Is | ast.IsNot):
        if left is None or right is None:
            if isinstance(left, Sym) or isinstance(right, Sym):
                return Sym(ast.unparse(node)[:80])
            same = left is None and right is None
        elif isinstance(left, bool) and isinstance(right, bool):
            same = left == right
        else:
            return Sym(ast.unparse(node)[:80])  # the identity of other objects is not known here
        return same if isinstance(op, ast.Is) else not same
    if isinstance(right, str) and known(left) and not isinstance(left, Shaped):
        inside = isinstance(left, str) and left in right
        return inside if isinstance(op, ast.In) else not inside
    keys = items_of(right)
    if keys is None or not known(left) or not all(known(k) for k in keys) or isinstance(left, Shaped):
        return Sym(ast.unparse(node)[:80])
    inside = left in keys
    return inside if isinstance(op, ast.In) else not inside
