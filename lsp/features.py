"""The one registration table: which handler answers which LSP method or command, and the server built from it.

Handlers are plain functions ``(ls: TilescopeServer, params) -> answer`` in their feature modules,
importable and callable directly in tests. Registration wraps each so that a request never ends in
an error response: a document that is not open gets the method's empty answer, running out of
memory or recursion depth on a hostile text is one warning line and an empty answer, and an
unexpected exception is logged to the client (``window/logMessage``, type Error) and answered empty
as well.
Commands are plain functions ``(ls, *arguments)`` in ``commands.py``; their errors reach the editor
as the command's error response.
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from tilescope.core.compiler.service import EarlyWorker
from tilescope.lsp import (
    code_actions,
    code_lens,
    commands,
    completion,
    configuration,
    hover,
    inlay_hints,
    navigation,
    signature_help,
    symbols,
    sync,
)
from tilescope.lsp.documents import DocumentNotOpen
from tilescope.lsp.server import TilescopeServer

log = logging.getLogger(__name__)


def _none() -> None:
    return None


@dataclass(frozen=True)
class Feature:
    method: str
    handler: Callable[..., Any]
    empty: Callable[[], Any] = _none
    """The answer when the document is not open or the handler failed."""
    options: Any = None


FEATURES: tuple[Feature, ...] = (
    Feature(types.INITIALIZE, configuration.initialize),
    Feature(types.SHUTDOWN, configuration.shutdown),
    Feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION, configuration.did_change_configuration),
    Feature(configuration.WORKSPACE_TRUST, configuration.did_change_workspace_trust),
    Feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, configuration.did_change_workspace_folders),
    Feature(types.TEXT_DOCUMENT_DID_OPEN, sync.did_open),
    Feature(types.TEXT_DOCUMENT_DID_CHANGE, sync.did_change),
    Feature(types.TEXT_DOCUMENT_DID_SAVE, sync.did_save),
    Feature(types.TEXT_DOCUMENT_DID_CLOSE, sync.did_close),
    Feature(types.TEXT_DOCUMENT_INLAY_HINT, inlay_hints.inlay_hint, list, inlay_hints.OPTIONS),
    Feature(types.TEXT_DOCUMENT_HOVER, hover.hover),
    Feature(
        types.TEXT_DOCUMENT_COMPLETION,
        completion.completion,
        lambda: types.CompletionList(is_incomplete=False, items=[]),
        types.CompletionOptions(trigger_characters=[".", "(", ","]),
    ),
    Feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        signature_help.signature_help,
        _none,
        types.SignatureHelpOptions(trigger_characters=["(", ","]),
    ),
    Feature(types.TEXT_DOCUMENT_DEFINITION, navigation.goto_definition),
    Feature(types.TEXT_DOCUMENT_REFERENCES, navigation.find_references, list),
    Feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, symbols.document_symbol, list),
    Feature(types.TEXT_DOCUMENT_CODE_LENS, code_lens.code_lens, list),
    Feature(types.TEXT_DOCUMENT_CODE_ACTION, code_actions.code_actions, list, code_actions.OPTIONS),
)
COMMANDS: dict[str, Callable[..., Any]] = {
    commands.TRACE_PASSES: commands.trace_passes,
    commands.PASS_IR: commands.pass_ir,
    commands.PLOT_LAYOUT: commands.plot_layout,
    commands.SHOW_CUDA_SOURCE: commands.cuda_source,
    commands.KERNEL_MODEL: commands.kernel_model,
    commands.SHOW_PASSES: commands.show_passes,
    commands.SHOW_LAYOUT: commands.show_layout,
    commands.SHOW_CUDA: commands.show_cuda,
    commands.SHOW_AUTOTUNE: commands.show_autotune,
    commands.RUN_ON_CPU: commands.run_on_cpu,
    commands.SHOW_SPEED: commands.show_speed,
    commands.SCHEDULE: commands.schedule,
    commands.SHOW_SCHEDULE: commands.show_schedule,
}


_DOCUMENT_REQUESTS = {
    types.TEXT_DOCUMENT_INLAY_HINT,
    types.TEXT_DOCUMENT_HOVER,
    types.TEXT_DOCUMENT_COMPLETION,
    types.TEXT_DOCUMENT_SIGNATURE_HELP,
    types.TEXT_DOCUMENT_DEFINITION,
    types.TEXT_DOCUMENT_REFERENCES,
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL,
    types.TEXT_DOCUMENT_CODE_LENS,
    types.TEXT_DOCUMENT_CODE_ACTION,
}
"""Requests about one document, answered from its static analysis."""


def _failed(ls: TilescopeServer, feature: Feature) -> Any:
    log.exception("%s failed", feature.method)
    message = f"Tilescope: {feature.method} failed: {traceback.format_exc(limit=-4)}"
    ls.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))
    return feature.empty()


EXHAUSTED = (MemoryError, RecursionError)
"""What a text, rather than a defect, can cause: answered empty without a traceback."""


def _gave_up(ls: TilescopeServer, feature: Feature, error: MemoryError | RecursionError) -> Any:
    ls.gave_up(feature.method, error)
    return feature.empty()


def guarded(feature: Feature) -> Callable[..., Any]:
    """``feature.handler`` answering ``feature.empty()`` instead of failing; a request about a
    document first waits, off the event loop, for that document's static analysis, and answers
    empty if the document changed meanwhile (the request is stale)."""
    handler = feature.handler
    if feature.method in _DOCUMENT_REQUESTS and not asyncio.iscoroutinefunction(handler):
        plain = handler

        async def when_ready(ls: TilescopeServer, params: Any) -> Any:
            try:
                if not await ls.documents.ready(params.text_document.uri, ls.settings.target):
                    return feature.empty()
            except DocumentNotOpen:
                return feature.empty()
            except EXHAUSTED as error:
                return _gave_up(ls, feature, error)
            except Exception:
                return _failed(ls, feature)
            return plain(ls, params)

        handler = when_ready
    if asyncio.iscoroutinefunction(handler):

        async def run_async(ls: TilescopeServer, params: Any) -> Any:
            try:
                return await handler(ls, params)
            except DocumentNotOpen:
                return feature.empty()
            except EXHAUSTED as error:
                return _gave_up(ls, feature, error)
            except Exception:
                return _failed(ls, feature)

        return run_async

    def run(ls: TilescopeServer, params: Any) -> Any:
        try:
            return handler(ls, params)
        except DocumentNotOpen:
            return feature.empty()
        except EXHAUSTED as error:
            return _gave_up(ls, feature, error)
        except Exception:
            return _failed(ls, feature)

    return run


def create_server(early: EarlyWorker | None = None) -> TilescopeServer:
    """The server with every feature and command; ``early``: a compiler worker started before this was imported."""
    server = TilescopeServer(on_compiled=sync.compiled_ready, early=early)
    for feature in FEATURES:
        server.feature(feature.method, feature.options)(guarded(feature))
    for name, command in COMMANDS.items():
        server.command(name)(command)
    return server
