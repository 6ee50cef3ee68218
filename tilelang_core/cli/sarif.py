"""Diagnostics as SARIF 2.1.0, the format CI systems (GitHub code scanning, GitLab, Azure) show on pull requests.

One run, tool ``tilescope`` with TileLang as an extension (its release, the one that analysed), one
rule per diagnostic code, described by the code registry (``codes.py``) with its fix as help;
locations relative to the folder the check ran from (``%SRCROOT%``) when the file is inside it. SARIF
columns are 1-based; ours are 0-based. Valid against the OASIS schema (``tests/sarif``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tilescope.core.codes import sarif_rule
from tilescope.core.model import Diagnostic, FileAnalysis, Span

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
_HELP = "Run `tilescope check FILE` for the full report; `tilescope explain CODE` says more."


def _uri(path: str, root: Path) -> tuple[str, bool]:
    try:
        return Path(path).resolve().relative_to(root).as_posix(), True
    except ValueError:
        return Path(path).resolve().as_uri(), False


def region(span: Span) -> dict[str, int]:
    """A SARIF region for ``span``: 1-based, and never ending before it starts (a bad end is left out)."""
    start_line = max(span.line, 1)
    found = {"startLine": start_line, "startColumn": max(span.column, 0) + 1}
    if span.end_line is not None and span.end_line < start_line:
        return found  # an end before the start says nothing reliable about the end
    end_line = span.end_line if span.end_line is not None else start_line
    if span.end_line is not None:
        found["endLine"] = end_line
    if span.end_column is not None and (end_line > start_line or span.end_column > span.column):
        found["endColumn"] = span.end_column + 1
    return found


def _result(diagnostic: Diagnostic, path: str, root: Path, rule_index: int) -> dict[str, Any]:
    uri, relative = _uri(path, root)
    location: dict[str, Any] = {"uri": uri}
    if relative:
        location["uriBaseId"] = "%SRCROOT%"
    result: dict[str, Any] = {
        "ruleId": diagnostic.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": diagnostic.message or diagnostic.code},
        "locations": [{"physicalLocation": {"artifactLocation": location, "region": region(diagnostic.span)}}],
    }
    if diagnostic.kernel:
        result["properties"] = {"kernel": diagnostic.kernel}
    return result


def _rule(code: str, example: Diagnostic) -> dict[str, Any]:
    """The registry's rule for ``code``; a code the registry lacks is described by its first message."""
    rule: dict[str, Any] = dict(sarif_rule(code))
    if "shortDescription" not in rule:
        described = example.message.split("\n")[0] or code
        rule["shortDescription"] = {"text": described}
        rule["fullDescription"] = {"text": described}
        rule["help"] = {"text": _HELP, "markdown": _HELP}
        rule["defaultConfiguration"] = {"level": _LEVELS[example.severity]}
    return rule


def _own_version() -> str:
    try:
        return version("tilescope")
    except PackageNotFoundError:
        return "0"


def to_sarif(results: list[FileAnalysis], root: Path, tilelang: str | None = None) -> dict[str, Any]:
    """The SARIF log of every diagnostic of ``results``; ``tilelang`` the release that analysed them."""
    root = root.resolve()
    found = [(d, r.path) for r in results for d in r.all_diagnostics()]
    examples: dict[str, Diagnostic] = {}
    for diagnostic, _ in found:
        examples.setdefault(diagnostic.code, diagnostic)
    codes = sorted(examples)
    index = {code: i for i, code in enumerate(codes)}
    driver: dict[str, Any] = {
        "name": "tilescope",
        "version": _own_version(),
        "informationUri": "https://example.invalid/tilescope",
        "rules": [_rule(code, examples[code]) for code in codes],
    }
    tool: dict[str, Any] = {"driver": driver}
    if tilelang:
        tool["extensions"] = [{"name": "tilelang", "version": tilelang}]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": tool,
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
                "results": [_result(d, path, root, index[d.code]) for d, path in found],
                "properties": {"tilelangVersion": tilelang},
            }
        ],
    }
