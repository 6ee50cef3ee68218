"""The catalog resource gives agents the Ascend dialect beside ``tilelang.language``."""

from __future__ import annotations

import json

from mcp_server.resources import CATALOG, read


def test_the_catalog_resource_names_what_the_ascend_dialect_adds_and_lacks() -> None:
    found = json.loads(read(CATALOG))
    ascend = found["dialects"]["ascend"]
    assert ascend["module"] == "tilelang.ascend.language"
    assert {"alloc_l1", "alloc_l0a", "alloc_l0b", "alloc_l0c", "SimtVF", "SimdVF", "dual_copy"} <= set(ascend["names"])
    assert "vadd" in ascend["names"]["simd"]["members"]
    assert "alloc_tmem" in ascend["absent"] and "alloc_l1" not in found["names"]
