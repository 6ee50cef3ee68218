"""What each pass of the CUDA lowering pipeline does, in plain words, and what to look for in its diff.

The words live in ``pass_catalog.json`` next to this module so that the language server, the
terminal viewer and the editor extension show the same text. TVM reports a few Python-defined
passes under the anonymous name ``pass_fn``; :func:`resolve` names them from their position in
the pipeline (TileLang's pre-lowering checks come first, ``HoistBroadcastValues`` comes last).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Literal

ANONYMOUS = "pass_fn"
_LEADING_CHECKS = ("tl.NestedLoopChecker", "tl.ParallelLocalIndexChecker", "tl.FragmentLoopChecker")
_LEADING_EXTRA = "tl.ASTPrinter"
_TRAILING = "tl.HoistBroadcastValues"


@dataclass(frozen=True)
class PassInfo:
    name: str
    kind: Literal["transform", "check"]
    what: str
    """What the pass does, for someone who writes kernels rather than compilers."""
    look_for: str
    """What its diff typically shows (or why it shows nothing)."""
    function: str | None = None
    """The Python function behind an anonymous ``pass_fn``."""


@cache
def catalog() -> dict[str, PassInfo]:
    """Every catalogued pass by name, in pipeline order."""
    data = json.loads(files("tilescope.core").joinpath("pass_catalog.json").read_text(encoding="utf-8"))
    return {entry["name"]: PassInfo(**entry) for entry in data["passes"]}


def describe(name: str) -> PassInfo | None:
    """The catalogue entry for a pass name as TVM reports it (``tl.LayoutInference``)."""
    return catalog().get(name)


def resolve(names: Sequence[str]) -> list[PassInfo | None]:
    """Catalogue entries for a whole recorded pipeline, naming each ``pass_fn`` by its position."""
    leading = 0
    while leading < len(names) and names[leading] == ANONYMOUS:
        leading += 1
    extra = max(0, leading - len(_LEADING_CHECKS))
    anonymous = [_LEADING_EXTRA] * extra + list(_LEADING_CHECKS[-(leading - extra) :] if leading else [])
    resolved: list[PassInfo | None] = []
    for position, name in enumerate(names):
        if name != ANONYMOUS:
            resolved.append(describe(name))
        elif position < leading:
            resolved.append(describe(anonymous[position]))
        else:
            resolved.append(describe(_TRAILING))
    return resolved
