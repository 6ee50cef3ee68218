"""What the compiler tier answers where the worker could not: a kernel the worker did not answer for
still appears, with why (a timeout in the phase it reached, a crash, a lost supervisor), and a file
that never reached the worker has its one diagnostic. Runs on the host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.worker_link import WorkerError
from tilescope.core.environment import gpu_message
from tilescope.core.model import Diagnostic, FileAnalysis, KernelModel, KernelRef, RunReport, Span


def run_failure(err: Exception, kernel: str | None, args: dict[str, Any] | None, timeout: float) -> RunReport:
    """A ``run`` the worker did not finish: stopped at its deadline, or the worker died."""
    if isinstance(err, WorkerError) and err.code == "timeout":
        message = f"the run did not finish within {timeout:g} s (it was stopped)"
    else:
        message = f"the worker died while running the kernel ({err}); it was restarted"
    return RunReport(kernel or "", dict(args or {}), [], [], 0.0, error=message)


def file_only(path: str, target: str, discovered: list[KernelRef], failure: Diagnostic) -> FileAnalysis:
    """The file's analysis when it never reached the worker: no kernel models, one diagnostic."""
    return FileAnalysis(path=path, target=target, kernels=[], discovered=discovered, diagnostics=[failure])


def failed(
    payload: Mapping[str, Any], ref: KernelRef | None, discovered: list[KernelRef], failure: Diagnostic
) -> FileAnalysis:
    """The worker could not answer for a kernel: the kernel still appears in ``kernels``, with why."""
    path, target = payload["path"], payload["target"]
    if ref is None:
        return file_only(path, target, discovered, failure)
    kernel = KernelModel.unanalysed(ref.name, {}, target, [failure])
    return FileAnalysis(path=path, target=target, kernels=[kernel], discovered=discovered, diagnostics=[])


def internal_failure(err: RuntimeError, ref: KernelRef | None) -> Diagnostic:
    """The worker answered with an error of Tilescope's own for ``ref`` (the request itself failed)."""
    line = ref.span.line if ref else 1
    return diagnostic("internal-error", Span(line), form="worker", kernel=ref.name if ref else None, error=str(err))


def worker_diagnostic(err: WorkerError, ref: KernelRef | None, timeout: float) -> Diagnostic:
    """Why the worker gave no answer for ``ref``, at its line, and what became of the worker."""
    name = ref.name if ref else "the file"
    kernel = ref.name if ref else None
    span = Span(ref.span.line, ref.span.column) if ref else Span(1, 0)
    if err.code == "worker-crash" and gpu_message(str(err)):
        return diagnostic("needs-gpu", span, form="worker", kernel=kernel, name=name, error=str(err))
    if err.code not in ("timeout", "worker-crash", "worker-channel", "supervisor-lost", "worker-leftovers"):
        return diagnostic(err.code, span, form=err.form, kernel=kernel, fields=err.fields)
    after = (
        "the process that built it was ended; the warm worker goes on"
        if err.kept
        else "the worker and every process it started were ended and a fresh worker started"
    )
    if err.code == "timeout":
        if err.phase == "worker-start":
            return diagnostic("timeout", span, form="start", kernel=kernel, name=name, seconds=timeout)
        if err.phase in (None, "started"):
            return diagnostic("timeout", span, form="loading", kernel=kernel, name=name, seconds=timeout, after=after)
        return diagnostic("timeout", span, kernel=kernel, name=name, seconds=timeout, phase=err.phase, after=after)
    return diagnostic(err.code, span, kernel=kernel, name=name, error=str(err), after=after)
