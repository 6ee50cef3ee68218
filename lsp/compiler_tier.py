"""Scheduling the compiler tier: after the document rests, or on save, off the event loop.

Only in a trusted workspace, since analysing a file imports and runs it (in the core's worker
process). One analysis runs at a time; a request made while one runs is remembered and served
next with the then-current text. A result is published only if the document is still at the
version that was analysed; an older result is kept solely for per-kernel facts whose text is
unchanged (see ``tilescope.core.ide.merge``). While a file is analysed, what the compiler has so far
(a kernel's lowering before its hazard check runs, the kernels done) is published the same way and then
replaced by the whole result; a command that asks for the analysis waits for the whole. A dry run a file
needs for its sizes goes on in the background (the kernels say so meanwhile) and the file is analysed
again when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.service import Analyzer, EarlyWorker
from tilescope.core.ide import CompiledSnapshot, with_unchanged
from tilescope.core.model import FileAnalysis, IRText, RunReport, Span
from tilescope.lsp.documents import Documents, DocumentState
from tilescope.lsp.settings import Settings

log = logging.getLogger(__name__)
_CATCH_UP_ROUNDS = 3
"""Analyses a command waits through while the document keeps changing under it."""


STATUS_NOTIFICATION = "tilescope/status"


class CompilerTier:
    """Given only what it needs: the current settings, the documents, a way to send a status
    notification, and where to hand a finished analysis."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        documents: Documents,
        status: Callable[[str, dict[str, Any]], None],
        on_result: Callable[[str, CompiledSnapshot], None],
        early: EarlyWorker | None = None,
    ) -> None:
        self._settings = settings
        self._early = early
        """The worker the server started before it imported the rest of itself, until an analyzer takes it."""
        self._documents = documents
        self._notify = status
        self._on_result = on_result
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tilescope-compiler")
        self._analyzer: Analyzer | None = None
        self._analyzer_python: str | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._running: set[str] = set()
        self._pending: set[str] = set()
        self._waiters: dict[str, list[asyncio.Future[CompiledSnapshot | None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._uris: dict[str, str] = {}
        """Resolved path → URI of the documents analysed, for a dry run that ends in the background."""
        self._loop: asyncio.AbstractEventLoop | None = None

    def _spawn(self, uri: str) -> None:
        task = asyncio.ensure_future(self.run(uri))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def enabled(self) -> bool:
        return self._settings().trusted

    def analyzer(self) -> Analyzer:
        """The core's analyzer for the configured interpreter (recreated when that changes)."""
        settings = self._settings()
        if self._analyzer is None or self._analyzer_python != settings.python:
            if self._analyzer is not None:
                self._executor.submit(self._analyzer.close)
            early, self._early = self._early, None
            self._analyzer = Analyzer(
                timeout_s=settings.timeout, python=settings.python, on_dry_run=self._dry_run_ended, early=early
            )
            self._analyzer_python = settings.python
        self._analyzer.dry_run = settings.trusted and settings.dry_run
        return self._analyzer

    def warm(self) -> None:
        """Start the worker's process so the first analysis does not pay for all of its start; not waiting
        for it here, so that analysis waits only for what is left, within its own deadline."""
        if self.enabled:
            analyzer = self.analyzer()
            self._executor.submit(_start, analyzer)
        elif self._early is not None:  # not trusted: the worker started ahead is not needed
            early, self._early = self._early, None
            self._executor.submit(early.discard)

    def _dry_run_ended(self, path: str) -> None:
        """From the dry run's thread: its sizes are cached now, so analyse the file again."""
        uri, loop = self._uris.get(path), self._loop
        if uri is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._again, uri)

    def _again(self, uri: str) -> None:
        if self._documents.is_open(uri):
            self.schedule(uri, delay=0)

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Analyse ``uri`` once it has rested ``delay`` seconds (the idle setting by default)."""
        if not self.enabled:
            return
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        wait = self._settings().idle_s if delay is None else delay
        self._timers[uri] = loop.call_later(wait, lambda: self._spawn(uri))

    def cancel(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._pending.discard(uri)

    def stop(self) -> None:
        """Trust was revoked: drop every timer and request, and end the worker now, even mid-build
        (the analysing thread then sees the worker gone, and its result is dropped)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        self._pending.clear()
        analyzer, self._analyzer, self._analyzer_python = self._analyzer, None, None
        if analyzer is not None:
            threading.Thread(target=analyzer.stop, name="tilescope-stop-worker", daemon=True).start()
        early, self._early = self._early, None
        if early is not None:  # not adopted yet: nothing may adopt it now
            self._executor.submit(early.discard)

    async def run(self, uri: str) -> None:
        """Analyse the current text of ``uri`` and publish the result if it is still current."""
        self._timers.pop(uri, None)
        if not self.enabled:
            return
        if uri in self._running:
            self._pending.add(uri)
            return
        self._running.add(uri)
        self._status(uri, "analysing")
        try:
            snapshot = await self._analyse(uri)
        finally:
            self._running.discard(uri)
        if not self.enabled or not self._documents.is_open(uri):
            snapshot = None
        if snapshot is not None:
            failed = not snapshot.analysis.ok
            self._status(uri, "error" if failed else "ready", "compiler errors" if failed else None)
        for waiter in self._waiters.pop(uri, []):
            if not waiter.done():
                waiter.set_result(snapshot)
        if snapshot is not None:
            self._on_result(uri, snapshot)
        if uri in self._pending:
            self._pending.discard(uri)
            self._spawn(uri)

    def _status(self, uri: str, state: str, message: str | None = None) -> None:
        """Tell the client what the compiler tier is doing (``tilescope/status``), for a status bar."""
        params = {"state": state, "uri": uri, **({"message": message} if message else {})}
        self._notify(STATUS_NOTIFICATION, params)

    async def _analyse(self, uri: str) -> CompiledSnapshot | None:
        settings = self._settings()
        try:
            await self._documents.ready(uri, settings.target)
            state = self._documents.state(uri, settings.target)
            path = self._documents.path(uri)
        except KeyError:
            return None
        if not self.enabled:  # trust was revoked while the document was made ready: ``stop`` found no analyzer
            return None
        analyzer = self.analyzer()
        loop = self._loop = asyncio.get_running_loop()
        self._uris[str(Path(path).resolve())] = uri

        def heard(partial: FileAnalysis) -> None:
            """On the compiler's thread: the analysis so far, published from the event loop."""
            snapshot = CompiledSnapshot(partial, state.fingerprints, state.version, partial=True)
            loop.call_soon_threadsafe(self._partial, uri, snapshot)

        analysis = await loop.run_in_executor(
            self._executor,
            _analyze,
            analyzer,
            path,
            state,
            settings.target,
            settings.timeout,
            settings.ptxas,
            heard,
        )
        return CompiledSnapshot(analysis, state.fingerprints, state.version)

    def _partial(self, uri: str, snapshot: CompiledSnapshot) -> None:
        """Publish the analysis so far (the lowering's findings before the hazard check's), as a result is, with
        the last result's models of the unchanged kernels it has not reached yet."""
        if self.enabled and self._documents.is_open(uri) and uri in self._running:
            self._on_result(uri, with_unchanged(snapshot, self._documents.compiled.get(uri)))

    async def current(self, uri: str) -> CompiledSnapshot | None:
        """A snapshot of the document's current version, analysing it now if needed."""
        documents, settings = self._documents, self._settings()
        for _ in range(_CATCH_UP_ROUNDS):
            snapshot = documents.current_compiled(uri, settings.target)
            if (snapshot is not None and not snapshot.partial) or not self.enabled:
                return snapshot
            if uri in self._running:
                waiter: asyncio.Future[CompiledSnapshot | None] = asyncio.get_running_loop().create_future()
                self._waiters.setdefault(uri, []).append(waiter)
                self._pending.add(uri)
                await waiter
            else:
                await self.run(uri)
        snapshot = documents.current_compiled(uri, settings.target)
        return None if snapshot is None or snapshot.partial else snapshot

    async def pass_irs(self, uri: str, kernel: str, indices: list[int]) -> list[IRText]:
        """The IR after each pass of ``indices``, printed from one lowering of the document as it reads now."""
        settings = self._settings()
        state = self._documents.state(uri, settings.target)
        path = self._documents.path(uri)
        analyzer = self.analyzer()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor,
            lambda: analyzer.pass_irs(path, state.source, kernel=kernel, indices=indices, target=settings.target),
        )

    async def run_kernel(self, uri: str, kernel: str) -> RunReport:
        """``tilescope run`` of one kernel of the document as it reads now, in the worker."""
        settings = self._settings()
        state = self._documents.state(uri, settings.target)
        path = self._documents.path(uri)
        analyzer = self.analyzer()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: analyzer.run(path, state.source, kernel=kernel))

    def close(self) -> None:
        """Shutdown: end the worker's whole process tree without waiting for a build in progress."""
        for timer in self._timers.values():
            timer.cancel()
        if self._analyzer is not None:
            self._analyzer.stop()
            self._analyzer = None
        self._executor.shutdown(wait=False, cancel_futures=True)


def _start(analyzer: Analyzer) -> None:
    try:
        analyzer.start()
    except Exception:
        log.exception("the compiler worker did not start")


def _analyze(
    analyzer: Analyzer,
    path: str,
    state: DocumentState,
    target: str,
    timeout: float,
    ptxas: bool,
    on_partial: Callable[[FileAnalysis], None],
) -> FileAnalysis:
    """The analysis, or a file-level diagnostic when the worker itself cannot run. The document's static
    analysis of this very text goes with it: the compiler host does not read the file a second time."""
    try:
        return analyzer.analyze(
            path,
            state.source,
            target=target,
            timeout_s=timeout,
            ptxas=ptxas,
            static=state.static,
            on_partial=on_partial,
        )
    except Exception as err:
        log.exception("the compiler tier failed")
        failure = diagnostic("worker-start", Span(1), form="editor", error=f"{type(err).__name__}: {err}")
        return FileAnalysis(path=path, target=target, kernels=[], discovered=[], diagnostics=[failure])
