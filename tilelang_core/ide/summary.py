"""Compact records of an analysis: what a reader needs first, without pass lists, IR or generated code.

A ``FileAnalysis`` carries every pass, every layout's index expressions and the generated CUDA:
tens of kilobytes per kernel. A coding agent asking "does this kernel build, with which buffers,
launch and layouts, and what is wrong with it" needs a few hundred bytes of that. These records are
that answer, computed here once so every client that wants the short form gets the same one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from tilescope.core.model import (
    Buffer,
    Diagnostic,
    FileAnalysis,
    KernelModel,
    Launch,
    Layout,
    Pipeline,
    Resources,
    Variant,
    VariantFit,
    VariantsReport,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_Summary = TypeVar("_Summary", bound="DataclassInstance")


@dataclass(frozen=True)
class LayoutSummary:
    buffer: str
    kind: str
    """``fragment`` (registers spread over threads) or ``layout`` (a shared-memory arrangement)."""
    swizzle: str | None
    thread_extent: int | None
    elements_per_thread: int | None
    replicate: int | None


@dataclass(frozen=True)
class KernelSummary:
    kernel: str
    args: dict[str, Any]
    target: str
    arg_sources: dict[str, str]
    launch: Launch | None
    buffers: list[Buffer]
    layouts: list[LayoutSummary]
    pipelines: list[Pipeline]
    warp_specialized: bool
    shared_bytes: int
    resources: Resources | None
    passes: int
    """How many passes ran (the ``passes`` tool lists them)."""
    diagnostics: list[Diagnostic]


@dataclass(frozen=True)
class FileSummary:
    path: str
    target: str
    ok: bool
    """No error diagnostic anywhere in the file."""
    discovered: list[str]
    kernels: list[KernelSummary]
    diagnostics: list[Diagnostic] = field(default_factory=list[Diagnostic])


def _kept(summary: type[_Summary], record: object, **computed: object) -> _Summary:
    """A ``summary`` record of ``record``: its fields of the same name, but those ``computed`` here."""
    kept = {f.name: getattr(record, f.name) for f in fields(summary) if f.name not in computed}
    return summary(**kept, **computed)


def layout_summary(layout: Layout) -> LayoutSummary:
    return _kept(LayoutSummary, layout)


def kernel_summary(model: KernelModel) -> KernelSummary:
    layouts = [layout_summary(layout) for layout in model.layouts]
    return _kept(KernelSummary, model, layouts=layouts, passes=len(model.passes))


def file_summary(analysis: FileAnalysis, display_path: str | None = None) -> FileSummary:
    """``analysis`` in short; ``display_path`` names the file as the reader knows it."""
    return FileSummary(
        path=display_path or analysis.path,
        target=analysis.target,
        ok=analysis.ok,
        discovered=[ref.name for ref in analysis.discovered],
        kernels=[kernel_summary(k) for k in analysis.kernels],
        diagnostics=analysis.diagnostics,
    )


@dataclass(frozen=True)
class VariantSummary(VariantFit):
    threads: int | None
    shared_bytes: int | None
    registers: int | None
    errors: list[Diagnostic]


@dataclass(frozen=True)
class VariantsSummary:
    path: str
    variants: list[VariantSummary]


def variant_summary(variant: Variant) -> VariantSummary:
    model = variant.kernels[0] if variant.kernels else None
    errors = [d for d in variant.diagnostics if d.severity == "error"]
    if model is not None:
        errors += [d for d in model.diagnostics if d.severity == "error"]
    return _kept(
        VariantSummary,
        variant,
        threads=model.launch.threads if model and model.launch else None,
        shared_bytes=model.shared_bytes if model else None,
        registers=model.resources.registers if model and model.resources else None,
        errors=errors,
    )


def variants_summary(report: VariantsReport, display_path: str | None = None) -> VariantsSummary:
    return VariantsSummary(path=display_path or report.path, variants=[variant_summary(v) for v in report.variants])
