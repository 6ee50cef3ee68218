"""What the server knows about each open document: its static analysis per version and the latest
compiler-tier snapshot, joined into the ``Facts`` every feature reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from pygls.workspace import TextDocument, Workspace
from tilescope.core.ide import CompiledSnapshot, Facts, facts, fingerprints
from tilescope.core.static import StaticFile, analyze_source


class DocumentNotOpen(KeyError):
    """A request named a document the client has not opened (or has closed)."""


@dataclass
class DocumentState:
    uri: str
    version: int | None
    source: str
    target: str
    static: StaticFile
    _fingerprints: dict[str, str] | None = None

    @property
    def fingerprints(self) -> dict[str, str]:
        if self._fingerprints is None:
            self._fingerprints = fingerprints(self.static, self.source)
        return self._fingerprints


class Documents:
    """Static analyses cached per (uri, version, target) and compiled snapshots per uri."""

    def __init__(self, workspace: Callable[[], Workspace]) -> None:
        self._workspace_of = workspace
        self._states: dict[str, DocumentState] = {}
        self.compiled: dict[str, CompiledSnapshot] = {}
        self._lines: dict[str, tuple[str, Sequence[str]]] = {}

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self._workspace_of().text_documents

    def _document(self, uri: str) -> TextDocument:
        """The open document; ``DocumentNotOpen`` for any other (pygls would read it from disk)."""
        document = self._workspace_of().text_documents.get(unquote(uri))
        if document is None:
            raise DocumentNotOpen(uri)
        return document

    def state(self, uri: str, target: str) -> DocumentState:
        """The static analysis of the open document ``uri`` (``DocumentNotOpen`` otherwise)."""
        document = self._document(uri)
        source = document.source
        cached = self._states.get(uri)
        if (
            cached is not None
            and cached.version == document.version
            and cached.target == target
            and cached.source == source
        ):
            return cached
        path = document.path or uri
        state = DocumentState(uri, document.version, source, target, analyze_source(source, path, target=target))
        self._states[uri] = state
        return state

    def reread(self) -> None:
        """Forget every static analysis (the TileLang release they checked against changed)."""
        self._states.clear()

    def path(self, uri: str) -> str:
        """The file system path the compiler should see for ``uri``."""
        return self._document(uri).path or uri

    def lines(self, uri: str) -> Sequence[str]:
        """The document's LSP lines, split once per text (features ask for them on every request)."""
        document = self._document(uri)
        source = document.source
        cached = self._lines.get(uri)
        if cached is None or cached[0] is not source:
            cached = (source, document.lines)
            self._lines[uri] = cached
        return cached[1]

    def facts(self, uri: str, target: str) -> Facts:
        state = self.state(uri, target)
        compiled = self.compiled.get(uri)
        if compiled is None:
            return Facts(state.static)
        return facts(state.static, state.fingerprints, compiled)

    def current_compiled(self, uri: str, target: str) -> CompiledSnapshot | None:
        """The compiled snapshot only if it was computed from the document's current version."""
        snapshot = self.compiled.get(uri)
        state = self.state(uri, target)
        if snapshot is None or snapshot.version != state.version or snapshot.analysis.target != target:
            return None
        return snapshot

    def forget(self, uri: str) -> None:
        self._states.pop(uri, None)
        self._lines.pop(uri, None)
        self.compiled.pop(uri, None)
