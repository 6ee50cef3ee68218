"""The ``tilelang.language`` catalog (names, signatures, docstrings) as shipped data.

Loaded once, lazily, from ``primitives.json`` (see ``build_catalog``), so that hover, completion
and argument checks never import TileLang.
"""

from __future__ import annotations

import difflib
import functools
import json
from dataclasses import dataclass
from pathlib import Path

_PATH = Path(__file__).with_name("primitives.json")


@dataclass(frozen=True)
class PrimitiveParam:
    name: str
    kind: str
    """An ``inspect.Parameter`` kind in lower case (``positional_or_keyword``, ``var_keyword``...)."""
    default: str | None


@dataclass(frozen=True)
class Primitive:
    """One public name of ``tilelang.language``."""

    name: str
    kind: str
    """``function``, ``class``, ``module``, ``dtype`` or ``value``."""
    doc: str
    signature: str | None
    params: tuple[PrimitiveParam, ...] | None
    """``None`` when TileLang's signature could not be read."""

    @property
    def summary(self) -> str:
        return self.doc.split("\n\n", 1)[0].replace("\n", " ") if self.doc else ""


@functools.cache
def _load() -> tuple[str, dict[str, Primitive]]:
    data = json.loads(_PATH.read_text())
    table: dict[str, Primitive] = {}
    for name, entry in data["names"].items():
        params = entry.get("params")
        table[name] = Primitive(
            name=name,
            kind=entry["kind"],
            doc=entry.get("doc", ""),
            signature=entry.get("signature"),
            params=None if params is None else tuple(PrimitiveParam(**p) for p in params),
        )
    return data["tilelang_version"], table


def tilelang_version() -> str:
    """The TileLang version the catalog was taken from."""
    return _load()[0]


def primitives() -> dict[str, Primitive]:
    return _load()[1]


def lookup(name: str) -> Primitive | None:
    return _load()[1].get(name)


def closest(name: str) -> str | None:
    """The catalog name a misspelt ``name`` most likely meant."""
    matches = difflib.get_close_matches(name, _load()[1].keys(), n=1, cutoff=0.75)
    return matches[0] if matches else None
