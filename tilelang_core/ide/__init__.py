"""The editor layer's one door: plain, typed, JSON-ready views in editor terms, computed from the model.

Every front end (CLI, terminal viewer, plots, language server, VS Code) draws these and derives none.
The language server and the visualizer import the editor layer only from here (with the model and
the static tier's public names beside it; ``tests/test_imports.py`` holds them to that), so the
modules behind it can be split or merged without touching a front end.
"""

from tilescope.core.display import buffer_text, dims_text, kib, shape_text, stages_text
from tilescope.core.ide.autotune_view import autotune_hover, configs_markdown
from tilescope.core.ide.code_actions import quick_fixes
from tilescope.core.ide.complete import Completion, Signature, complete, signature_at
from tilescope.core.ide.describe import HoverText, buffer_markdown, describe_at, identifier_at
from tilescope.core.ide.hazard_view import hazard_hover
from tilescope.core.ide.hints import HINT_KINDS, Hint, HintKind, inlay_hints
from tilescope.core.ide.ir_diff import Diff, Pair, Row, listing, patch, side_by_side, unified
from tilescope.core.ide.layout_text import buffer_stages, thread_map_text
from tilescope.core.ide.layout_view import KernelLayout, LayoutView, NoLayout, Panel, choose, layout_buffers, plot_order
from tilescope.core.ide.merge import CompiledSnapshot, Facts, facts, fingerprints, merged_diagnostics, with_unchanged
from tilescope.core.ide.navigate import OutlineKind, OutlineNode, definition, outline, references
from tilescope.core.ide.run_view import run_failed, run_text
from tilescope.core.ide.schedule_view import (
    NoSchedule,
    ScheduleView,
    schedule_lens,
    schedule_text,
    schedule_view,
    schedule_view_text,
)
from tilescope.core.ide.speed import speed_lenses, speed_markdown
from tilescope.core.ide.summary import FileSummary, VariantsSummary, file_summary, variants_summary
from tilescope.core.ide.trace_view import PassDiff, PassView, TraceView, passes_markdown, trace_view
from tilescope.core.lines import source_lines

__all__ = [
    "HINT_KINDS",
    "CompiledSnapshot",
    "Completion",
    "Diff",
    "Facts",
    "FileSummary",
    "Hint",
    "HintKind",
    "HoverText",
    "KernelLayout",
    "LayoutView",
    "NoLayout",
    "NoSchedule",
    "OutlineKind",
    "OutlineNode",
    "Pair",
    "Panel",
    "PassDiff",
    "PassView",
    "Row",
    "ScheduleView",
    "Signature",
    "TraceView",
    "VariantsSummary",
    "autotune_hover",
    "buffer_markdown",
    "buffer_stages",
    "buffer_text",
    "choose",
    "complete",
    "configs_markdown",
    "definition",
    "describe_at",
    "dims_text",
    "facts",
    "file_summary",
    "fingerprints",
    "hazard_hover",
    "identifier_at",
    "inlay_hints",
    "kib",
    "layout_buffers",
    "listing",
    "merged_diagnostics",
    "outline",
    "passes_markdown",
    "patch",
    "plot_order",
    "quick_fixes",
    "references",
    "run_failed",
    "run_text",
    "schedule_lens",
    "schedule_text",
    "schedule_view",
    "schedule_view_text",
    "shape_text",
    "side_by_side",
    "signature_at",
    "source_lines",
    "speed_lenses",
    "speed_markdown",
    "stages_text",
    "thread_map_text",
    "trace_view",
    "unified",
    "variants_summary",
    "with_unchanged",
]
