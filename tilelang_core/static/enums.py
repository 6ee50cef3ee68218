"""TileLang's ``IntEnum`` arguments (``T.GemmWarpPolicy.Square``) as numbers, read from its source.

A call that passes ``policy=T.GemmWarpPolicy.Square`` passes the integer ``0`` as far as the
kernel is concerned (an ``IntEnum`` member is that integer). The members are read by parsing the
installed release's ``tilelang/tileop/base.py`` (never importing it), once per process; without a
TileLang install nothing is known.
"""

from __future__ import annotations

import ast
import functools

from tilescope.core.static.catalog import installed_package

_SOURCES = ("tileop/base.py",)
"""Where TileLang 0.1.x defines the enums ``tilelang.language`` re-exports."""


@functools.cache
def int_enums() -> dict[str, dict[str, int]]:
    """``{"GemmWarpPolicy": {"Square": 0, ...}}`` for every ``IntEnum`` of those files."""
    package = installed_package()
    found: dict[str, dict[str, int]] = {}
    for relative in _SOURCES if package is not None else ():
        path = package / relative  # type: ignore[operator]  # the loop runs only when package is not None
        try:
            tree = ast.parse(path.read_text())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("IntEnum") for b in node.bases):
                members = {
                    s.targets[0].id: s.value.value
                    for s in node.body
                    if isinstance(s, ast.Assign)
                    and len(s.targets) == 1
                    and isinstance(s.targets[0], ast.Name)
                    and isinstance(s.value, ast.Constant)
                    and type(s.value.value) is int
                }
                found[node.name] = members
    return found


def enum_member(node: ast.expr, aliases: frozenset[str]) -> int | None:
    """The number of ``T.<Enum>.<Member>`` (``T`` any alias of ``tilelang.language``), else ``None``."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)):
        return None
    owner = node.value
    if not (isinstance(owner.value, ast.Name) and owner.value.id in aliases):
        return None
    return int_enums().get(owner.attr, {}).get(node.attr)
