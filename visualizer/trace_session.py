"""One kernel's pass trace: the core's trace view, each pass's IR fetched once, on demand.

The core prints a pass's IR only when asked (printing all of them is what makes a full lowering
trace slow), so the session asks for a pass when the viewer shows it and remembers the answer.
Safe to use from the viewer's worker threads: the analyzer serialises its own requests.
"""

from __future__ import annotations

import threading
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
        with self._lock:
            cached = self._ir.get(index)
        if cached is not None:
            return cached
        text = self.analyzer.pass_ir(
            self.path,
            self.source,
            kernel=self.kernel.kernel,
            index=index,
            target=self.kernel.target,
            args=self._args(),
        )
        with self._lock:
            self._ir[index] = text
        return text

    def _args(self) -> dict[str, Any] | None:
        return dict(self.kernel.args) or None

    def diff(self, index: int) -> Diff:
        """What pass ``index`` changed in the IR."""
        with self._lock:
            cached = self._diffs.get(index)
        if cached is not None:
            return cached
        result = unified(self.ir(index - 1), self.ir(index))
        with self._lock:
            self._diffs[index] = result
        return result

    def forget_diffs(self) -> None:
        """Drop every computed diff (the fetched IR stays), so the next visit diffs afresh."""
        with self._lock:
            self._diffs.clear()

    def known_diff(self, index: int) -> Diff | None:
        """The diff of pass ``index`` if it was already computed, without fetching anything."""
        with self._lock:
            return self._diffs.get(index)
