"""The server's settings as the VS Code extension's unit tests read them.

``python -m tests.lsp.settings_fixture`` rewrites ``vscode-extension/test/fixtures/settings.json``;
``test_settings_source.py`` fails while it, or the extension's ``package.json``, differs from
:data:`tilescope.lsp.settings.OPTIONS`.
"""

from __future__ import annotations

import json
from pathlib import Path

from tilescope.lsp.settings import OPTIONS

EXTENSION = Path(__file__).resolve().parents[2] / "vscode-extension"
FIXTURE = EXTENSION / "test" / "fixtures" / "settings.json"


def contributed() -> dict[str, dict[str, object]]:
    """``contributes.configuration.properties`` entries for every server option."""
    entries: dict[str, dict[str, object]] = {}
    for option in OPTIONS:
        entry: dict[str, object] = {"type": option.type, "default": option.default}
        if option.minimum is not None:
            entry["minimum"] = option.minimum
        entry["description"] = option.description
        entries[f"tilescope.{option.key}"] = entry
    return entries


def fixture_json() -> str:
    options = [{"key": o.key, "type": o.type, "default": o.default} for o in OPTIONS]
    return json.dumps({"options": options}, indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(fixture_json(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
