"""One kernel's pass trace: the core's trace view, each pass's IR fetched once, on demand.

The core prints a pass's IR only when asked (printing all of them is what makes a full lowering
trace slow), so the session asks for what is shown and remembers the answer. Each request lowers the
kernel again, so it asks for what it needs in one: a diff's two passes, or every pass for an export and
the viewer's counts. Safe to use from the viewer's worker threads: the analyzer serialises its own requests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tilescope.core.compiler.service import Analyzer
from tilescope.core.ide import Diff, PassView, trace_view, unified
from tilescope.core.model import IRText, KernelModel


class NoTrace(Exception):
    """A kernel with no trace to show; the message says why (its first error)."""


def open_session(
    analyzer: Analyzer, path: str, kernel: str, *, target: str, args: dict[str, Any] | None, timeout_s: float | None
) -> TraceSession:
    """Compile ``kernel`` of ``path`` and its trace session (the viewer's kernel picker); ``NoTrace`` when
    the compiler gives no passes for it."""
    result = analyzer.analyze(path, kernel=kernel, args=args, target=target, timeout_s=timeout_s)
    model = result.kernel(kernel)
    errors = [d for d in result.all_diagnostics() if d.severity == "error"]
    if model is None or (errors and not model.passes):
        raise NoTrace(f"line {errors[0].span.line}: {errors[0].message}" if errors else "the compiler built nothing")
    return TraceSession(analyzer, result.path, model)


class TraceSession:
    def __init__(
        self,
        analyzer: Analyzer,
        path: str,
        kernel: KernelModel,
        *,
        source: str | None = None,
    ) -> None:
        self.analyzer = analyzer
        self.path = path
        self.kernel = kernel
        self.source = Path(path).read_text() if source is None else source
        self.view = trace_view(kernel)
        self.passes: list[PassView] = self.view.passes
        self._ir: dict[int, IRText] = {}
        self._diffs: dict[int, Diff] = {}
        self._lock = threading.Lock()

    @property
    def title(self) -> str:
        return self.view.title

    @property
    def cuda(self) -> str | None:
        return self.kernel.device_source

    def ir(self, index: int) -> IRText:
        """The IR after pass ``index`` (``-1``: as it entered the pipeline)."""
        (text,) = self.irs([index])
        return text

    def irs(self, indices: Iterable[int]) -> list[IRText]:
        """The IR after each pass of ``indices``; those not fetched yet are printed from one lowering (each
        request to the worker lowers the kernel again, so a diff, an export or the viewer's counts ask once)."""
        wanted = list(indices)
        with self._lock:
            missing = sorted({i for i in wanted if i not in self._ir})
        if missing:
            texts = self.analyzer.pass_irs(
                self.path,
                self.source,
                kernel=self.kernel.kernel,
                indices=missing,
                target=self.kernel.target,
                args=self._args(),
            )
            with self._lock:
                self._ir.update(zip(missing, texts, strict=True))
        with self._lock:
            return [self._ir[i] for i in wanted]

    def _args(self) -> dict[str, Any] | None:
        return dict(self.kernel.args) or None

    def diff(self, index: int) -> Diff:
        """What pass ``index`` changed in the IR."""
        with self._lock:
            cached = self._diffs.get(index)
        if cached is not None:
            return cached
        before, after = self.irs([index - 1, index])
        result = unified(before, after)
        with self._lock:
            self._diffs[index] = result
        return result

    def forget_diffs(self) -> None:
        """Drop every computed diff (the fetched IR stays), so the next visit diffs afresh."""
        with self._lock:
            self._diffs.clear()

    def fetch_all(self) -> None:
        """Fetch every pass's IR in one request (an export diffs them all)."""
        self.irs(range(-1, len(self.passes)))

    def known_diff(self, index: int) -> Diff | None:
        """The diff of pass ``index`` if it was already computed, without fetching anything."""
        with self._lock:
            return self._diffs.get(index)
