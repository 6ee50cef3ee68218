"""Diagnostics as SARIF 2.1.0, the format CI systems (GitHub code scanning, GitLab, Azure) show on pull requests.

One run, tool ``tilescope``, one rule per diagnostic code (described by the code registry,
``codes.py``); locations relative to the folder the check ran from (``%SRCROOT%``) when the file is
inside it. SARIF columns are 1-based; ours are 0-based.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tilescope.core.codes import sarif_rule
from tilescope.core.model import Diagnostic, FileAnalysis

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _uri(path: str, root: Path) -> tuple[str, bool]:
    try:
        return Path(path).resolve().relative_to(root).as_posix(), True
    except ValueError:
        return Path(path).resolve().as_uri(), False


def _result(diagnostic: Diagnostic, path: str, root: Path) -> dict[str, Any]:
    uri, relative = _uri(path, root)
    span = diagnostic.span
    region: dict[str, int] = {"startLine": max(span.line, 1), "startColumn": span.column + 1}
    if span.end_line is not None:
        region["endLine"] = span.end_line
    if span.end_column is not None:
        region["endColumn"] = span.end_column + 1
    location: dict[str, Any] = {"uri": uri}
    if relative:
        location["uriBaseId"] = "%SRCROOT%"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": diagnostic.message},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": region}}],
    }
    if diagnostic.kernel:
        result["properties"] = {"kernel": diagnostic.kernel}
    return result


def to_sarif(results: list[FileAnalysis], root: Path) -> dict[str, Any]:
    """The SARIF log of every diagnostic of ``results``."""
    root = root.resolve()
    entries = [_result(d, r.path, root) for r in results for d in r.all_diagnostics()]
    try:
        tool_version = version("tilescope")
    except PackageNotFoundError:
        tool_version = "0"
    rules = sorted({e["ruleId"] for e in entries})
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tilescope",
                        "version": tool_version,
                        "rules": [sarif_rule(rule) for rule in rules],
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "results": entries,
            }
        ],
    }
