"""A recorded argument rebuilt from ``record_values``'s JSON form, in the worker (a TileLang dtype needs
TileLang, so this is apart from the form, which the editor's static tier reads too)."""

from __future__ import annotations

import os
from typing import Any

from tilescope.core.record.record_values import TAG, resolve


def decode(value: Any, namespace: dict[str, Any] | None = None, path: str | None = None) -> Any:
    """The value ``encode`` described. ``namespace`` is the analysed file's, for classes and functions of
    the program's ``__main__`` when that program is the file ``path``."""
    if isinstance(value, list):
        return [decode(v, namespace, path) for v in value]
    if not isinstance(value, dict) or TAG not in value:
        return value
    kind = value[TAG]
    if kind == "tilelang.dtype":
        import tilelang.language as T

        # TileLang types ``dtype`` with a stand-in class that declares no constructor; at run time it is
        # ``tvm.DataType``, built from the dtype's name.
        return T.dtype(value["name"])  # pyright: ignore[reportCallIssue]
    if kind == "torch.dtype":
        import torch

        return getattr(torch, value["name"])
    if kind == "tuple":
        return tuple(decode(v, namespace, path) for v in value["items"])
    if kind == "dict":
        return {k: decode(v, namespace, path) for k, v in value["items"].items()}
    found = _found(value, namespace, path)
    if kind == "enum":
        return found[value["member"]]
    if kind == "dataclass":
        return found(**{k: decode(v, namespace, path) for k, v in value["fields"].items()})
    if kind == "namedtuple":
        return found(*(decode(v, namespace, path) for v in value["items"]))
    if kind == "callable":
        return found
    raise ValueError(f"unknown recorded value kind {kind!r}")


def _found(value: dict[str, Any], namespace: dict[str, Any] | None, path: str | None) -> Any:
    module, qualname = value["module"], value["qualname"]
    if module != "__main__":
        return resolve(module, qualname)
    same = path is not None and os.path.abspath(path) == value.get("file")
    if namespace is None or not same:
        raise LookupError(f"'{qualname}' was defined in the program's __main__ ({value.get('file')}), not in this file")
    obj: Any = namespace[qualname.split(".")[0]]
    for part in qualname.split(".")[1:]:
        obj = getattr(obj, part)
    return obj
