"""What users of Pylance expect: ``T.`` completion ranked by use, docstrings rendered as Markdown,
hover on a kernel parameter, plain messages from commands an untrusted workspace cannot run, and the
names and signatures of the TileLang release the project's interpreter has."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.lsp.conftest import EXAMPLES, ROOT, SERVER, execute, open_file, replace_all, start, until, within

GEMM = EXAMPLES / "gemm.py"
OLD = ROOT / ".venv-releases" / "0.1.12" / "bin" / "python"


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def position_of(text: str, needle: str, offset: int = 0) -> types.Position:
    for number, line in enumerate(text.splitlines()):
        if needle in line:
            return types.Position(line=number, character=line.index(needle) + offset)
    raise AssertionError(needle)


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    found = await within(client.text_document_hover_async(types.HoverParams(text_document=doc(uri), position=position)))
    assert found is not None
    return found.contents.value


async def test_completion_lists_the_common_tile_operations_first(client: LanguageClient) -> None:
    edited = GEMM.read_text().replace("T.gemm(A_shared", "T.\n            T.gemm(A_shared")
    uri = open_file(client, GEMM, edited)
    number, line = next((n, line) for n, line in enumerate(edited.splitlines()) if line.strip() == "T.")
    where = types.Position(line=number, character=len(line))
    found = await within(
        client.text_document_completion_async(types.CompletionParams(text_document=doc(uri), position=where))
    )
    ordered = [item.label for item in sorted(found.items, key=lambda item: item.sort_text or item.label)]
    assert ordered[:6] == ["copy", "alloc_fragment", "alloc_shared", "Parallel", "Kernel", "gemm"]
    assert ordered.index("Pipelined") < 10
    assert ordered.index("Add") > len(ordered) - 200 and ordered.index("And") > ordered.index("exp2")
    assert all(item.sort_text for item in found.items)


async def test_hover_renders_the_docstring_as_markdown(client: LanguageClient) -> None:
    text = GEMM.read_text()
    uri = open_file(client, GEMM)
    value = await hover_text(client, uri, position_of(text, "T.gemm(", 3))
    assert "**Args**" in value and "- `transpose_A` (bool):" in value
    assert ":func:" not in value and "``mbarrier_wait_parity" not in value and "`mbarrier_wait_parity(...)`" in value
    assert value.rstrip().endswith("*TileLang 0.1.15*")


async def test_hover_on_a_size_parameter_gives_its_value_and_origin(client: LanguageClient) -> None:
    text = GEMM.read_text()
    uri = open_file(client, GEMM)
    value = await hover_text(client, uri, position_of(text, "T.alloc_shared((block_M", 17))
    assert value.startswith("```python\nblock_M = 128\n```")
    assert "- parameter of `matmul`: from its default, line 8" in value
    assert "- sizes `A_shared`, `C_local`" in value


async def test_commands_in_an_untrusted_workspace_answer_in_plain_words(client: LanguageClient) -> None:
    uri = open_file(client, GEMM)
    for command, arguments in [
        ("tilescope.show.passes", [uri, "matmul"]),
        ("tilescope.show.layout", [uri, "matmul", "C_local"]),
        ("tilescope.show.cuda", [uri, "matmul"]),
        ("tilescope.kernelModel", [uri]),
        ("tilescope.tracePasses", [uri, None]),
    ]:
        with pytest.raises(JsonRpcException) as raised:
            await within(execute(client, command, *arguments))
        assert raised.value.code == -32803, command
        assert "the workspace is not trusted" in raised.value.message, command
        assert "Traceback" not in str(raised.value.data or ""), command


@pytest_lsp.fixture(config=SERVER)
async def old_project(lsp_client: LanguageClient):
    if not OLD.exists():
        pytest.skip(f"{OLD} is absent: run .ci/releases")
    await start(lsp_client, workspaceTrust=False, python=str(OLD))
    yield
    await lsp_client.shutdown_session()


KPACK = GEMM.read_text().replace("T.gemm(A_shared, B_shared, C_local)", "T.gemm(A_shared, B_shared, C_local, k_pack=1)")


async def test_names_and_signatures_come_from_the_projects_release(old_project: LanguageClient) -> None:
    client = old_project
    uri = open_file(client, GEMM, KPACK)
    await until(lambda: uri in client.diagnostics, what="diagnostics")
    assert not [d for d in client.diagnostics[uri] if "k_pack" in d.message]
    value = await hover_text(client, uri, position_of(KPACK, "T.gemm(", 3))
    assert value.rstrip().endswith("*TileLang 0.1.12*")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"python": ""}})
    )
    replace_all(client, uri, KPACK + "\n", 2)
    await until(lambda: any("k_pack" in d.message for d in client.diagnostics.get(uri, [])), what="the k_pack note")
    (note,) = [d for d in client.diagnostics[uri] if "k_pack" in d.message]
    assert note.message == "T.gemm has no argument 'k_pack' (TileLang 0.1.15)"


def test_the_fixture_interpreter_has_its_own_tilelang() -> None:
    if not OLD.exists():
        pytest.skip(f"{OLD} is absent: run .ci/releases")
    assert any(Path(OLD).parents[1].glob("lib/python3*/site-packages/tilelang/__init__.py"))
