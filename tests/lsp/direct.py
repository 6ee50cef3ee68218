"""Handlers called directly, as plain functions of a server state object, without a transport."""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from tilescope.lsp.features import create_server
from tilescope.lsp.server import TilescopeServer


def initialized(encodings: list[str] | None = None, **options: Any) -> TilescopeServer:
    """A server after pygls's own ``initialize`` (workspace built, position encoding negotiated)."""
    server = create_server()
    general = types.GeneralClientCapabilities(position_encodings=encodings) if encodings is not None else None
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(general=general), initialization_options=options
    )
    steps = server.protocol.lsp_initialize(params)
    value: Any = None
    while True:
        try:
            handler, args, kwargs = steps.send(value)
        except StopIteration as done:
            server.initialize_result = done.value  # type: ignore[attr-defined]
            return server
        value = handler(*args, **(kwargs or {}))


def open_text(server: TilescopeServer, text: str, uri: str = "file:///tmp/kernel.py") -> str:
    server.workspace.put_text_document(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    return uri


def edit(server: TilescopeServer, uri: str, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
    document = server.workspace.get_text_document(uri)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]), end=types.Position(line=end[0], character=end[1])
        ),
        text=text,
    )
    identifier = types.VersionedTextDocumentIdentifier(uri=uri, version=(document.version or 0) + 1)
    server.workspace.update_text_document(identifier, change)


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)
