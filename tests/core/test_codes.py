"""The diagnostic-code registry (``tilescope.core.codes``) is the whole truth about codes.

Every code the runtime source emits is registered, every registered code is emitted somewhere and
expected by some test, no site writes a diagnostic's words (each calls ``codes.diagnostic`` with the
fields its template names), and the documents written from the registry (``SCHEMA.md``'s list, SARIF
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
from typing import get_args

import pytest
from tilescope.core.cli.sarif import to_sarif
from tilescope.core.codes import (
    CODES,
    RESERVED,
    CodeName,
    diagnostic,
    explain,
    placeholders,
    readable,
    sarif_rule,
    schema_list,
)
from tilescope.core.model import Diagnostic, FileAnalysis, Span

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ("tilelang_core", "lsp", "visualizer", "puzzles", "mcp_server")
CODE_POSITION = {"diagnostic": 0, "Diagnostic": 3, "WorkerError": 0}
"""Calls that carry a diagnostic code, and the position of the code among their arguments."""


REGISTRY = ROOT / "tilelang_core" / "codes.py"


def runtime_files() -> Iterator[Path]:
    """Every module that may emit a diagnostic: the registry, which only describes them, is not one."""
    for package in RUNTIME:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "content" not in path.relative_to(ROOT).parts and path != REGISTRY:
                yield path


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def emitted_in(tree: ast.Module) -> set[str]:
    """The codes a module writes into a diagnostic: as the code of ``diagnostic``, a ``Diagnostic`` or
    a ``WorkerError``, as ``code=`` of any call, as the ``"code"`` of a diagnostic dict, or passed for a parameter
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
        "f = diagnostic('six', Span(1), name='x')\n"
    )
    assert emitted_in(ast.parse(source)) == {"one", "two", "three", "four", "five", "six"}


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
    assert rule["shortDescription"]["text"] == CODES["copy-shape"].summary
    assert rule["fullDescription"]["text"] == "T.copy shapes differ: SRC is SRC_SHAPE but DST is DST_SHAPE"
    assert CODES["copy-shape"].fix in rule["help"]["markdown"] and "T.copy(A_s, B_s)" in rule["help"]["markdown"]


def test_no_sarif_rule_shows_a_placeholder():
    for code in CODES:
        rule = sarif_rule(code)
        short, full = rule["shortDescription"], rule["fullDescription"]
        assert isinstance(short, dict) and isinstance(full, dict)
        assert "{" not in short["text"] and "{" not in full["text"], code


def test_explain_prints_a_code_and_lists_them_all():
    assert "Copy between regions of one shape." in explain("copy-shape")
    assert "T.copy(A_s, B_s)" in explain("copy-shape"), "explain shows the code's example"
    run = [sys.executable, "-m", "tilescope", "explain"]
    one = subprocess.run([*run, "gemm-uninitialised"], capture_output=True, text=True, timeout=120, check=False)
    assert one.returncode == 0 and one.stdout == explain("gemm-uninitialised"), one.stderr
    every = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=120, check=False)
    assert [c["code"] for c in json.loads(every.stdout)] == list(CODES)
    unknown = subprocess.run([*run, "no-such-code"], capture_output=True, text=True, timeout=120, check=False)
    assert unknown.returncode == 2 and "no-such-code" in unknown.stderr


def _sites() -> Iterator[tuple[str, ast.Call]]:
    for path in runtime_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _name(node.func) == "diagnostic" and node.args:
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def test_no_site_writes_the_words_of_a_diagnostic():
    """A message is the registry's template filled in: a ``Diagnostic(...)`` written out, or a
    diagnostic as a dict with its own message, would say what the registry does not."""
    written = []
    for path in runtime_files():
        if path.name == "model.py":
            continue  # where ``Diagnostic`` is defined
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Diagnostic":
                written.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Dict) and {"message", "code"} <= {_string(k) for k in node.keys if k}:
                written.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert written == [], "call tilescope.core.codes.diagnostic(code, span, field=...) instead"


def test_every_site_gives_the_fields_its_template_names():
    """Each ``diagnostic(...)`` call with a literal code names exactly its template's placeholders
    (those it spells out, when it gathers some in a ``fields`` mapping built elsewhere)."""
    wrong = []
    for where, call in _sites():
        code = _string(call.args[0])
        if code is None:
            continue  # a code carried by a WorkerError: its fields travel with it
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        named = {k for k in keywords if k not in RESERVED}
        gathered = keywords.get("fields")
        closed = gathered is None or isinstance(gathered, ast.Dict)
        if isinstance(gathered, ast.Dict):
            named |= {_string(k) or "" for k in gathered.keys if k}
        form = keywords.get("form")
        templates = CODES[code].templates()
        if form is None or (isinstance(form, ast.Constant) and form.value is None):
            candidates = [templates[None]]
        elif isinstance(form, ast.Constant) and isinstance(form.value, str):
            assert form.value in templates, f"{where}: {code} has no form {form.value!r}"
            candidates = [templates[form.value]]
        else:
            candidates = list(templates.values())
        expected = [placeholders(t) - ({"kernel"} if "kernel" in keywords else set()) for t in candidates]
        if not any(named == e if closed else named <= e for e in expected):
            wrong.append(f"{where}: {code} given {sorted(named)}, names {[sorted(e) for e in expected]}")
    assert wrong == []


def test_the_code_names_pyright_checks_are_the_registry():
    assert list(get_args(CodeName)) == list(CODES)


def test_every_code_has_a_summary_an_example_and_templates_that_fill():
    for entry in CODES.values():
        assert entry.summary and "{" not in entry.summary and entry.summary.endswith("."), entry.code
        assert entry.example.strip(), entry.code
        for form, template in entry.templates().items():
            assert not placeholders(template) & (RESERVED - {"kernel"}), (entry.code, form)
            values = dict.fromkeys(placeholders(template), 1)
            filled = diagnostic(entry.code, Span(1), form=form, kernel="k", fields=values)  # type: ignore[arg-type]  # CODES' keys are CodeNames
            assert "{" not in filled.message and filled.severity == entry.severity, (entry.code, form)
        assert "{" not in readable(entry.message) and "}" not in readable(entry.message)


def test_a_site_that_gives_other_fields_than_its_template_names_fails_loudly():
    with pytest.raises(TypeError, match="copy-shape"):
        diagnostic("copy-shape", Span(1), src="A", src_shape="(4,)", dst="B")
    with pytest.raises(KeyError, match="no form"):
        diagnostic("copy-shape", Span(1), form="nope")


def test_the_bank_conflict_help_says_what_its_message_does():
    """The message offers padding where one removes the conflict and a swizzle where none does; the
    help must offer both, the way the message decides."""
    fix = CODES["bank-conflict"].fix
    assert "pad" in fix and "swizzle" in fix
    assert "allocate it as" in CODES["bank-conflict"].message
    assert "make_swizzled_layout" in CODES["bank-conflict"].forms["swizzle"] and "make_swizzled_layout" in fix
