"""Compact records of an analysis: what a reader needs first, without pass lists, IR or generated code.

A ``FileAnalysis`` carries every pass, every layout's index expressions and the generated CUDA:
tens of kilobytes per kernel. A coding agent asking "does this kernel build, with which buffers,
launch and layouts, and what is wrong with it" needs a few hundred bytes of that. These records are
that answer, computed here once so every client that wants the short form gets the same one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tilescope.core.model import (
    Buffer,
    Diagnostic,
    FileAnalysis,
    FitStatus,
    KernelModel,
    Launch,
    Layout,
    Pipeline,
    Resources,
    Variant,
    VariantsReport,
)


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


def layout_summary(layout: Layout) -> LayoutSummary:
    return LayoutSummary(
        buffer=layout.buffer,
        kind=layout.kind,
        swizzle=layout.swizzle,
        thread_extent=layout.thread_extent,
        elements_per_thread=layout.elements_per_thread,
        replicate=layout.replicate,
    )


def kernel_summary(model: KernelModel) -> KernelSummary:
    return KernelSummary(
        kernel=model.kernel,
        args=model.args,
        target=model.target,
        arg_sources=model.arg_sources,
        launch=model.launch,
        buffers=model.buffers,
        layouts=[layout_summary(layout) for layout in model.layouts],
        pipelines=model.pipelines,
        warp_specialized=model.warp_specialized,
        shared_bytes=model.shared_bytes,
        resources=model.resources,
        passes=len(model.passes),
        diagnostics=model.diagnostics,
    )


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
class VariantSummary:
    kernel: str
    target: str
    config_index: int | None
    config: dict[str, Any] | None
    status: FitStatus
    reason: str | None
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
    return VariantSummary(
        kernel=variant.kernel,
        target=variant.target,
        config_index=variant.config_index,
        config=variant.config,
        status=variant.status,
        reason=variant.reason,
        threads=model.launch.threads if model and model.launch else None,
        shared_bytes=model.shared_bytes if model else None,
        registers=model.resources.registers if model and model.resources else None,
        errors=errors,
    )


def variants_summary(report: VariantsReport, display_path: str | None = None) -> VariantsSummary:
    return VariantsSummary(path=display_path or report.path, variants=[variant_summary(v) for v in report.variants])
