"""The MCP resources: reference tables an agent reads once, not per kernel.

``tilescope://catalog`` is the ``tilelang.language`` catalog (names, signatures, first docstring
paragraphs) of the TileLang release the compiler tier analyses with, read from its sources.
"""

from __future__ import annotations

import json

import mcp_types as types
from tilescope.core.static import catalog

CATALOG = "tilescope://catalog"


def listing() -> list[types.Resource]:
    return [
        types.Resource(
            name="catalog",
            title="TileLang catalog",
            uri=CATALOG,
            description="Every public name of tilelang.language in the analysing release: kind, signature, summary.",
            mime_type="application/json",
        ),
    ]


def read(uri: str, python: str | None = None) -> str:
    if uri == CATALOG:
        table = catalog.default()
        names = {
            name: {"kind": p.kind, "signature": p.signature, "summary": p.summary} for name, p in table.table.items()
        }
        return json.dumps({"tilelang_version": table.version, "names": names})
    raise ValueError(f"no resource {uri!r}; the resources are {', '.join(r.uri for r in listing())}")
