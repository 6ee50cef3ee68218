"""Hover over a line the hazard check reported: what happened, the witness, and which blocks ran."""

from __future__ import annotations

from tilescope.core.codes import HAZARD_CODES
from tilescope.core.ide.describe import HoverText
from tilescope.core.ide.merge import Facts
from tilescope.core.model import Span


def hazard_hover(facts: Facts, line: int) -> HoverText | None:
    """The hazard diagnostics on ``line`` (either of their lines), each with its witness."""
    parts: list[str] = []
    for kernel in facts.static.kernels:
        model = facts.model(kernel)
        if model is None:
            continue
        for d in model.diagnostics:
            if d.code not in HAZARD_CODES or (d.span.line != line and all(r.span.line != line for r in d.related)):
                continue
            text = f"**{d.code}** ({d.severity}): {d.message}"
            others = [r for r in d.related if r.span.line != line or d.span.line != line]
            text += "".join(f"\n\n- line {r.span.line}: {r.message}" for r in others)
            if d.witness:
                text += f"\n\n{d.witness}"
            parts.append(text)
        check = model.hazard_check
        if parts and check is not None and check.stopped:
            parts.append(f"_The check stopped early: {check.stopped}._")
    if not parts:
        return None
    return HoverText("\n\n---\n\n".join(parts), Span(line, 0, line))
