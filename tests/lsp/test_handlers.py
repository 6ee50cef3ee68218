"""Feature handlers as plain functions: line breaks as LSP counts them, both position encodings,
any Unicode text, and documents that are not open."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from tilescope.lsp import hover, inlay_hints, navigation, symbols, sync
from tilescope.lsp.features import FEATURES, guarded
from tilescope.lsp.text import split_lines

from tests.lsp.conftest import EXAMPLES, FIXTURES, whole_file
from tests.lsp.direct import at, doc, edit, initialized, open_text

GEMM = (EXAMPLES / "gemm.py").read_text()


def test_lines_break_only_where_lsp_breaks_them() -> None:
    text = "a\fb\vc\x1cd\x85e\u2028f\u2029g\r\nh\ri\nj"
    assert split_lines(text) == ["a\fb\vc\x1cd\x85e\u2028f\u2029g\r\n", "h\r", "i\n", "j"]
    assert split_lines("x\n") == ["x\n"] and split_lines("") == []


def _hints(server, uri: str) -> list[tuple[int, int, str]]:
    params = types.InlayHintParams(text_document=doc(uri), range=whole_file())
    return [(h.position.line, h.position.character, h.label) for h in inlay_hints.inlay_hint(server, params)]


@pytest.mark.parametrize("separator", ["\f", "\v", "\x1c", "\x85", "\u2028"])
def test_characters_python_splits_on_do_not_shift_positions(separator: str) -> None:
    server = initialized()
    plain = _hints(server, open_text(server, GEMM, "file:///tmp/plain.py"))
    marked = GEMM.replace("import tilelang.language as T", f"import tilelang.language as T  # {separator}")
    assert _hints(server, open_text(server, marked, "file:///tmp/marked.py")) == plain


def test_incremental_edits_below_a_form_feed_land_on_their_line() -> None:
    server = initialized()
    uri = open_text(server, "x = 1  # \f page\ny = 2\n")
    edit(server, uri, (1, 0), (1, 1), "z")
    assert server.workspace.get_text_document(uri).source == "x = 1  # \f page\nz = 2\n"
    uri = open_text(server, "a\rb\r\nc\n", "file:///tmp/cr.py")
    edit(server, uri, (2, 0), (2, 1), "C")
    assert server.workspace.get_text_document(uri).source == "a\rb\r\nC\n"


@pytest.mark.parametrize(("encodings", "negotiated"), [(["utf-8", "utf-16"], "utf-8"), (None, "utf-16")])
def test_positions_follow_the_negotiated_encoding(encodings: list[str] | None, negotiated: str) -> None:
    server = initialized(encodings)
    assert server.initialize_result.capabilities.position_encoding == negotiated
    # "é" is 2 bytes in UTF-8 and 1 unit in UTF-16; "𝄞" is 4 bytes and 2 units.
    text = GEMM.replace(
        "A_shared = T.alloc_shared", "A_shared = T.alloc_shared  # é𝄞\n            A_shared = T.alloc_shared"
    )
    text = text.replace("        with T.Kernel(", "        é𝄞 = 0\n        with T.Kernel(", 1)
    uri = open_text(server, text)
    line = next(i for i, t in enumerate(split_lines(text)) if "C_local = T.alloc_fragment" in t)
    found = hover.hover(server, types.HoverParams(text_document=doc(uri), position=at(line, 13)))
    assert found is not None and found.contents.value.startswith("```text\nC_local: 128×128 float32")
    lines = split_lines(text)
    for line, character, _ in _hints(server, uri):
        content = lines[line].rstrip("\r\n")
        units = len(content.encode("utf-8")) if negotiated == "utf-8" else len(content.encode("utf-16-le")) // 2
        assert 0 <= character <= units
    weird = next(i for i, t in enumerate(lines) if t.strip().startswith("é𝄞 = 0"))
    # A position past "é𝄞 = " in the client's units maps to the right column and back.
    units = {"utf-8": 6 + 8, "utf-16": 3 + 8}[negotiated] + 1
    assert server.text(uri).core_position(at(weird, units)) == (weird + 1, 8 + 6 + 1)


def test_lone_surrogates_are_answered() -> None:
    server = initialized(["utf-8"])
    uri = open_text(server, GEMM.replace('dtype="float16"', 'dtype="float16\ud800"') + "# \udfff\n")
    assert _hints(server, uri)
    for line in range(0, 30):
        hover.hover(server, types.HoverParams(text_document=doc(uri), position=at(line, 5)))
    assert symbols.document_symbol(server, types.DocumentSymbolParams(text_document=doc(uri)))
    state = server.documents.state(uri, server.settings.target)
    assert state.fingerprints and [d.message for d in state.static.diagnostics if d.code == "syntax-error"] == [
        "Syntax error: lone surrogate U+D800 (not valid in UTF-8 source)"
    ]


def test_requests_for_documents_that_are_not_open_get_empty_answers() -> None:
    server = initialized()
    uri = "file:///nowhere/never-opened.py"
    handlers = {feature.handler: guarded(feature) for feature in FEATURES}
    assert _answer(handlers[hover.hover], server, types.HoverParams(text_document=doc(uri), position=at(0, 0))) is None
    params = types.InlayHintParams(text_document=doc(uri), range=whole_file())
    assert _answer(handlers[inlay_hints.inlay_hint], server, params) == []
    refs = types.ReferenceParams(
        text_document=doc(uri), position=at(0, 0), context=types.ReferenceContext(include_declaration=True)
    )
    assert _answer(handlers[navigation.find_references], server, refs) == []


def _answer(handler: Any, server: Any, params: Any) -> Any:
    """A registered handler's answer: requests about a document are coroutines (they wait for its analysis)."""
    found = handler(server, params)
    return asyncio.run(found) if asyncio.iscoroutine(found) else found


def test_closing_a_document_clears_its_inlay_hint_answer() -> None:
    server = initialized()
    uri = open_text(server, GEMM)
    assert _hints(server, uri)
    assert uri in server.hint_answers
    server.workspace.remove_text_document(uri)
    sync.did_close(server, types.DidCloseTextDocumentParams(text_document=doc(uri)))
    assert uri not in server.hint_answers


def test_the_launch_hint_follows_the_whole_with_line_and_literal_stages_get_none() -> None:
    server = initialized()
    uri = open_text(server, GEMM)
    lines = split_lines(GEMM)
    found = _hints(server, uri)
    launch = next((line, column) for line, column, label in found if label.startswith("grid "))
    assert lines[launch[0]].rstrip().endswith("as (bx, by):") and launch[1] == len(lines[launch[0]].rstrip("\n"))
    assert not [label for _, _, label in found if "stage" in label], "num_stages=3 is written right there"
    written = GEMM.replace("num_stages=3", "num_stages=block_K // 16")
    assert "2 stages" in [label for _, _, label in _hints(server, open_text(server, written, "file:///tmp/s.py"))]


def test_one_diagnostic_per_fact_when_the_compiler_confirms_a_static_estimate() -> None:
    from tilescope.core.ide import merged_diagnostics
    from tilescope.core.model import Diagnostic, FileAnalysis, Span
    from tilescope.core.static import analyze_source

    static = analyze_source((FIXTURES / "budgets.py").read_text(), "budgets.py")
    (estimate,) = [d for d in static.diagnostics if d.code == "shared-memory"]
    confirmed = Diagnostic("error", "needs 262144 bytes", Span(12), "shared-memory-overflow", kernel=estimate.kernel)
    compiled = FileAnalysis("budgets.py", "sm_90", [], [], [confirmed])
    merged = [d.code for d in merged_diagnostics(static, compiled) if d.kernel == estimate.kernel]
    assert "shared-memory-overflow" in merged and "shared-memory" not in merged
