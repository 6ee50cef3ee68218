"""A kernel argument as JSON that rebuilds it: the form ``tilescope record`` stores and the worker rebuilds.

Plain values (``None``, bools, numbers, strings) and lists stay as they are; every other value is
an object tagged ``{"$value": KIND, ...}``: a tuple, a dict with string keys, a TileLang dtype (a
``str`` subclass whose methods kernels call: ``dtype.bytes``), a torch dtype, an enum member, a
dataclass (its ``__init__`` fields, each encoded), a named tuple, and a function or class by its
qualified name. ``encode`` raises ``Unrecordable`` saying why a value has no such form, so a record
says per argument why it cannot be rebuilt instead of dropping it; ``record_rebuild.decode`` (in the
worker: it imports TileLang) turns the form back into the value.

Copied next to the record hook (``tilescope_record_values``): it must import nothing of Tilescope.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import os
import sys
import types
from typing import Any

TAG = "$value"
_DEPTH = 8


class Unrecordable(Exception):
    """A value with no JSON form that rebuilds it; the message says why."""


def _importable(obj: Any) -> dict[str, str]:
    """Where ``obj`` (a class or function) is found again: its module and qualified name."""
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if not module or not qualname or "<" in qualname:
        raise Unrecordable(f"'{getattr(obj, '__name__', obj)}' is defined inside a function (or is a lambda)")
    if module == "__main__":
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        if not main:
            raise Unrecordable(f"'{qualname}' is defined in an interactive __main__")
        return {"module": module, "qualname": qualname, "file": os.path.abspath(main)}
    try:
        found = resolve(module, qualname)
    except (ImportError, AttributeError) as err:
        raise Unrecordable(f"'{module}.{qualname}' cannot be imported by that name ({err})") from None
    if found is not obj:
        raise Unrecordable(f"'{module}.{qualname}' names another object than the one passed")
    return {"module": module, "qualname": qualname}


def resolve(module: str, qualname: str) -> Any:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def encode(value: Any, depth: int = 0) -> Any:
    """JSON for ``value`` that ``decode`` turns back into an equal value; ``Unrecordable`` says why not."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if depth > _DEPTH:
        raise Unrecordable("nested too deeply")
    kind = type(value)
    if isinstance(value, str) and kind.__module__.startswith(("tvm", "tilelang")):
        return {TAG: "tilelang.dtype", "name": str(value)}
    if kind.__module__ == "torch" and kind.__name__ == "dtype":
        return {TAG: "torch.dtype", "name": str(value).removeprefix("torch.")}
    if isinstance(value, enum.Enum):
        return {TAG: "enum", **_importable(kind), "member": value.name}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value) if f.init}
        return {TAG: "dataclass", **_importable(kind), "fields": fields}
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return {TAG: "namedtuple", **_importable(kind), "items": [encode(v, depth + 1) for v in value]}
    if isinstance(value, int | float | str):  # IntEnum-like subclasses without an importable home
        raise Unrecordable(f"a {kind.__module__}.{kind.__qualname__}, a subclass of {kind.__mro__[-2].__name__}")
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {TAG: "tuple", "items": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        if not all(type(k) is str for k in value):
            raise Unrecordable("a dict whose keys are not all strings")
        return {TAG: "dict", "items": {k: encode(v, depth + 1) for k, v in value.items()}}
    if isinstance(value, types.FunctionType | types.BuiltinFunctionType | type):
        return {TAG: "callable", **_importable(value)}
    raise Unrecordable(f"a {kind.__module__}.{kind.__qualname__}, which has no recorded form")


def is_encoded(value: Any) -> bool:
    """Whether ``value`` is a form ``encode`` makes (what a record or an instantiation may carry)."""
    if value is None or type(value) in (bool, int, float, str):
        return True
    if isinstance(value, list):
        return all(is_encoded(v) for v in value)
    return isinstance(value, dict) and isinstance(value.get(TAG), str)


def source_value(value: Any) -> Any:
    """The value as the static tier reads source values (numbers, strings, tuples of sizes, dtype names),
    or ``None`` for one it has no form for (a dataclass, an enum)."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, list) or (isinstance(value, dict) and value.get(TAG) == "tuple"):
        items = [source_value(v) for v in (value if isinstance(value, list) else value["items"])]
        return tuple(items) if all(i is not None for i in items) else None
    if isinstance(value, dict) and value.get(TAG) in ("tilelang.dtype", "torch.dtype"):
        return value["name"]
    return None


def describe(value: Any) -> str:
    """A short text of an encoded value, as the program would print it (``GemmConfig(block_M=64, ...)``)."""
    if isinstance(value, list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if not isinstance(value, dict) or TAG not in value:
        return repr(value) if isinstance(value, str) else str(value)
    kind = value[TAG]
    if kind in ("tilelang.dtype", "torch.dtype"):
        return ("torch." if kind == "torch.dtype" else "T.") + value["name"]
    if kind == "tuple":
        items = [describe(v) for v in value["items"]]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in value["items"].items()) + "}"
    name = value["qualname"]
    if kind == "enum":
        return f"{name}.{value['member']}"
    if kind == "dataclass":
        return f"{name}(" + ", ".join(f"{k}={describe(v)}" for k, v in value["fields"].items()) + ")"
    if kind == "namedtuple":
        return f"{name}(" + ", ".join(describe(v) for v in value["items"]) + ")"
    return name
