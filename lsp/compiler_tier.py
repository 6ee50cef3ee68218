"""Scheduling the compiler tier: after the document rests, or on save, off the event loop.

Only in a trusted workspace, since analysing a file imports and runs it (in the core's worker
process). One analysis runs at a time; a request made while one runs is remembered and served
next with the then-current text. A result is published only if the document is still at the
version that was analysed; an older result is kept solely for per-kernel facts whose text is
unchanged (see ``tilescope.core.static.merge``).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from tilescope.core import Analyzer, FileAnalysis, IRText
from tilescope.core.model import Diagnostic, Span
from tilescope.core.static.merge import CompiledSnapshot

if TYPE_CHECKING:
    from tilescope.lsp.server import TilescopeServer

log = logging.getLogger(__name__)
_CATCH_UP_ROUNDS = 3
"""Analyses a command waits through while the document keeps changing under it."""


STATUS_NOTIFICATION = "tilescope/status"


class CompilerTier:
    def __init__(self, server: TilescopeServer) -> None:
        self._server = server
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tilescope-compiler")
        self._analyzer: Analyzer | None = None
        self._analyzer_python: str | None = None
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._running: set[str] = set()
        self._pending: set[str] = set()
        self._waiters: dict[str, list[asyncio.Future[CompiledSnapshot | None]]] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, uri: str) -> None:
        task = asyncio.ensure_future(self.run(uri))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def enabled(self) -> bool:
        return self._server.settings.trusted

    def analyzer(self) -> Analyzer:
        """The core's analyzer for the configured interpreter (recreated when that changes)."""
        settings = self._server.settings
        if self._analyzer is None or self._analyzer_python != settings.python:
            if self._analyzer is not None:
                self._executor.submit(self._analyzer.close)
            self._analyzer = Analyzer(timeout_s=settings.timeout, python=settings.python)
            self._analyzer_python = settings.python
        return self._analyzer

    def warm(self) -> None:
        """Start the worker in the background so the first analysis does not pay for it."""
        if self.enabled:
            analyzer = self.analyzer()
            self._executor.submit(_warm, analyzer)

    def schedule(self, uri: str, delay: float | None = None) -> None:
        """Analyse ``uri`` once it has rested ``delay`` seconds (the idle setting by default)."""
        if not self.enabled:
            return
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        wait = self._server.settings.idle_s if delay is None else delay
        self._timers[uri] = loop.call_later(wait, lambda: self._spawn(uri))

    def cancel(self, uri: str) -> None:
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._pending.discard(uri)

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
        if snapshot is not None:
            failed = not snapshot.analysis.ok
            self._status(uri, "error" if failed else "ready", "compiler errors" if failed else None)
        for waiter in self._waiters.pop(uri, []):
            if not waiter.done():
                waiter.set_result(snapshot)
        if snapshot is not None:
            self._server.compiled_ready(uri, snapshot)
        if uri in self._pending:
            self._pending.discard(uri)
            self._spawn(uri)

    def _status(self, uri: str, state: str, message: str | None = None) -> None:
        """Tell the client what the compiler tier is doing (``tilescope/status``), for a status bar."""
        params = {"state": state, "uri": uri, **({"message": message} if message else {})}
        self._server.protocol.notify(STATUS_NOTIFICATION, params)

    async def _analyse(self, uri: str) -> CompiledSnapshot | None:
        server = self._server
        try:
            state = server.documents.state(uri, server.settings.target)
        except KeyError:
            return None
        settings = server.settings
        analyzer = self.analyzer()
        path = server.documents.path(uri)
        loop = asyncio.get_running_loop()
        analysis = await loop.run_in_executor(
            self._executor, _analyze, analyzer, path, state.source, settings.target, settings.timeout, settings.ptxas
        )
        return CompiledSnapshot(analysis, state.fingerprints, state.version)

    async def current(self, uri: str) -> CompiledSnapshot | None:
        """A snapshot of the document's current version, analysing it now if needed."""
        documents, settings = self._server.documents, self._server.settings
        for _ in range(_CATCH_UP_ROUNDS):
            snapshot = documents.current_compiled(uri, settings.target)
            if snapshot is not None or not self.enabled:
                return snapshot
            if uri in self._running:
                waiter: asyncio.Future[CompiledSnapshot | None] = asyncio.get_running_loop().create_future()
                self._waiters.setdefault(uri, []).append(waiter)
                self._pending.add(uri)
                await waiter
            else:
                await self.run(uri)
        return documents.current_compiled(uri, settings.target)

    async def pass_ir(self, uri: str, kernel: str, index: int) -> IRText:
        server = self._server
        state = server.documents.state(uri, server.settings.target)
        analyzer = self.analyzer()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor,
            lambda: analyzer.pass_ir(
                server.documents.path(uri),
                state.source,
                kernel=kernel,
                index=index,
                target=server.settings.target,
            ),
        )

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        if self._analyzer is not None:
            self._analyzer.close()
        self._executor.shutdown(wait=False, cancel_futures=True)


def _warm(analyzer: Analyzer) -> None:
    try:
        analyzer.warm()
    except Exception:
        log.exception("the compiler worker did not start")


def _analyze(analyzer: Analyzer, path: str, source: str, target: str, timeout: float, ptxas: bool) -> FileAnalysis:
    """The analysis, or a file-level diagnostic when the worker itself cannot run."""
    try:
        return analyzer.analyze(path, source, target=target, timeout_s=timeout, ptxas=ptxas)
    except Exception as err:
        log.exception("the compiler tier failed")
        problem = f"{type(err).__name__}: {err}"
        message = f"The compiler tier could not run ({problem}); check the tilescope.python setting"
        diagnostic = Diagnostic("error", message, Span(1), "worker-start")
        return FileAnalysis(path=path, target=target, kernels=[], discovered=[], diagnostics=[diagnostic])
