"""The language server's state: settings, documents and the compiler tier, in a ``LanguageServer``.

Feature handlers are plain functions of this object and their protocol parameters, in their own
modules; ``features.py`` holds the one table that registers them. This module imports none of
them, so the handlers can import it without a cycle.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from tilescope.core.compiler.service import EarlyWorker
from tilescope.core.ide import CompiledSnapshot, Facts
from tilescope.lsp.compiler_tier import CompilerTier
from tilescope.lsp.documents import Documents
from tilescope.lsp.settings import Settings
from tilescope.lsp.text import SYNC_KIND, Text, TilescopeProtocol

log = logging.getLogger(__name__)

NAME = "tilescope"
VERSION = "0.1.0"
HOW_TO_TRUST = "trust the workspace in VS Code, or run `tilescope trust DIR` for its folder and restart the server"
UNTRUSTED_NOTICE = (
    "Tilescope: this workspace is not trusted, so only the static tier runs (kernel code is never "
    f"executed). For compiler-backed layouts, passes and diagnostics, {HOW_TO_TRUST}."
)
IGNORED_TRUST_SETTING = (
    "Tilescope: the `trusted` setting is ignored: settings can come from the project itself, so they "
    f"cannot let it run code. To run the compiler tier, {HOW_TO_TRUST}."
)

OnCompiled = Callable[["TilescopeServer", str, CompiledSnapshot], None]


class TilescopeServer(LanguageServer):
    def __init__(self, on_compiled: OnCompiled, early: EarlyWorker | None = None) -> None:
        super().__init__(NAME, VERSION, text_document_sync_kind=SYNC_KIND, protocol_cls=TilescopeProtocol)  # pyright: ignore[reportUnknownMemberType]  # pygls leaves some of its parameters untyped
        self.settings = Settings()
        self.documents = Documents(lambda: self.workspace)
        self.compiler = CompilerTier(
            settings=lambda: self.settings,
            documents=self.documents,
            status=self._status,
            on_result=lambda uri, snapshot: on_compiled(self, uri, snapshot),
            early=early,
        )
        self.untrusted_notice_sent = False
        self.trust_setting_noted = False
        self.client_trust: bool | None = None
        """The editor's own verdict on the workspace (VS Code's ``workspace.isTrusted``), when it gave one."""
        self.hint_answers: dict[str, tuple[tuple[object, ...], object, list[types.InlayHint]]] = {}
        """Per open document, the last inlay-hint answer: editors ask again on every scroll."""

    def facts(self, uri: str) -> Facts:
        return self.documents.facts(uri, self.settings.target)

    def text(self, uri: str) -> Text:
        return Text(self.documents.lines(uri), self.workspace.position_codec)

    def notify_untrusted_once(self) -> None:
        if self.settings.trusted or self.untrusted_notice_sent:
            return
        self.untrusted_notice_sent = True
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=UNTRUSTED_NOTICE))

    def note_ignored_trust_setting_once(self) -> None:
        if self.trust_setting_noted:
            return
        self.trust_setting_noted = True
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=IGNORED_TRUST_SETTING))

    def gave_up(self, method: str, error: MemoryError | RecursionError) -> None:
        """A request or analysis needed more memory, or deeper recursion, than Python has: the
        answer is empty or partial, and one line (no traceback: it is the text, not a defect) says so."""
        lack = "memory" if isinstance(error, MemoryError) else "recursion depth"
        message = f"Tilescope: {method} gave up: the document needs more {lack} than is left; answered empty"
        log.warning(message)
        self.window_log_message(types.LogMessageParams(type=types.MessageType.Warning, message=message))

    def _status(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)
