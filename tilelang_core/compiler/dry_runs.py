"""The dry runs discovery asks the compiler tier for: the file's own program run with stand-in kernels to
learn the sizes the static sources leave open (``record.dry_run``), with the analyzer's interpreter and
memory limit. Runs on the host.

In the foreground a run ends by the first kernel's deadline; for the editor (``on_done``) a run not
cached yet goes on in the background, its kernels say so meanwhile, and ``on_done(path)`` is called
when it has finished, to analyse the file again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from tilescope.core.record.dry_run import WALL_S, Planned, RunSettings, cached, dry_run, execute, pending, plan, store
from tilescope.core.record.dry_run_result import DryRun
from tilescope.core.sandbox.supervise import Supervised


class DryRuns:
    """The dry runs of one analyzer; ``stop`` ends those under way and keeps none that ends after it."""

    def __init__(self, python: str, memory_mb: int, on_done: Callable[[str], None] | None = None) -> None:
        self.python = python
        self.memory_mb = memory_mb
        self._on_done = on_done
        self._running: set[str] = set()
        """Cache files of the runs going on in the background."""
        self._children: set[Supervised] = set()
        self._lock = threading.Lock()
        self._stopped = False

    def source(self, path: str, target: str, deadline: float | None) -> Callable[[], DryRun | None]:
        """What discovery calls for the file's dry run: a run now, ending by ``deadline``, or one in the
        background when there is someone to tell."""
        if self._on_done is None:

            def run_now() -> DryRun | None:
                wall = WALL_S if deadline is None else min(WALL_S, max(deadline - time.monotonic(), 1.0))
                return dry_run(path, python=self.python, memory_mb=self.memory_mb, target=target, wall_s=wall)

            return run_now
        return lambda: self._background(path, target)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
        for child in list(self._children):
            child.kill()

    def _background(self, path: str, target: str) -> DryRun | None:
        planned = plan(path, self.python)
        if planned is None:
            return None
        found = cached(planned)
        if found is not None:
            return found
        with self._lock:
            if self._stopped:
                return None
            started = str(planned.cached) not in self._running
            self._running.add(str(planned.cached))
        if started:
            threading.Thread(target=self._run_then_tell, args=(planned, target), daemon=True).start()
        return pending(planned)

    def _run_then_tell(self, planned: Planned, target: str) -> None:
        try:
            result = execute(planned, RunSettings(self.python, self.memory_mb, target), self._children)
        finally:
            with self._lock:
                self._running.discard(str(planned.cached))
                stopped = self._stopped
        if stopped or self._on_done is None:
            return  # ended by stop(): not a result to keep
        store(planned, result)
        self._on_done(str(planned.file))
