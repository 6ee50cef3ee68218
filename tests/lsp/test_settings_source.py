"""Settings from one source: the server's option table, the extension's manifest and its unit-test fixture."""

from __future__ import annotations

import json

from tilescope.core.ide.hints import HINT_KINDS
from tilescope.lsp.settings import OPTIONS, Settings, merged

from tests.lsp.settings_fixture import EXTENSION, FIXTURE, contributed, fixture_json

EXTENSION_ONLY = {"tilescope.pythonPath", "tilescope.compilerPythonPath", "tilescope.gradingServer"}
"""Settings the extension uses itself: the interpreters it resolves (with the Python extension's choice as
fallback: the server's, and the one it sends the server as ``python``), and the grading server its submit
command sends a puzzle file to."""


def test_package_json_offers_exactly_the_servers_options():
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    assert {k: v for k, v in properties.items() if k not in EXTENSION_ONLY} == contributed()


def test_every_option_is_read_by_the_server_with_its_default():
    assert {o.key for o in OPTIONS if o.key.startswith("hints.")} == {f"hints.{k}" for k in HINT_KINDS}
    raw: dict[str, object] = {"hints": {}}
    for option in OPTIONS:
        section, _, name = option.key.rpartition(".")
        flipped = (not option.default) if option.type == "boolean" else ("sm_80" if option.type == "string" else 7)
        target = raw["hints"] if section == "hints" else raw
        assert isinstance(target, dict)
        target[name] = flipped
    changed = merged(Settings(), raw)
    assert changed.target == "sm_80" and changed.timeout == 7 and changed.idle_s == 7
    assert changed.ptxas is True and changed.hints == frozenset()
    assert changed.dry_run is False


def test_the_extension_fixture_is_current():
    assert FIXTURE.read_text(encoding="utf-8") == fixture_json(), "run: python -m tests.lsp.settings_fixture"
