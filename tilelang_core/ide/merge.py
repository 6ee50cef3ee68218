"""Joining the two tiers: which compiled facts still describe the text being edited.

A compiled ``KernelModel`` describes the source it was built from. It is used for a kernel only
while that kernel's fingerprint (its own text, its bindings and the target) is unchanged, so
editing one kernel never shows another's stale numbers, and editing this one falls back to the
static tier until the compiler has caught up.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from tilescope.core.codes import HAZARD_CODES
from tilescope.core.lines import source_lines
from tilescope.core.model import Diagnostic, FileAnalysis, KernelModel
from tilescope.core.static.records import StaticFile, StaticKernel

COMPILER_KNOWS_BETTER = frozenset({"shared-memory"})
"""Static estimates dropped once the compiler has built the kernel without error."""
SETTLED_BY = {"shared-memory": "shared-memory-overflow"}
"""Static estimates dropped when the compiler reports the same fact for the kernel itself: one
diagnostic per fact, the compiler's."""


def fingerprints(static: StaticFile, source: str) -> dict[str, str]:
    """Per kernel: a digest of its text, its bindings and its target."""
    lines = [line.rstrip("\r\n") for line in source_lines(source)]
    found: dict[str, str] = {}
    for kernel in static.kernels:
        end = kernel.span.end_line or kernel.span.line
        text = "\n".join(lines[kernel.span.line - 1 : end])
        digest = hashlib.sha1(
            f"{text}\0{kernel.bindings!r}\0{kernel.target}".encode("utf-8", "surrogatepass")
        ).hexdigest()
        found[kernel.ref.name] = digest
    return found


@dataclass(frozen=True)
class CompiledSnapshot:
    """A compiler-tier result together with the fingerprints of the text it was computed from."""

    analysis: FileAnalysis
    fingerprints: dict[str, str]
    version: int | None = None
    partial: bool = False
    """The analysis so far, published while the rest (a hazard check, the file's other kernels) still runs."""


@dataclass(frozen=True)
class Facts:
    """What editor features draw from: the static file and the compiled models still valid for it."""

    static: StaticFile
    models: dict[str, KernelModel] = field(default_factory=dict[str, KernelModel])

    def model(self, kernel: StaticKernel) -> KernelModel | None:
        return self.models.get(kernel.ref.name)


def facts(static: StaticFile, current: dict[str, str], compiled: CompiledSnapshot | None) -> Facts:
    """The compiled models whose kernels are unchanged since they were compiled."""
    if compiled is None:
        return Facts(static)
    models = {
        model.kernel: model
        for model in compiled.analysis.kernels
        if compiled.fingerprints.get(model.kernel) is not None
        and compiled.fingerprints.get(model.kernel) == current.get(model.kernel)
    }
    return Facts(static, models)


def with_unchanged(partial: CompiledSnapshot, previous: CompiledSnapshot | None) -> CompiledSnapshot:
    """An analysis so far, with the earlier snapshot's models of the kernels it has not reached yet whose text
    is unchanged (what ``facts`` keeps of it), so a kernel does not fall back to static facts while the
    compiler works on another."""
    if previous is None:
        return partial
    reached = {m.kernel for m in partial.analysis.kernels}
    kept = [
        m
        for m in previous.analysis.kernels
        if m.kernel not in reached
        and previous.fingerprints.get(m.kernel) is not None
        and previous.fingerprints.get(m.kernel) == partial.fingerprints.get(m.kernel)
    ]
    if not kept:
        return partial
    order = {ref.name: i for i, ref in enumerate(partial.analysis.discovered)}
    kernels = sorted([*partial.analysis.kernels, *kept], key=lambda m: order.get(m.kernel, len(order)))
    return replace(partial, analysis=replace(partial.analysis, kernels=kernels))


def _build_error(d: Diagnostic) -> bool:
    """An error of building the kernel (a hazard the interpreter found is one of running it)."""
    return d.severity == "error" and d.code not in HAZARD_CODES


def merged_diagnostics(static: StaticFile, compiled: FileAnalysis | None) -> list[Diagnostic]:
    """Static diagnostics plus the compiler's, the compiler's replacing what it settles: static
    estimates for kernels it built, and static errors on lines where it reports an error itself."""
    if compiled is None:
        return list(static.diagnostics)
    found = compiled.all_diagnostics()
    built = {k.kernel for k in compiled.kernels if k.passes and not any(_build_error(d) for d in k.diagnostics)}
    error_lines = {d.span.line for d in found if d.severity == "error"}
    reported = {(d.code, d.kernel) for d in found}
    kept = [
        d
        for d in static.diagnostics
        if not (d.code in COMPILER_KNOWS_BETTER and d.kernel in built)
        and (SETTLED_BY.get(d.code), d.kernel) not in reported
        and not (d.severity == "error" and d.code != "syntax-error" and d.span.line in error_lines)
    ]
    syntax_seen = any(d.code == "syntax-error" for d in static.diagnostics)
    for diagnostic in found:
        if diagnostic.code == "syntax-error" and syntax_seen:
            continue
        if diagnostic not in kept:
            kept.append(diagnostic)
    kept.sort(key=lambda d: (d.span.line, d.span.column))
    return kept
