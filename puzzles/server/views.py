"""What the page and the API show of the database's rows: plain dicts, drawn by the templates or sent as JSON.

A report is drawn as the shell draws it (``render.report_lines``), so the page and ``submit`` say the
same words; a CPU verdict says it came from the tile interpreter, a copied one only that the same bytes
were graded before: that file may be another learner's, so neither its id nor its name is shown.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tilescope.puzzles.server.db import Submission, Verdict


def report_lines(verdict: Verdict, title: str) -> list[str]:
    from tilescope.core.model import from_json
    from tilescope.puzzles.render import report_lines as lines
    from tilescope.puzzles.report import Report

    try:
        report = from_json(Report, json.loads(verdict.report))
    except (TypeError, ValueError, KeyError):
        return [verdict.summary]
    return lines(report, title)


def device_words(device: str) -> str:
    return {"cuda": "GPU", "cpu": "CPU (tile interpreter, no timing)"}.get(device, "not graded")


def verdict_json(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {
        "passed": verdict.passed,
        "failure": verdict.failure,
        "summary": verdict.summary,
        "device": verdict.device,
        "graded_on": device_words(verdict.device),
        "time_us": verdict.time_us,
        "torch_us": verdict.torch_us,
        "stars": verdict.stars,
        "node": verdict.node,
        "reused": verdict.reused_from is not None,
        "reference_copy": verdict.reference_copy,
        "report": json.loads(verdict.report),
    }


def submission_json(sub: Submission, verdict: Verdict | None, ahead: int | None = None) -> dict[str, Any]:
    return {
        "id": sub.id,
        "puzzle": sub.puzzle,
        "filename": sub.filename,
        "state": sub.state,
        "created_at": sub.created_at,
        "attempts": sub.attempts,
        "ahead": ahead,
        "verdict": verdict_json(verdict),
    }


REUSED_WORDS = "a byte-identical file was graded before; this is its verdict"
"""What a copied verdict says, on the page and in ``puzzles submit``."""


def waited(sub: Submission, now: float | None = None) -> str:
    seconds = (now or time.time()) - sub.created_at
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
