"""The Ascend memory levels' capacities are those TileLang's own scheduler plans against."""

from __future__ import annotations

import re

import pytest
from tilescope.core.static import catalog
from tilescope.core.static.levels import KB, SIMT_CONTEXT_BYTES, UB_BYTES, level_of


def test_capacities_are_the_ones_auto_schedule_uses() -> None:
    package = catalog.installed_package()
    source = package / "src" / "ascend" / "transform" / "auto_schedule.cc" if package else None
    if source is None or not source.is_file():
        pytest.skip("no TileLang with the Ascend backend's sources installed")
    text = source.read_text()
    limits = {
        name: int(size) * KB
        for name, size in re.findall(
            r"Get(L1|L0A|L0B|L0C)MemoryLimit\(Target target\) \{.*?return (\d+) \* 1024", text, re.S
        )
    }
    assert limits == {level: level_of(f"shared.{level.lower()}").capacity for level in ("L1", "L0A", "L0B", "L0C")}  # type: ignore[union-attr]
    assert f"kPhysicalUnifiedBufferSize = {UB_BYTES // KB} * 1024" in text
    assert f"kSimtVFThreadContextSize = {SIMT_CONTEXT_BYTES // KB} * 1024" in text


def test_scopes_name_their_levels() -> None:
    scopes = ("global", "shared.l1", "shared.l0a", "shared.l0b", "shared.l0c", "shared.dyn")
    assert [getattr(level_of(s), "name", None) for s in scopes] == ["GM", "L1", "L0A", "L0B", "L0C", "UB"]
    assert level_of("local.fragment") is None
