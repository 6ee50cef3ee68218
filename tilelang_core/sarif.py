"""Diagnostics as SARIF 2.1.0, the format CI systems (GitHub code scanning, GitLab, Azure) show on pull requests.

One run, tool ``tilescope`` with TileLang as an extension (its release, the one that analysed), one
rule per diagnostic code with a description and help; locations relative to the folder the check ran
from (``%SRCROOT%``) when the file is inside it. SARIF columns are 1-based; ours are 0-based. Valid
against the OASIS schema (``tests/sarif``).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from tilescope.core.model import Diagnostic, FileAnalysis, Span

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVELS = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
_HELP = "Run `tilescope check FILE` for the full report; `tilescope trace FILE` shows every compiler pass."
RULES = {
    "syntax-error": "The file is not valid Python, so no kernel in it can be built.",
    "load-error": "Importing the file (its top level) failed before any kernel was built.",
    "build-error": "Calling the kernel factory or tracing its body raised an error.",
    "compile-error": "The TileLang compiler rejected the kernel while lowering it.",
    "layout-inference": "TileLang could not infer a layout for a buffer.",
    "missing-args": "Some kernel parameters have no value: give them with --arg K=V or a directive.",
    "missing-module": "The file imports a module this interpreter does not have.",
    "needs-gpu": "Building the kernel asked for a GPU; analysis never uses one.",
    "not-a-kernel": "The definition looked like a kernel but builds none.",
    "no-kernels": "The file defines no TileLang kernel.",
    "no-kernel": "No kernel of the name given with --kernel.",
    "bad-target": "The compilation target is not one TileLang can lower for.",
    "shared-memory-overflow": "The kernel needs more shared memory per block than the target allows.",
    "autotune-config": "An autotune configuration cannot be built.",
    "tilelang-warning": "TileLang printed a warning while lowering the kernel.",
    "ptxas-error": "ptxas rejected the generated code.",
    "ptxas-spill": "ptxas spilled registers to local memory.",
    "ptxas-timeout": "ptxas did not finish in time.",
    "timeout": "Analysing the kernel did not finish within the time limit.",
    "worker-crash": "The compiler worker died while building the kernel.",
    "internal-error": "Tilescope itself failed on this file.",
    "io-error": "The file cannot be read or decoded.",
    "unknown-primitive": "A T.* name that the TileLang release in use does not have.",
}


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
    described = RULES.get(code) or example.message.split("\n")[0]
    return {
        "id": code,
        "name": "".join(part.capitalize() for part in code.split("-")),
        "shortDescription": {"text": described},
        "fullDescription": {"text": described},
        "help": {"text": f"{described} {_HELP}", "markdown": f"{described}\n\n{_HELP}"},
        "defaultConfiguration": {"level": _LEVELS[example.severity]},
    }


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
