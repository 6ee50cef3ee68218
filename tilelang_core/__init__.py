"""Tilescope's core: the TileLang compiler's knowledge of a kernel as a typed, queryable model.

Importing this package is cheap: TileLang itself is only imported inside the worker process.
"""

from tilescope.core.discovery import discover, instantiations
from tilescope.core.model import SCHEMA_VERSION, FileAnalysis, IRText, KernelModel
from tilescope.core.service import Analyzer

__all__ = [
    "SCHEMA_VERSION",
    "Analyzer",
    "FileAnalysis",
    "IRText",
    "KernelModel",
    "discover",
    "instantiations",
]
