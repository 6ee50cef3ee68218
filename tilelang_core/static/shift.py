"""Moving records derived from a block to the block's new lines, without touching the cached ones.

A parsed block is immutable and keeps what was derived from it in its own lines; when a line is
inserted above it, ``shifted`` makes the copies that sit ``delta`` lines further down. Only the
records that can hold a line are visited: each dataclass gets a plan once (its ``line``/``end_line``
fields, and the fields whose declared type can reach such a field), so a ``KernelRef``'s params or a
buffer's shape are shared as they are, never walked. Copies are made by filling the new object's
``__dict__`` (frozen dataclasses refuse ``setattr``), the cheapest copy Python has. A message or
title that names a line (``... on line 12``) names the moved one.
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import fields, is_dataclass
from typing import Generic, TypeVar, overload

_LINE_FIELDS = ("line", "end_line")
_TEXT_FIELDS = ("message", "title")
"""Words that may name a file line (``expected an indented block after 'for' statement on line 12``,
``Insert T.clear(C) before line 40``): the lines they name move with the record."""
_LINE_WORD = re.compile(r"\bline (\d+)\b")
_PLAIN = (str, int, float, bool, type(None), bytes)

Shifter = Callable[[object, int], object]
R = TypeVar("R")


def shifted(value: R, delta: int) -> R:
    """A copy of a record (or a list, tuple or dict of them) ``delta`` lines further down.

    Every ``line``/``end_line`` field of the frozen records is moved; whatever holds no line is
    returned as is (the same object), so unchanged parts are shared, never copied.
    """
    return _shift(value, delta) if delta else value  # type: ignore[return-value]  # _shift keeps the type it is given


def _shift(value: object, delta: int) -> object:
    kind = type(value)
    shifter = _shifters.get(kind, _UNKNOWN)
    if shifter is _UNKNOWN:
        shifter = _shifter_for(kind)
    return value if shifter is None else shifter(value, delta)  # type: ignore[operator]  # the table maps each type to its own shifter


def _shift_list(value: list[object], delta: int) -> object:
    return [_shift(v, delta) for v in value]


def _shift_tuple(value: tuple[object, ...], delta: int) -> object:
    items = tuple(_shift(v, delta) for v in value)
    return value if all(a is b for a, b in zip(items, value, strict=True)) else items


def _shift_dict(value: dict[object, object], delta: int) -> object:
    return {k: _shift(v, delta) for k, v in value.items()}


class Placed(Sequence[R], Generic[R]):
    """Records kept in their blocks' own lines, read in file lines: each part moves by its delta.

    Moving a ``Placed`` (a line inserted above) only adds to the deltas, so the many small records
    only a navigation request reads (a kernel's name occurrences, a file's ``T.*`` uses) are never
    copied on an edit; they are moved once, when first read, and the moved list is kept.
    """

    __slots__ = ("_items", "_parts")

    def __init__(self, parts: Iterable[tuple[Sequence[R], int]] = ()) -> None:
        flat: list[tuple[Sequence[R], int]] = []
        for items, delta in parts:
            if isinstance(items, Placed):
                flat.extend((inner, inner_delta + delta) for inner, inner_delta in items._parts)
            elif items:
                flat.append((items, delta))
        self._parts = tuple(flat)
        self._items: Sequence[R] | None = None

    @classmethod
    def of(cls, items: Sequence[R]) -> Placed[R]:
        """Records already in file lines."""
        return cls(((items, 0),))

    def moved(self, delta: int) -> Placed[R]:
        return Placed((items, d + delta) for items, d in self._parts)

    def _all(self) -> Sequence[R]:
        items = self._items
        if items is None:
            if len(self._parts) == 1 and self._parts[0][1] == 0:
                items = self._parts[0][0]
            else:
                moved: list[R] = [shifted(r, d) for part, d in self._parts for r in part]
                items = moved
            self._items = items
        return items

    def __len__(self) -> int:
        return sum(len(items) for items, _ in self._parts)

    @overload
    def __getitem__(self, index: int) -> R: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[R]: ...
    def __getitem__(self, index: int | slice) -> R | Sequence[R]:
        return self._all()[index]

    def __iter__(self) -> Iterator[R]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # placed sequences are unhashable, as lists are

    def __repr__(self) -> str:
        return f"Placed({list(self)!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Placed.of, (list(self),))


_UNKNOWN = object()
_shifters: dict[type, Shifter | None] = {
    list: _shift_list,
    tuple: _shift_tuple,
    dict: _shift_dict,
    Placed: lambda value, delta: value.moved(delta),  # type: ignore[attr-defined]  # the key says value is a Placed
}
_plans: dict[type, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None] = {}


def _shifter_for(kind: type) -> Shifter | None:
    """The copy function of a record type, or ``None`` when nothing it holds has a line."""
    plan = _plan(kind)
    if plan is None:
        _shifters[kind] = None
        return None
    lines, nested, texts = plan
    new = object.__new__

    def shift(value: object, delta: int) -> object:
        state = value.__dict__
        copy = new(kind)
        moved = copy.__dict__
        moved.update(state)
        for name in lines:
            line = state[name]
            if line is not None:
                moved[name] = line + delta
        for name in nested:
            moved[name] = _shift(state[name], delta)
        for name in texts:
            text = state[name]
            if isinstance(text, str) and "line " in text:
                moved[name] = _LINE_WORD.sub(lambda m: f"line {int(m.group(1)) + delta}", text)
        return copy

    _shifters[kind] = shift
    return shift


def _plan(kind: type) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """A dataclass's line fields, the fields that can reach one and the texts that may name one;
    ``None`` when there are none."""
    if kind in _plans:
        return _plans[kind]
    if not is_dataclass(kind):
        _plans[kind] = None
        return None
    _plans[kind] = ((), (), ())  # a record that refers to its own type: assume it holds nothing until planned
    try:
        hints = typing.get_type_hints(kind)
    except (NameError, TypeError):
        hints = {}
    names = [f.name for f in fields(kind)]
    lines = tuple(n for n in names if n in _LINE_FIELDS)
    texts = tuple(n for n in names if n in _TEXT_FIELDS and hints.get(n) is str)
    nested = tuple(n for n in names if n not in lines and n not in texts and _may_hold_lines(hints.get(n, object)))
    plan = (lines, nested, texts) if lines or nested or texts else None
    _plans[kind] = plan
    return plan


def _may_hold_lines(kind: object) -> bool:
    """Whether a value of this declared type can contain a record with a line field."""
    if kind in _PLAIN:
        return False
    origin = typing.get_origin(kind)
    if origin is typing.Literal:
        return False
    if origin in (typing.Union, types.UnionType, list, tuple, dict, set, frozenset):
        return any(_may_hold_lines(arg) for arg in typing.get_args(kind) if arg is not Ellipsis)
    if isinstance(kind, type) and is_dataclass(kind):
        return _plan(kind) is not None
    return True
