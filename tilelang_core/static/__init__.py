"""The static tier: what a kernel file says, read without executing it and despite syntax errors.

``analyze_source`` is cheap (milliseconds for a thousand lines, cached per top-level block), so an
editor can call it on every keystroke; the compiler tier (``tilescope.core.Analyzer``) later replaces
what it knows better.
"""

from __future__ import annotations

from dataclasses import replace

from tilescope.core.errors import surrogate_error
from tilescope.core.lines import source_lines, without_surrogates
from tilescope.core.static.checks import check_primitives
from tilescope.core.static.kernels import discover, module_context, read_kernel
from tilescope.core.static.records import (
    Binding,
    BufferDecl,
    LaunchDecl,
    Occurrence,
    PipelineDecl,
    PrimitiveUse,
    StaticFile,
    StaticKernel,
)
from tilescope.core.static.recover import parse_tolerant

SOURCE = "tilescope-static"
"""The ``source`` of every static diagnostic; the compiler tier's say ``tilescope``."""

__all__ = [
    "SOURCE",
    "Binding",
    "BufferDecl",
    "LaunchDecl",
    "Occurrence",
    "PipelineDecl",
    "PrimitiveUse",
    "StaticFile",
    "StaticKernel",
    "analyze_source",
]


def analyze_source(source: str, path: str = "<unsaved>", *, target: str = "sm_90") -> StaticFile:
    """Everything the source alone says about its kernels, with syntax and static diagnostics."""
    surrogate = surrogate_error(source)
    source = without_surrogates(source) if surrogate is not None else source
    parsed = parse_tolerant(source)
    context = module_context(parsed.blocks, source_lines(source), target)
    diagnostics = list(parsed.errors) + ([surrogate] if surrogate is not None else [])
    kernels = []
    for ref, outer, body, block in discover(context):
        kernel, found = read_kernel(ref, outer, body, context, block)
        kernels.append(kernel)
        diagnostics.extend(found)
    uses: list[PrimitiveUse] = []
    for block in parsed.blocks:
        block_uses, found = check_primitives(block, context.aliases)
        uses.extend(block_uses)
        diagnostics.extend(d for d in found if d.span.line not in parsed.repaired_lines)
    diagnostics = sorted((replace(d, source=SOURCE) for d in diagnostics), key=lambda d: (d.span.line, d.span.column))
    return StaticFile(path, target, kernels, diagnostics, uses, sorted(context.aliases))
