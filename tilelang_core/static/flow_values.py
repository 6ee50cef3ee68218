"""Values the run-along (``flow.py``) holds besides ``symbolic``'s: functions, classes, dicts, kernels.

They never execute anything: a ``Func`` is a definition with the scope it was defined in, a
``Record`` a dict whose keys are known, a ``Built`` what a kernel call returned. Builtins that
the examples use to compute sizes (``range``, ``len``, ``zip``, ``itertools.product``, ...) are
answered here when every argument is known, within a size bound: at most ``MAX_ITEMS`` items,
and what they build is measured (``symbolic.admitted``).
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tilescope.core.static.budget import charge
from tilescope.core.static.symbolic import Shaped, Sym, Value, admitted, is_known_int

MAX_ITEMS = 4096
"""The longest sequence a builtin builds; a longer one is unknown."""


@dataclass(frozen=True, eq=False)
class Func:
    """A ``def`` (or a method) and the scope it reads free names from."""

    node: ast.FunctionDef
    scope: Mapping[str, Value]
    delta: int
    """What to add to the definition's line numbers to get file lines."""
    owner: str = ""
    """The class of a method."""
    bound: tuple[Any, ...] = ()
    """Arguments already given (``ctx`` of an ``autograd.Function``'s ``apply``)."""

    def __str__(self) -> str:
        return f"function {self.node.name}"


@dataclass(frozen=True, eq=False)
class Klass:
    """A ``class`` of the file: its methods, by name."""

    name: str
    methods: dict[str, Func]

    def __str__(self) -> str:
        return f"class {self.name}"

    def method(self, attr: str) -> Func | None:
        """``X.f`` as a function; ``X.apply`` of an ``autograd.Function`` runs ``forward(ctx, ...)``."""
        if attr == "apply" and "forward" in self.methods:
            return dataclasses.replace(self.methods["forward"], bound=(Ctx(self),))
        return self.methods.get(attr)


@dataclass(eq=False)
class Ctx:
    """The ``ctx`` of an ``autograd.Function``: what ``forward`` saves on it, for ``backward``."""

    klass: Klass
    attrs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        return "ctx"


@dataclass(frozen=True, eq=False)
class Tracked(Shaped):
    """A tensor an ``autograd.Function``'s ``forward`` returned: ``.backward()`` runs its ``backward``."""

    ctx: Ctx | None = None


@dataclass(frozen=True, eq=False)
class Output:
    """What a ``forward`` returned when its shape is not known: only its ``.backward()`` is followed."""

    ctx: Ctx

    def __str__(self) -> str:
        return "forward(…)"


@dataclass(frozen=True)
class Record:
    """A dict whose keys are all known: ``{"block_M": 64, ...}``."""

    items: tuple[tuple[Value, Value], ...]

    def get(self, key: Value) -> Value:
        return next((v for k, v in self.items if k == key), Sym(f"[{key!r}]"))

    def has(self, key: Value) -> bool:
        return any(k == key for k, _ in self.items)

    def members(self) -> tuple[tuple[Value, Value], ...]:
        """What ``symbolic.size`` counts."""
        return self.items

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in self.items) + "}"


@dataclass(frozen=True)
class Reached:
    """One kernel call the file makes: a call whose arguments are placeholder names, their values, what
    to add to the call's line to get the file line, and the functions it was reached through."""

    call: ast.Call
    env: dict[str, Value]
    delta: int
    via: tuple[str, ...]


@dataclass(frozen=True)
class Built:
    """What calling a kernel returned (a compiled kernel or its outputs): nothing to follow."""

    kernel: str

    def __str__(self) -> str:
        return f"{self.kernel}(…)"


def truth(value: Value) -> bool | None:
    """Python's truth of a known value; ``None`` when it is not known."""
    if isinstance(value, Sym):
        return None
    if value is None or isinstance(value, bool | int | float | str | tuple):
        return bool(value)
    if isinstance(value, Record):
        return bool(value.items)
    return True  # tensors, functions, classes, built kernels


def items_of(value: Value) -> tuple[Value, ...] | None:
    """The elements a ``for`` walks, when known (and at most ``MAX_ITEMS``: a long text's characters
    would each be an item)."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, str):
        return tuple(value) if len(value) <= MAX_ITEMS else None
    if isinstance(value, Record):
        return tuple(k for k, _ in value.items)
    return None


def known(value: Value) -> bool:
    """Whether a value is free of unknowns (a tuple's elements included)."""
    if isinstance(value, tuple):
        return all(known(v) for v in value)
    return not isinstance(value, Sym)


def builtin(name: str, owner: str, args: list[Value], kwargs: dict[str, Value]) -> Value | None:
    """``range``/``len``/``list``/``zip``/``enumerate``/``sorted``/``itertools.product``... on known
    values; ``None`` when the call is not one of them or an argument is unknown."""
    if not all(known(a) for a in args) or (kwargs and name != "product"):
        return None
    seqs = [items_of(a) for a in args]
    result: Any = None
    if owner in ("", "builtins"):
        if name == "range" and 1 <= len(args) <= 3 and all(is_known_int(a) for a in args):
            span = range(*args)
            result = tuple(span) if len(span) <= MAX_ITEMS else None
        elif name == "len" and len(args) == 1 and isinstance(args[0], tuple | str | Record | Shaped):
            target = args[0]
            result = (
                len(target.shape)
                if isinstance(target, Shaped)
                else len(target.items)
                if isinstance(target, Record)
                else len(target)
            )
        elif name in ("list", "tuple") and len(args) == 1 and seqs[0] is not None:
            result = seqs[0]
        elif name in ("list", "tuple") and not args:
            result = ()
        elif name == "dict" and not args:
            result = Record(())
        elif name == "zip" and args and all(s is not None for s in seqs):
            result = tuple(zip(*seqs, strict=False))
        elif name == "enumerate" and len(args) == 1 and seqs[0] is not None:
            result = tuple(enumerate(seqs[0]))
        elif name == "reversed" and len(args) == 1 and seqs[0] is not None:
            result = tuple(reversed(seqs[0]))
        elif name == "sorted" and len(args) == 1 and seqs[0] is not None:
            try:
                result = tuple(sorted(seqs[0]))
            except TypeError:
                result = None
        elif name in ("sum", "any", "all") and len(args) == 1 and seqs[0] is not None:
            try:
                result = {"sum": sum, "any": any, "all": all}[name](seqs[0])
            except TypeError:
                result = None
    elif owner == "itertools" and name == "product" and all(s is not None for s in seqs):
        repeat = kwargs.get("repeat", 1)
        total = 1
        for seq in seqs:
            total *= len(seq or ())
        if is_known_int(repeat) and 0 < repeat <= 4 and total**repeat <= MAX_ITEMS:
            result = tuple(itertools.product(*seqs, repeat=repeat))  # type: ignore[arg-type]  # the branch requires every seq to be known
    charge(1 + sum(len(s) for s in seqs if s is not None) + (len(result) if isinstance(result, tuple) else 0))
    return admitted(result)
