"""Pages and pictures the site takes from the repository at build time, so that none is a copy to keep in step:
the diagnostic codes (``tilescope explain --markdown``), the JSON schema (``tilelang_core/SCHEMA.md``), the
architecture (``ARCHITECTURE.md``), and the screenshots the tests and the extension's end-to-end test take."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
PICTURES = ("examples/screens", "vscode-extension/screenshots")
"""Folders of the repository whose images pages show, served under the same paths."""


def codes_page() -> str:
    """The code list exactly as ``tilescope explain --markdown`` prints it (what SCHEMA.md holds too)."""
    table = subprocess.run(
        [sys.executable, "-m", "tilescope", "explain", "--markdown"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=ROOT,
    ).stdout
    return (
        "# Diagnostic codes\n\n"
        "Every diagnostic Tilescope emits has one of these codes: in `check`'s text (`error[data-race]`), in\n"
        "`--format json` (`code`), in SARIF (one rule each) and in the editor. `tilescope explain CODE` prints one\n"
        "with its message; this table is generated from `tilescope explain --markdown` when the site is built.\n\n"
        + table
    )


def schema_page() -> str:
    text = (ROOT / "tilelang_core" / "SCHEMA.md").read_text()
    return text.replace("](#diagnostic-codes)", "](codes.md)")


def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/codes.md", content=codes_page()))
    files.append(File.generated(config, "reference/schema.md", content=schema_page()))
    files.append(File.generated(config, "development/architecture.md", content=(ROOT / "ARCHITECTURE.md").read_text()))
    for folder in PICTURES:
        for picture in sorted((ROOT / folder).glob("*")):
            if picture.suffix in (".png", ".svg"):
                files.append(File.generated(config, f"{folder}/{picture.name}", abs_src_path=str(picture)))
    return files
