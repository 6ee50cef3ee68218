"""The route of a check on a CUDA GPU: the kernel process compiles and runs each case on the device, a
helper compiles the hidden shapes ahead, and where asked one small case runs again under
compute-sanitizer's memcheck and racecheck, whose errors fail the check.
"""

from __future__ import annotations

import dataclasses
import secrets
from dataclasses import dataclass

from tilescope.puzzles import sanitizer
from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.case_run import run_case
from tilescope.puzzles.cases import PlannedCase, args_text
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.children import Child, ChildGone
from tilescope.puzzles.protocol import CompileRequest
from tilescope.puzzles.replies import Violation, call, params_of
from tilescope.puzzles.report import FailureKind, Report
from tilescope.puzzles.route import Attempt, Device
from tilescope.puzzles.session import READY_S, Session

SANITIZED = (None, "wrong-values", "non-finite", "out-of-bounds", "runtime-error")
"""The outcomes a sanitizer's word may add to: a pass, or a failure whose cause it may name better."""


@dataclass(frozen=True)
class GpuRoute:
    perf: bool = True
    """Time the timed shape after checking it."""
    sanitize: bool = False
    """Also run one small case under compute-sanitizer."""

    @property
    def device(self) -> Device:
        return "cuda"

    @property
    def timed(self) -> bool:
        return self.perf

    def prepare(self, session: Session, attempt: Attempt) -> None:
        """Hand the hidden shapes (new for every check, so never in TileLang's cache) to the helper, last
        first: it compiles them while the kernel process runs the fixed cases, and the kernel process's own
        compile of each is then a cache hit. Its answers are never read: nothing it says reaches a verdict."""
        helper = session.helper()
        if helper is None:
            return
        planned, funcs = attempt.planned, attempt.funcs
        fixed = {c.key for c in planned if c.kind != "hidden"}
        hidden = list(dict.fromkeys(c.key for c in planned if c.kind == "hidden" and c.key not in fixed))
        for key in reversed(hidden):
            request: CompileRequest = {
                "op": "compile",
                "key": key,
                "prim_func": funcs[key],
                "path": attempt.path,
                "device": "cuda",
            }
            try:
                helper.send({"id": secrets.token_hex(8), **request})
            except ChildGone:
                return

    def finish(self, report: Report, attempt: Attempt) -> Report:
        if not self.sanitize or report.failure not in SANITIZED:
            return report
        return _sanitized(report, attempt)


def _run_once(
    puzzle: Puzzle, case: PlannedCase, prim_func: str, path: str, child: Child, ws: Workspace, timeout_s: float
) -> None:
    """Compile and run ``case`` once in a fresh executor ``child`` (one a sanitizer wraps)."""
    hello = child.receive(READY_S)
    if not isinstance(hello, dict) or hello.get("op") != "ready":
        raise Violation("no greeting")
    request: CompileRequest = {
        "op": "compile",
        "key": case.key,
        "prim_func": prim_func,
        "path": path,
        "lineinfo": True,
        "device": "cuda",
    }
    reply = call(child, request, timeout_s, {"compiled", "compile-error"})
    if reply["op"] == "compiled":
        run_case(puzzle, case, params_of(reply), child, ws, "cuda", timeout_s, sanitized=True)


def _sanitized(report: Report, attempt: Attempt) -> Report:
    """The report with memcheck's and racecheck's word on one small case; an error they find fails it."""
    exe = sanitizer.find_tool()
    if exe is None:
        missing = "memcheck and racecheck: compute-sanitizer is not installed on this machine"
        return dataclasses.replace(report, not_checked=[*report.not_checked, missing])
    puzzle, path, funcs = attempt.puzzle, attempt.path, attempt.funcs
    case = sanitizer.small_case(attempt.planned)
    budget = max(attempt.timeout_s, 120.0)
    findings, checked, not_checked = [], list(report.checked), list(report.not_checked)
    for tool in sanitizer.TOOLS:
        attempt.progress(f"{tool} on case {case.name}")
        try:
            finding = sanitizer.run_tool(
                tool, exe, lambda child, ws: _run_once(puzzle, case, funcs[case.key], path, child, ws, budget)
            )
        except (ChildGone, Violation) as err:
            not_checked.append(f"{tool} on case {case.name}: the tool's run did not finish ({err})")
            continue
        findings.append(finding)
        words = f"{finding.errors} errors" if finding.errors else "no errors"
        checked.append(f"{tool} on case {case.name} ({args_text(case.args)}): {words}")
    report = dataclasses.replace(report, sanitizer=findings, checked=checked, not_checked=not_checked)
    bad = next((f for f in findings if f.errors), None)
    if bad is None or not report.passed:
        return report
    failure: FailureKind = "race" if bad.tool == "racecheck" else "out-of-bounds"
    summary = f"{bad.tool} on case {case.name} ({args_text(case.args)}): " + "; ".join(bad.first[:3])
    return dataclasses.replace(report, passed=False, failure=failure, summary=summary, perf=None)
