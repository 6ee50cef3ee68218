"""The MCP resources: reference tables an agent reads once, not per kernel.

``tilescope://catalog`` is the ``tilelang.language`` catalog (names, signatures, first docstring
paragraphs) of the TileLang release the compiler tier analyses with, read from its sources, with each
backend dialect it ships (``tilelang.ascend.language``: the names it adds or replaces, those it lacks);
``tilescope://codes`` is every diagnostic code (the registry ``tilescope explain`` reads).
"""

from __future__ import annotations

import json
from dataclasses import asdict

import mcp_types as types
from tilescope.core.codes import CODES
from tilescope.core.static import catalog

CATALOG = "tilescope://catalog"
CODES_URI = "tilescope://codes"


def listing() -> list[types.Resource]:
    return [
        types.Resource(
            name="catalog",
            title="TileLang catalog",
            uri=CATALOG,
            description="Every public name of tilelang.language in the analysing release (kind, signature, summary), "
            "and what each backend dialect (tilelang.ascend.language) adds, replaces and lacks.",
            mime_type="application/json",
        ),
        types.Resource(
            name="codes",
            title="Diagnostic codes",
            uri=CODES_URI,
            description="Every diagnostic code Tilescope emits: severity, tier, message template and fix.",
            mime_type="application/json",
        ),
    ]


def _entry(primitive: catalog.Primitive) -> dict[str, object]:
    found: dict[str, object] = {"kind": primitive.kind, "signature": primitive.signature, "summary": primitive.summary}
    if primitive.members is not None:
        found["members"] = {m.name: _entry(m) for m in primitive.members}
    return found


def read(uri: str, python: str | None = None) -> str:
    if uri == CATALOG:
        table = catalog.default()
        names = {name: _entry(p) for name, p in table.table.items()}
        dialects = {
            dialect: {
                "module": own.module,
                "names": {n: _entry(p) for n, p in own.table.items() if table.table.get(n) != p},
                "absent": sorted(set(table.table) - set(own.table)),
            }
            for dialect, own in table.dialects.items()
        }
        return json.dumps({"tilelang_version": table.version, "names": names, "dialects": dialects})
    if uri == CODES_URI:
        return json.dumps([asdict(code) for code in CODES.values()])
    raise ValueError(f"no resource {uri!r}; the resources are {', '.join(r.uri for r in listing())}")
