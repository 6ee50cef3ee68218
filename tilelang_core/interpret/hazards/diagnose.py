"""Hazards and access findings as diagnostics at the user's lines, with both lines and a witness.

An interpreter finding is an error: it happened, in the block and thread the witness names. A
race whose two sides are loop iterations with no known thread mapping, and a suspicion of
TileLang's own race check that the interpreter did not reproduce, are information notes.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _finding(f: Finding, path: str, kernel: str, ran: str) -> Diagnostic:
    index = ", ".join(str(i) for i in f.index)
    shape = dims_text(f.shape)
    many = f" ({f.count} elements)" if f.count > 1 else ""
    if f.kind == "uninitialised-read":
        message = f"Reads {f.buffer}[{index}], which nothing wrote first{many}"
    else:
        verb = "Writes" if f.kind == "out-of-bounds-write" else "Reads"
        message = f"{verb} {f.buffer}[{index}], outside its shape {shape}{many}"
    who = f" by {f.where}" if f.where else ""
    block = f" in block {tuple(f.block)}" if f.block is not None else ""
    witness = f"Interpreted on the CPU ({ran}): {f.buffer}[{index}]{block}{who}."
    if f.kind == "uninitialised-read":
        return _diagnostic("error", message, f.line, "uninitialised-read", kernel, [], witness)
    return _diagnostic("error", message, f.line, "out-of-bounds", kernel, [], witness)


def _diagnostic(
    severity: Severity, message: str, line: int, code: str, kernel: str, related: list[Related], witness: str | None
) -> Diagnostic:
    return Diagnostic(severity, message, Span(line), code, kernel=kernel, related=related, witness=witness)


def _side(write: bool) -> str:
    return "writes" if write else "reads"


def _hazard(h: Hazard, kernel: str, ran: str) -> Diagnostic:
    index = ", ".join(str(i) for i in h.index)
    element = f"{h.scope} {h.buffer}[{index}]"
    a, b = h.first, h.second
    where_a = f"{a.who} of block {tuple(a.block)}"
    where_b = f"{b.who} of block {tuple(b.block)}"
    if h.kind == "missing-barrier":
        message = (
            f"{b.who.capitalize()} overwrites {element} while {a.who} reads it in the same statement "
            f"(line {a.line}): no barrier can separate them; read into a fragment or a second buffer first"
        )
    elif a.block != b.block:
        message = (
            f"Blocks {tuple(a.block)} and {tuple(b.block)} both touch {element} ({_side(a.write)} at line {a.line}, "
            f"{_side(b.write)} here) and blocks are never ordered; use T.atomic_add or disjoint tiles"
        )
    else:
        message = (
            f"{where_a.capitalize()} and {where_b} both write {element} in one statement, nothing ordering them: "
            "a data race; use T.atomic_add, a reduction, or one writer"
        )
    more = f" ({h.count} such pairs)" if h.count > 1 else ""
    witness = (
        f"Interpreted on the CPU ({ran}): {where_a} {_side(a.write)} {element} at line {a.line}; "
        f"{where_b} {_side(b.write)} it at line {b.line}{more}."
    )
    if not h.confirmed:
        witness += " The two are different iterations of a T.Parallel loop; which threads run them is not known."
    related = [Related(Span(a.line), f"{where_a} {_side(a.write)} {h.buffer}[{index}] here")]
    severity: Severity = "error" if h.confirmed else "information"
    if h.kind == "missing-barrier":
        return _diagnostic(severity, message, b.line, "missing-barrier", kernel, related, witness)
    return _diagnostic(severity, message, b.line, "data-race", kernel, related, witness)


def _suspicion(s: Suspicion, kernel: str, ran: str) -> Diagnostic:
    checked = f"the interpreter did not reproduce it ({ran})" if ran else "the interpreter could not run this kernel"
    message = (
        f"TileLang's race check suspects that several iterations of the loop over {s.loop_vars} store different "
        f"values to `{s.access}`; {checked}"
    )
    return _diagnostic("information", message, s.line, "data-race", kernel, [], None)


def diagnostics(
    findings: list[Finding],
    hazards: list[Hazard],
    suspected: list[Suspicion],
    path: str,
    kernel: str,
    ran: str,
    not_run_line: int,
) -> list[Diagnostic]:
    """Every finding and hazard as a diagnostic, then the suspicions nothing confirmed."""
    out = [_finding(f, path, kernel, ran) for f in findings if f.kind in _FINDING_KINDS and f.line]
    out.extend(_hazard(h, kernel, ran) for h in hazards if h.second.line)
    confirmed = {line for h in hazards for line in (h.first.line, h.second.line)}
    out.extend(_suspicion(s, kernel, ran) for s in suspected if s.line not in confirmed)
    return out
