"""What the server knows about each open document: its static analysis per version and the latest
compiler-tier snapshot, joined into the ``Facts`` every feature reads.

Static analyses run off the event loop, on one analysis thread (``schedule``), each document with
an incremental analysis of its own (``static.incremental``: a parsed-block cache sized by the
document, and the last analysis, patched for each edit), so a large file neither evicts another's
blocks nor holds up requests about other files, and a keystroke in it costs the blocks it
changed. An analysis still waiting when a newer version arrives is cancelled; a request waits
(``ready``) only for the analysis of its own document. After the first analysis of a large
document (run with the collector paused) its parsed blocks are moved out of the garbage
collector's sight (``gc.freeze``): they are freed by reference counting when no longer used, and a
full collection no longer walks millions of syntax nodes (stalling the event loop too) every few
keystrokes.

The analysis stays a thread, not a process: a keystroke's analysis holds the GIL for a few
milliseconds, and a hover on another file answers in about as long as with no large file open
(``benchmarks/bench_large_files.py``).
"""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import unquote

from pygls.workspace import TextDocument, Workspace
from tilescope.core.ide import CompiledSnapshot, Facts, facts, fingerprints
from tilescope.core.static import IncrementalAnalysis, StaticFile


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


@dataclass
class _Job:
    version: int | None
    source: str
    target: str
    future: Future[DocumentState]


FREEZE_CHARACTERS = 200_000
"""Text from which a document's first analysis is followed by ``gc.freeze``: some 5,000 lines, half a
million syntax nodes, whose every full collection would stall both threads for a tenth of a second."""


def _first_of_large(analysis: IncrementalAnalysis, source: str, target: str) -> StaticFile:
    """The first analysis of a large document with the collector paused (its full collections over
    the growing heap of syntax nodes took three quarters of the time), then what it built frozen."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return analysis.analyze(source, target=target)
    finally:
        if enabled:
            gc.enable()
        gc.collect()  # what is garbage now is collected, not frozen
        gc.freeze()


class Documents:
    """Static analyses cached per (uri, version, target) and compiled snapshots per uri."""

    def __init__(self, workspace: Callable[[], Workspace]) -> None:
        self._workspace_of = workspace
        self._states: dict[str, DocumentState] = {}
        self.compiled: dict[str, CompiledSnapshot] = {}
        self._lines: dict[str, tuple[str, Sequence[str]]] = {}
        self._jobs: dict[str, _Job] = {}
        self._analyses: dict[str, IncrementalAnalysis] = {}
        self._analyser = ThreadPoolExecutor(1, thread_name_prefix="tilescope-static")
        self._guard = threading.Lock()

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self._workspace_of().text_documents

    def _document(self, uri: str) -> TextDocument:
        """The open document; ``DocumentNotOpen`` for any other (pygls would read it from disk)."""
        document = self._workspace_of().text_documents.get(unquote(uri))
        if document is None:
            raise DocumentNotOpen(uri)
        return document

    def _current(self, uri: str, target: str, document: TextDocument) -> DocumentState | None:
        cached = self._states.get(uri)
        source = document.source
        same = cached is not None and cached.version == document.version and cached.target == target
        return cached if same and cached is not None and (cached.source is source or cached.source == source) else None

    def schedule(self, uri: str, target: str) -> Future[DocumentState]:
        """The analysis of the document's current text, started on the analysis thread unless it is
        done or running; an analysis of an older text that has not started yet is cancelled."""
        document = self._document(uri)
        done = self._current(uri, target, document)
        if done is not None:
            finished: Future[DocumentState] = Future()
            finished.set_result(done)
            return finished
        source = document.source
        job = self._jobs.get(uri)
        if job is not None and job.version == document.version and job.target == target and job.source is source:
            return job.future
        if job is not None:
            job.future.cancel()
        analysis = self._analyses.get(uri)
        if analysis is None:
            analysis = self._analyses[uri] = IncrementalAnalysis(document.path or uri)
        future = self._analyser.submit(self._analyse, uri, document.version, source, target, analysis)
        self._jobs[uri] = _Job(document.version, source, target, future)
        return future

    def _analyse(
        self, uri: str, version: int | None, source: str, target: str, analysis: IncrementalAnalysis
    ) -> DocumentState:
        with self._guard:
            if len(analysis) or len(source) < FREEZE_CHARACTERS:
                static = analysis.analyze(source, target=target)
            else:
                static = _first_of_large(analysis, source, target)
        return DocumentState(uri, version, source, target, static)

    async def ready(self, uri: str, target: str) -> bool:
        """Wait, without holding up the event loop, for the analysis of ``uri``'s current text; whether
        the text is still the same when it is done (else the caller's request is stale)."""
        if not self.is_open(uri):
            return True
        version = self._document(uri).version
        job = self.schedule(uri, target)
        try:
            state = await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            if job.cancelled():
                return False  # superseded by a newer text before it started: the request is stale
            raise
        if not self.is_open(uri):
            return False
        document = self._document(uri)
        if state.version == document.version and state.source is document.source:
            self._states[uri] = state
        return document.version == version

    def state(self, uri: str, target: str) -> DocumentState:
        """The static analysis of the open document ``uri`` (``DocumentNotOpen`` otherwise); waits for
        the analysis thread when it is not done yet (``ready`` first, to wait without blocking)."""
        document = self._document(uri)
        done = self._current(uri, target, document)
        if done is not None:
            return done
        state = self.schedule(uri, target).result()
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
        job = self._jobs.pop(uri, None)
        if job is not None:
            job.future.cancel()
        self._analyses.pop(uri, None)
