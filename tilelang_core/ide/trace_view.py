"""A kernel's pass trace joined with the pass catalogue, once, for every viewer.

The model records what ran (``PassRecord``); the catalogue says what each pass does. TVM reports
some Python-defined passes as ``pass_fn``; :func:`pass_catalog.resolve` names those by position,
and the view carries the resolved name as the ``label`` every viewer shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core import pass_catalog
from tilescope.core.ide.ir_diff import Diff
from tilescope.core.model import KernelModel


@dataclass(frozen=True)
class PassView:
    index: int
    name: str
    """As TVM recorded it."""
    label: str
    """What to show: the name, with the function behind an anonymous ``pass_fn``."""
    phase: str
    duration_ms: float
    changed: bool
    what: str | None
    """The catalogue's plain words, ``None`` for a pass it does not know."""
    look_for: str | None


@dataclass(frozen=True)
class TraceView:
    kernel: str
    target: str
    title: str
    passes: list[PassView]


@dataclass(frozen=True)
class PassDiff:
    """What pass ``index`` did: its entry in the trace and its IR diff against the pass before."""

    kernel: str
    index: int
    diff: Diff


def trace_view(model: KernelModel) -> TraceView:
    infos = pass_catalog.resolve([p.name for p in model.passes])
    passes = [
        PassView(
            index=record.index,
            name=record.name,
            label=f"{record.name} ({info.name})" if info and record.name != info.name else record.name,
            phase=record.phase,
            duration_ms=record.duration_ms,
            changed=record.changed,
            what=info.what if info else None,
            look_for=info.look_for if info else None,
        )
        for record, info in zip(model.passes, infos, strict=True)
    ]
    args = " ".join(f"{k}={v}" for k, v in model.args.items())
    title = f"{model.kernel}({args}) · {model.target} · {len(passes)} passes"
    return TraceView(model.kernel, model.target, title, passes)


def passes_markdown(view: TraceView) -> str:
    """The trace as a Markdown table, for editors that open a document rather than draw a view."""
    rows = [f"# Passes of `{view.kernel}`", "", "| # | pass | changed | ms | what it does |", "|---|---|---|---|---|"]
    for p in view.passes:
        what = p.what.replace("|", "\\|") if p.what is not None else ""
        rows.append(f"| {p.index} | `{p.name}` | {'yes' if p.changed else ''} | {p.duration_ms:.1f} | {what} |")
    return "\n".join(rows) + "\n"
