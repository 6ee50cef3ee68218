"""Hazards and access findings as diagnostics at the user's lines, with both lines and a witness.

An interpreter finding is an error: it happened, in the block and thread the witness names (information
where a loop bound or branch depends on the values of inputs the check made up: ``steered``). A
race whose two sides are loop iterations with no known thread mapping, and a suspicion of
TileLang's own race check that the interpreter did not reproduce, are information notes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core.codes import diagnostic
from tilescope.core.display import dims_text
from tilescope.core.model import Diagnostic, Finding, Hazard, Related, Severity, Span


@dataclass(frozen=True)
class Suspicion:
    """A report of TileLang's own race check (``tilelang_check.py``), at the store's line."""

    line: int
    access: str
    """The store as TileLang prints it: ``hist(A[bx * 64 + i] % 8,)``."""
    loop_vars: str


_FINDING_KINDS = ("out-of-bounds-read", "out-of-bounds-write", "uninitialised-read")


def _finding(f: Finding, path: str, kernel: str, ran: str, steering: list[str]) -> Diagnostic:
    index = ", ".join(str(i) for i in f.index)
    shape = dims_text(f.shape)
    many = {"count": f.count} if f.count > 1 else {}
    who = f" by {f.where}" if f.where else ""
    block = f" in block {tuple(f.block)}" if f.block is not None else ""
    witness = f"Interpreted on the CPU ({ran}): {f.buffer}[{index}]{block}{who}."
    # What the check saw happen with inputs it made up, where their values steer a loop or a branch, is
    # what those values make happen: information, naming them, not an error the code surely has.
    severity: Severity | None = None
    if steering:
        severity = "information"
        witness += _made_up(steering)
    where = {"buffer": f.buffer, "index": index, **many}
    if f.kind == "uninitialised-read":
        form = "many" if many else None
        return diagnostic(
            "uninitialised-read",
            Span(f.line),
            form=form,
            severity=severity,
            kernel=kernel,
            witness=witness,
            fields=where,
        )
    form = ("write" if f.kind == "out-of-bounds-write" else "read") + ("_many" if many else "")
    return diagnostic(
        "out-of-bounds",
        Span(f.line),
        form=None if form == "read" else form,
        severity=severity,
        kernel=kernel,
        witness=witness,
        shape=shape,
        fields=where,
    )


def _made_up(steering: list[str]) -> str:
    """What a witness adds where made-up input values steered the run."""
    return (
        f" A loop bound or branch depends on the values of {', '.join(steering)}, which the check made up"
        " (random integers in [0, 16)); the program's own values may never do this."
    )


def _side(write: bool) -> str:
    return "writes" if write else "reads"


def _hazard(h: Hazard, kernel: str, ran: str, steering: list[str]) -> Diagnostic:
    index = ", ".join(str(i) for i in h.index)
    element = f"{h.scope} {h.buffer}[{index}]"
    a, b = h.first, h.second
    where_a = f"{a.who} of block {tuple(a.block)}"
    where_b = f"{b.who} of block {tuple(b.block)}"
    more = f" ({h.count} such pairs)" if h.count > 1 else ""
    witness = (
        f"Interpreted on the CPU ({ran}): {where_a} {_side(a.write)} {element} at line {a.line}; "
        f"{where_b} {_side(b.write)} it at line {b.line}{more}."
    )
    if not h.confirmed:
        witness += " The two are different iterations of a T.Parallel loop; which threads run them is not known."
    related = [Related(Span(a.line), f"{where_a} {_side(a.write)} {h.buffer}[{index}] here")]
    # A pair the interpreter did not pin to threads (two iterations of a T.Parallel loop) may not race:
    # a note, not the codes' usual error.
    severity: Severity = "error" if h.confirmed else "information"
    span = Span(b.line)
    if h.kind == "missing-barrier":
        return diagnostic(
            "missing-barrier",
            span,
            severity=severity,
            kernel=kernel,
            related=related,
            witness=witness,
            writer=b.who.capitalize(),
            element=element,
            reader=a.who,
            line=a.line,
        )
    if a.block != b.block:
        # Which global elements two blocks touch where made-up values steer the run (a varlen kernel's
        # offsets, its token indices) is what those values make them touch: a note naming them.
        if steering:
            severity = "information"
            witness += _made_up(steering)
        return diagnostic(
            "data-race",
            span,
            form="blocks",
            severity=severity,
            kernel=kernel,
            related=related,
            witness=witness,
            first=tuple(a.block),
            second=tuple(b.block),
            element=element,
            first_side=_side(a.write),
            second_side=_side(b.write),
            line=a.line,
        )
    pair = {"first": where_a.capitalize(), "second": where_b, "element": element}
    return diagnostic(
        "data-race", span, severity=severity, kernel=kernel, related=related, witness=witness, fields=pair
    )


def _suspicion(s: Suspicion, kernel: str, ran: str) -> Diagnostic:
    # A suspicion nothing reproduced is a note, not the code's usual error.
    store = {"loop_vars": s.loop_vars, "access": s.access}
    if ran:
        return diagnostic(
            "data-race", Span(s.line), form="suspected", severity="information", kernel=kernel, ran=ran, fields=store
        )
    return diagnostic(
        "data-race", Span(s.line), form="suspected_not_run", severity="information", kernel=kernel, fields=store
    )


def diagnostics(
    findings: list[Finding],
    hazards: list[Hazard],
    suspected: list[Suspicion],
    path: str,
    kernel: str,
    ran: str,
    not_run_line: int,
    steering: list[str] | None = None,
) -> list[Diagnostic]:
    """Every finding and hazard as a diagnostic, then the suspicions nothing confirmed. ``steering``: the
    inputs whose made-up values decide a loop bound or a branch (their findings, and races between
    blocks, are information)."""
    out = [_finding(f, path, kernel, ran, steering or []) for f in findings if f.kind in _FINDING_KINDS and f.line]
    out.extend(_hazard(h, kernel, ran, steering or []) for h in hazards if h.second.line)
    confirmed = {line for h in hazards for line in (h.first.line, h.second.line)}
    out.extend(_suspicion(s, kernel, ran) for s in suspected if s.line not in confirmed)
    return out
