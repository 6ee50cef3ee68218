"""``textDocument/codeAction`` offers the core's quick fixes, and applying one removes its finding."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, FIXTURES, SERVER, open_file, replace_all, start, until, within

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


def apply(text: str, edits: list[types.TextEdit]) -> str:
    """Apply single-line edits (ASCII text, so UTF-16 columns are characters), last first."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = edit.range.start, edit.range.end
        assert start.line == end.line
        line = lines[start.line] if start.line < len(lines) else ""
        lines[start.line] = line[: start.character] + edit.new_text + line[end.character :]
    return "".join(lines)


async def actions(client: LanguageClient, uri: str, line: int) -> list[types.CodeAction]:
    where = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))
    found = await within(
        client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=where,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
    )
    return list(found or [])


async def test_transpose_b_quick_fix_resolves_the_gemm_shape_error(client: LanguageClient) -> None:
    path = FIXTURES / "wrong_gemm.py"
    uri = open_file(client, path)
    await until(lambda: bool(client.diagnostics.get(uri)), what="diagnostics")
    (action,) = await actions(client, uri, 17)
    assert (action.title, action.kind) == ("Pass transpose_B=True", types.CodeActionKind.QuickFix)
    assert [d.code for d in action.diagnostics or []] == ["gemm-shape"]
    assert action.edit is not None and action.edit.changes is not None
    fixed = apply(path.read_text(), action.edit.changes[uri])
    assert "T.gemm(A_shared, B_shared, C_local, transpose_B=True)" in fixed
    replace_all(client, uri, fixed, 2)
    await until(lambda: list(client.diagnostics.get(uri, [None])) == [], what="the error to clear")
    assert await actions(client, uri, 17) == []


async def test_clear_quick_fix_initialises_the_accumulator_before_the_loop(client: LanguageClient) -> None:
    path = EXAMPLES / "gemm.py"
    text = path.read_text().replace("            T.clear(C_local)\n", "")
    uri = open_file(client, path, text=text)
    await until(lambda: bool(client.diagnostics.get(uri)), what="diagnostics")
    (warning,) = client.diagnostics[uri]
    assert warning.code == "gemm-uninitialised" and warning.severity == types.DiagnosticSeverity.Warning
    (action,) = await actions(client, uri, warning.range.start.line)
    assert action.title.startswith("Insert T.clear(C_local) before line")
    fixed = apply(text, action.edit.changes[uri])  # type: ignore[union-attr]
    assert fixed == path.read_text()
