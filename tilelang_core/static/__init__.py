"""The static tier: what a kernel file says, read without executing it and despite syntax errors.

``analyze_source`` is cheap (milliseconds for a thousand lines, cached per top-level block), and an
editor's ``IncrementalAnalysis`` patches the last analysis for each keystroke; the compiler tier
(``tilescope.core.Analyzer``) later replaces what it knows better. Submodules import each other
directly, never through this package.
"""

from __future__ import annotations

from tilescope.core.static.analyze import SOURCE, analyze_source
from tilescope.core.static.catalog import use_interpreter
from tilescope.core.static.incremental import IncrementalAnalysis
from tilescope.core.static.records import (
    Binding,
    BufferDecl,
    LaunchDecl,
    Occurrence,
    PipelineDecl,
    PrimitiveUse,
    QuickFix,
    StaticFile,
    StaticKernel,
    TextEdit,
)
from tilescope.core.static.recover import BlockCache

__all__ = [
    "SOURCE",
    "Binding",
    "BlockCache",
    "BufferDecl",
    "IncrementalAnalysis",
    "LaunchDecl",
    "Occurrence",
    "PipelineDecl",
    "PrimitiveUse",
    "QuickFix",
    "StaticFile",
    "StaticKernel",
    "TextEdit",
    "analyze_source",
    "use_interpreter",
]
