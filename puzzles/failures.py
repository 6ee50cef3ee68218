"""Reports of a check that ends without a verdict on the kernel: a helper that exited or hung, a
forged message, content that is not what was built, a file the sandbox did not seal.

Each names the real reason in the learner's words, so a crash reads as a crash and never as wrong
values; none of them can pass.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tilescope.puzzles.children import ChildGone
from tilescope.puzzles.manifest import ContentChanged
from tilescope.puzzles.replies import Violation
from tilescope.puzzles.report import CaseResult, ChildExit, FailureKind, Report
from tilescope.puzzles.seal import NOT_SEALED


def exit_report(base: dict[str, Any], gone: ChildGone, doing: str, cases: list[CaseResult]) -> Report:
    """A helper exited, was killed or ran past its limit ``doing`` something: its status and last words."""
    failure: FailureKind = "timeout" if gone.timed_out else "child-exit"
    who = "The loader (it runs your file's Python)" if gone.role == "loader" else "The kernel process"
    summary = f"{who} {gone.reason} while {doing}."
    if gone.stderr:
        summary += " Its last stderr line: " + gone.stderr[-1][:300]
    exit_info = ChildExit(gone.role, gone.status, gone.signal_name, gone.timed_out, gone.stderr)
    return Report(**base, passed=False, failure=failure, summary=summary, cases=cases, exit=exit_info)


def void(base: dict[str, Any], who: str, violation: Violation, cases: list[CaseResult]) -> Report:
    """A child's channel carried what nothing asked for: only the code it ran could have written it."""
    summary = (
        f"The {who}'s private channel carried {violation}. Only code that process ran could have written it; "
        "nothing sent there can pass a check, and this check is void."
    )
    return Report(**base, passed=False, failure="protocol-violation", summary=summary, cases=cases)


def refused(base: dict[str, Any], changed: ContentChanged, when: str) -> Report:
    """No grade: the puzzle's content is not what was built, so no verdict against it would mean anything."""
    summary = (
        f"The puzzle's installed content differs from its build-time manifest {when} ({changed}); "
        "the check is refused. Reinstall Tilescope to restore it."
    )
    return Report(**base, passed=False, failure="content-modified", summary=summary)


def unsealed(report: Report, sealed: bool) -> Report:
    """The report, saying so when the file's code ran without the file sandbox (no Landlock here)."""
    if sealed:
        return report
    return dataclasses.replace(report, not_checked=[*report.not_checked, NOT_SEALED])
