"""What every MCP tool reads: the workspace, and the compiler tier's workers, each started on first use and
kept for the server's life. A file of the workspace and source text an agent sends get different
workers: the user named the workspace, so its programs may be dry-run; sent text is sealed and never is.
"""

from __future__ import annotations

import threading
from contextlib import ExitStack
from dataclasses import dataclass, field

from tilescope.core.compiler.service import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, Analyzer
from tilescope.core.compiler.variants import Pool
from tilescope.mcp.schemas import FileInput
from tilescope.mcp.workspace import Workspace


@dataclass
class Session:
    """What every tool reads: the workspace, and the compiler tier's workers (started on first use)."""

    workspace: Workspace
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    python: str | None = None
    dry_run: bool = True
    """The workspace is the user's own (they named it at start): sizes may come from its programs' dry runs."""
    _stack: ExitStack = field(default_factory=ExitStack)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _analyzer: Analyzer | None = None
    _source_analyzer: Analyzer | None = None
    _pool: Pool | None = None

    @property
    def analyzer(self) -> Analyzer:
        """For the workspace's files: the user named the workspace, so its programs may be dry-run."""
        with self._lock:
            if self._analyzer is None:
                self._analyzer = self._stack.enter_context(
                    Analyzer(
                        timeout_s=self.timeout_s, memory_mb=self.memory_mb, python=self.python, dry_run=self.dry_run
                    )
                )
            return self._analyzer

    @property
    def source_analyzer(self) -> Analyzer:
        """For the source text an agent sends: sealed as a learner's file is (it writes only its worker's own
        folder, reads no secret, has no network), and never dry-run (its ``__main__`` would run unsealed)."""
        with self._lock:
            if self._source_analyzer is None:
                self._source_analyzer = self._stack.enter_context(
                    Analyzer(timeout_s=self.timeout_s, memory_mb=self.memory_mb, python=self.python, sealed=True)
                )
            return self._source_analyzer

    def analyzer_for(self, given: FileInput) -> Analyzer:
        return self.analyzer if given.source is None else self.source_analyzer

    @property
    def pool(self) -> Pool:
        """The variants' workers, sealed: a tool call may name source text as well as a workspace file."""
        with self._lock:
            if self._pool is None:
                self._pool = Pool(1, self.timeout_s, self.memory_mb, sealed=True)
                self._stack.callback(self._pool.close)
            return self._pool

    def close(self) -> None:
        self._stack.close()
        self.workspace.close()
