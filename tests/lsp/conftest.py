"""A real LSP client talking to ``tilescope lsp`` over stdio, started as an editor starts it."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
TILESCOPE = str(Path(sys.executable).with_name("tilescope"))
"""The console script the package installs beside the interpreter, which editors run."""
SERVER = ClientServerConfig(server_command=[TILESCOPE, "lsp", "--stdio"], server_env=None)


async def start(client: LanguageClient, editor: str = "visual-studio-code", **options: Any) -> None:
    """Initialise a session as ``editor`` would (its recorded capabilities, position encodings
    included); the client answers the refresh requests an editor would."""
    for method in (types.WORKSPACE_CODE_LENS_REFRESH, types.WORKSPACE_INLAY_HINT_REFRESH):
        if method not in client.protocol.fm.features:
            client.feature(method)(_refreshed)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            root_uri=ROOT.as_uri(),
            initialization_options=options,
        )
    )


def _refreshed(params: None) -> None:
    """Editors re-request hints or lenses here; the tests request them explicitly."""


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient):
    """An untrusted session: the static tier only."""
    await start(lsp_client, workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


def set_workspace_trust(client: LanguageClient, trusted: bool) -> None:
    """The editor's own trust changed, as the VS Code extension reports it (granting needs no restart)."""
    client.protocol.notify("tilescope/didChangeWorkspaceTrust", {"trusted": trusted})


def open_file(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.resolve().as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=path.read_text() if text is None else text
            )
        )
    )
    return uri


def replace_all(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Wait for a notification-driven condition, failing clearly after ``timeout`` seconds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.02)


async def within(awaitable: Awaitable[Any], timeout: float = 10.0) -> Any:
    return await asyncio.wait_for(awaitable, timeout)


def whole_file(lines: int = 10_000) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=lines, character=0))


def record_publishes(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Every ``publishDiagnostics`` the client receives from now on, in order (the client itself
    keeps only the latest per document)."""
    seen: list[types.PublishDiagnosticsParams] = []
    protocol = client.protocol
    original = protocol._handle_notification

    def handle(method_name: str, params: Any) -> None:
        if method_name == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            seen.append(params)
        original(method_name, params)

    protocol._handle_notification = handle  # type: ignore[method-assign]
    return seen


def execute(client: LanguageClient, command: str, *arguments: Any) -> Awaitable[Any]:
    return client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=list(arguments))
    )
