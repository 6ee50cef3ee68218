"""Judging one case from the grader's own buffers: values, never-written elements, stray writes,
changed inputs, and the kernel's declared signature. Runs only in the grader's process."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from tilescope.core.model import Finding, from_json
from tilescope.puzzles.buffers import GuardReport, SharedBuffer
from tilescope.puzzles.compare import compare, default_tolerance
from tilescope.puzzles.report import FailureKind, OutputCheck

ORDER: list[FailureKind] = ["out-of-bounds", "non-finite", "wrong-values", "input-modified"]


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple[int, ...]
    """-1 where the kernel's dimension is symbolic."""
    dtype: str


def signature_problem(declared: Sequence[Param], tensors: Sequence[torch.Tensor]) -> str | None:
    """Plain words for the first mismatch between the kernel's parameters and the puzzle's tensors."""
    if len(declared) != len(tensors):
        names = ", ".join(p.name for p in declared)
        return f"The kernel takes {len(declared)} tensors ({names}); the puzzle passes {len(tensors)}."
    for p, t in zip(declared, tensors, strict=True):
        want_dtype = str(t.dtype).removeprefix("torch.")
        if p.dtype != want_dtype:
            return f"Parameter {p.name} is declared {p.dtype}; the puzzle passes {want_dtype}."
        if -1 not in p.shape and p.shape != tuple(t.shape):
            return f"Parameter {p.name} is declared with shape {p.shape}; the puzzle passes {tuple(t.shape)}."
    return None


def tolerance(overrides: dict[str, float], dtype: torch.dtype) -> tuple[float, float]:
    atol, rtol = default_tolerance(dtype)
    return overrides.get("atol", atol), overrides.get("rtol", rtol)


def _fmt(x: float | None) -> str:
    return "none" if x is None else f"{x:.6g}"


def stray_words(name: str, guard: GuardReport) -> str:
    where = []
    if guard.after:
        start = "right after it" if not guard.first_after else f"{guard.first_after} elements after it"
        where.append(f"{guard.after} elements past its end, starting {start}")
    if guard.before:
        where.append(f"{guard.before} elements before its start, the nearest {guard.first_before} before it")
    return f"The kernel wrote outside {name}: {' and '.join(where)} (counted within {guard.band} elements each side)."


def judge_output(check: OutputCheck) -> tuple[FailureKind, str] | None:
    """The failure one output shows, if any: stray writes first, then values."""
    name, guard, comp = check.name, check.guard, check.comparison
    if not guard.ok:
        return "out-of-bounds", stray_words(name, guard)
    if comp.ok:
        return None
    index = ", ".join(str(i) for i in comp.first_wrong or [])
    detail = (
        f"{name}[{index}] is {_fmt(comp.got)}, expected {_fmt(comp.expected)}; {comp.wrong} of {comp.total} "
        f"elements are wrong ({comp.abs_error_words}, max rel error {_fmt(comp.max_rel_error)}, "
        f"tolerance atol={comp.atol:g} rtol={comp.rtol:g})."
    )
    if check.unwritten:
        first = ", ".join(str(i) for i in check.first_unwritten or [])
        return "wrong-values", detail + f" {check.unwritten} elements were never written, the first at {name}[{first}]."
    got, exp = comp.got, comp.expected
    if got is not None and exp is not None and not math.isfinite(got) and math.isfinite(exp):
        return "non-finite", detail + " A non-finite value where a finite one was due: an overflow, or 0/0."
    return "wrong-values", detail


def check_output(name: str, expected: torch.Tensor, buf: SharedBuffer, tol: dict[str, float]) -> OutputCheck:
    atol, rtol = tolerance(tol, expected.dtype)
    got = buf.body.to(expected.device)
    unwritten = buf.unwritten()
    count = int(unwritten.sum())
    first = [int(i) for i in torch.nonzero(unwritten)[0]] if count else None
    return OutputCheck(name, compare(expected, got, atol, rtol), buf.check(), count, first)


def judge_inputs(
    names: Sequence[str], buffers: Sequence[SharedBuffer], originals: Sequence[torch.Tensor]
) -> tuple[FailureKind, str] | None:
    """Stray writes around an input, or an input the kernel changed."""
    for name, buf in zip(names, buffers, strict=True):
        guard = buf.check()
        if not guard.ok:
            return "out-of-bounds", stray_words(name, guard)
    for name, buf, original in zip(names, buffers, originals, strict=True):
        now = buf.body
        before = original.to(now.device)
        if not torch.equal(now, before) and not (now.isnan() & before.isnan()).any():
            return "input-modified", f"The kernel changed its input {name}."
    return None


def first_failure(verdicts: Sequence[tuple[FailureKind, str]]) -> tuple[FailureKind, str] | None:
    return min(verdicts, key=lambda v: ORDER.index(v[0])) if verdicts else None


def parse_findings(data: object) -> list[Finding]:
    """The interpreter's findings from the kernel process's answer; ValueError for anything malformed."""
    if not isinstance(data, list):
        raise ValueError("findings that are no list")
    findings = [from_json(Finding, item) for item in data]
    if not all(isinstance(f, Finding) and isinstance(f.buffer, str) and isinstance(f.index, list) for f in findings):
        raise ValueError("a malformed finding")
    return findings


def bounds_verdict(findings: Sequence[Finding], params: set[str]) -> tuple[FailureKind, str] | None:
    """An interpreted run's access outside a buffer: past a parameter it is what a guard region
    would have caught (``out-of-bounds``); past a shared or fragment tile, what on a GPU corrupts
    another tile or faults (``runtime-error``). Findings can only fail a check, never pass one."""
    for f in findings:
        if f.kind.startswith("out-of-bounds"):
            kind: FailureKind = "out-of-bounds" if f.buffer in params else "runtime-error"
            return kind, f"The interpreter checked every access: {f.describe()}."
    return None
