"""What the server knows about each open document: its static analysis per version and the latest
compiler-tier snapshot, joined into the ``Facts`` every feature reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pygls.workspace import Workspace
from tilescope.core.static import StaticFile, analyze_source
from tilescope.core.static.merge import CompiledSnapshot, Facts, facts, fingerprints


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

    def state(self, uri: str, target: str) -> DocumentState:
        document = self._workspace_of().get_text_document(uri)
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

    def path(self, uri: str) -> str:
        """The file system path the compiler should see for ``uri``."""
        return self._workspace_of().get_text_document(uri).path or uri

    def lines(self, uri: str) -> list[str]:
        return list(self._workspace_of().get_text_document(uri).lines)

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
        self.compiled.pop(uri, None)
