"""The diagnostic-code registry (``tilescope.core.codes``) is the whole truth about codes.

Every code the runtime source emits is registered, every registered code is emitted somewhere and
expected by some test, and the documents written from the registry (``SCHEMA.md``'s list, SARIF
rules, ``tilescope explain``) match it.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from tilescope.core.cli.sarif import to_sarif
from tilescope.core.codes import CODES, explain, sarif_rule, schema_list
from tilescope.core.model import Diagnostic, FileAnalysis, Span

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("tilelang_core", "lsp", "visualizer", "puzzles", "mcp_server")
CARRIERS = {"Diagnostic", "WorkerError"}
"""Constructors whose first string argument after the message fields is a diagnostic code."""
CODE_POSITION = {"Diagnostic": 3, "WorkerError": 0}


def runtime_files() -> Iterator[Path]:
    for package in RUNTIME:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "content" not in path.relative_to(ROOT).parts:
                yield path


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def emitted_in(tree: ast.Module) -> set[str]:
    """The codes a module writes into a diagnostic: as a ``Diagnostic``'s or ``WorkerError``'s code,
    as ``code=`` of any call, as the ``"code"`` of a diagnostic dict, or passed for a parameter
    named ``code`` of one of the module's own functions."""
    own = {
        f.name: [a.arg for a in f.args.args].index("code")
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and "code" in [a.arg for a in f.args.args]
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _name(node.func)
            position = CODE_POSITION.get(name, own.get(name))
            if position is not None and len(node.args) > position:
                found.add(_string(node.args[position]) or "")
            found.update(_string(k.value) or "" for k in node.keywords if k.arg == "code")
        elif isinstance(node, ast.Dict):
            found.update(
                _string(v) or "" for k, v in zip(node.keys, node.values, strict=True) if k and _string(k) == "code"
            )
    return found - {""}


def emitted() -> dict[str, list[str]]:
    where: dict[str, list[str]] = {}
    for path in runtime_files():
        for code in emitted_in(ast.parse(path.read_text(encoding="utf-8"))):
            where.setdefault(code, []).append(str(path.relative_to(ROOT)))
    return where


def test_the_finder_sees_each_way_a_code_is_written():
    source = (
        "def _error(message, node, code, kernel): ...\n"
        "a = Diagnostic('error', 'm', Span(1), 'one')\n"
        "b = Diagnostic(severity='error', message='m', span=Span(1), code='two')\n"
        "raise WorkerError('three', 'text')\n"
        "c = _error('m', node, 'four', 'k')\n"
        "d = {'severity': 'error', 'code': 'five'}\n"
        "e = Diagnostic('error', 'm', Span(1), err.code)\n"
    )
    assert emitted_in(ast.parse(source)) == {"one", "two", "three", "four", "five"}


def test_every_emitted_code_is_registered():
    unregistered = {code: places for code, places in emitted().items() if code not in CODES}
    assert unregistered == {}, "add a line to CODES in tilelang_core/codes.py for each"


def test_every_registered_code_is_emitted():
    assert sorted(set(CODES) - set(emitted())) == [], "a registered code nothing emits: remove it from CODES"


def test_every_registered_code_is_expected_by_a_test():
    tests = [p for p in (ROOT / "tests").rglob("*.py") if p.name != Path(__file__).name]
    text = "\n".join(p.read_text(encoding="utf-8") for p in tests)
    unexpected = [c for c in CODES if not re.search(rf"""["'\[]{re.escape(c)}["'\]]""", text)]
    assert unexpected == []


def test_schema_lists_the_registry():
    text = (ROOT / "tilelang_core" / "SCHEMA.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- codes: begin -->\n(.*?)<!-- codes: end -->", text, re.S)
    assert block, "SCHEMA.md has no generated code list"
    assert block.group(1) == schema_list(), "regenerate it: tilescope explain --markdown"


def test_sarif_rules_come_from_the_registry(tmp_path: Path):
    diagnostic = Diagnostic("error", "T.copy shapes differ", Span(3, 4), "copy-shape", kernel="k")
    log = to_sarif([FileAnalysis(str(tmp_path / "k.py"), "sm_90", [], [], [diagnostic])], tmp_path)
    [rule] = log["runs"][0]["tool"]["driver"]["rules"]
    registered = sarif_rule("copy-shape")
    assert {k: rule[k] for k in ("id", "shortDescription", "defaultConfiguration", "properties")} == {
        k: registered[k] for k in ("id", "shortDescription", "defaultConfiguration", "properties")
    }
    assert rule["help"]["text"] == CODES["copy-shape"].fix
    assert rule["defaultConfiguration"] == {"level": "error"}


def test_explain_prints_a_code_and_lists_them_all():
    assert "Copy between regions of one shape." in explain("copy-shape")
    run = [sys.executable, "-m", "tilescope", "explain"]
    one = subprocess.run([*run, "gemm-uninitialised"], capture_output=True, text=True, timeout=120, check=False)
    assert one.returncode == 0 and one.stdout == explain("gemm-uninitialised"), one.stderr
    every = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert [c["code"] for c in json.loads(every.stdout)] == list(CODES)
    unknown = subprocess.run([*run, "no-such-code"], capture_output=True, text=True, timeout=120, check=False)
    assert unknown.returncode == 2 and "no-such-code" in unknown.stderr
