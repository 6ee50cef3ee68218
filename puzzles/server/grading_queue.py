"""The grading queue: slots claim submissions and write their verdicts, each step one transaction.

A slot claims the oldest queued submission with one ``UPDATE ... RETURNING`` guarded by its state
(and ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so two slots never hold the same one; a learner has at
most one submission in grading (a unique index on the learner's grading rows, so two slots claiming at
once cannot both win). A verdict is written only while its submission is not done yet, in the same
transaction that marks it done, so a submission graded twice (a node lost after grading, a server
restarted) still has one verdict. A byte-identical file's verdict may stand for a new one, scrubbed
of every name that would tell another learner's file.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, exists, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased
from tilescope.puzzles.server.db import DONE, GRADING, QUEUED, Submission, Verdict
from tilescope.puzzles.server.slot import PRIVATE_PREFIX, safe_name
from tilescope.puzzles.server.transactions import Database, rowcount

REGRADED_FAILURES = ("child-exit", "out-of-memory")
"""Failures that say as much about the node as about the file: a copy of the file is graded again."""

_COPYABLE = (
    (Verdict.failure == "timeout")
    | ((Verdict.device == "cpu") & (Verdict.failure.is_(None) | Verdict.failure.not_in(REGRADED_FAILURES))),
)
"""A verdict that can stand for a byte-identical file's: a timeout (the same file loops the same way again, and
grading it again would hold a slot for the whole limit once more), or any CPU verdict (untimed) but one the
node may explain."""

_PRIVATE_FOLDER = re.compile(r"[^\s\"'()<>]*" + re.escape(PRIVATE_PREFIX) + r"[^/\\\s]*[/\\]\d+[/\\]")
"""A grading slot's private folder for one submission, as a traceback in a report may name it (with its id)."""


@dataclass(frozen=True)
class Job:
    """A claimed submission, as a grading slot needs it."""

    id: int
    puzzle: str
    filename: str
    source: str
    sha256: str
    attempts: int


@dataclass(frozen=True)
class Graded:
    """What a grading produced, to be written as the submission's verdict."""

    report: dict[str, Any]
    """The grader's ``Report`` as JSON."""
    node: str | None = None
    grading_s: float | None = None
    reused_from: int | None = None
    reference_copy: bool = False


class GradingQueue(Database):
    """Claiming, answering and requeueing submissions."""

    def claim(self, worker: str, copies_only: bool = False) -> Job | None:
        """Take the oldest queued submission, of a learner who has none in grading, for ``worker``; None when there
        is none. ``copies_only``: the oldest whose verdict can be copied (``reusable``), which need not wait
        behind files to grade."""
        for _ in range(5):
            try:
                return self._claim(worker, copies_only)
            except IntegrityError:  # another slot took this learner's file at the same moment: look again
                continue
        return None

    def _claim(self, worker: str, copies_only: bool) -> Job | None:
        now = time.time()
        busy = aliased(Submission)
        oldest = (
            select(Submission.id)
            .where(
                Submission.state == QUEUED,
                ~exists(select(busy.id).where(busy.learner_id == Submission.learner_id, busy.state == GRADING)),
            )
            .order_by(Submission.id)
            .limit(1)
        )
        if copies_only:
            graded = aliased(Submission)
            oldest = oldest.where(
                exists(
                    select(Verdict.submission_id)
                    .join(graded, graded.id == Verdict.submission_id)
                    .where(graded.puzzle == Submission.puzzle, graded.sha256 == Submission.sha256, *_COPYABLE)
                )
            )
        if self.postgresql:
            oldest = oldest.with_for_update(skip_locked=True)
        statement = (
            update(Submission)
            .where(Submission.id == oldest.scalar_subquery(), Submission.state == QUEUED)
            .values(
                state=GRADING,
                claimed_at=now,
                first_claimed_at=func.coalesce(Submission.first_claimed_at, now),
                claimed_by=worker,
                attempts=Submission.attempts + 1,
            )
            .returning(
                Submission.id,
                Submission.puzzle,
                Submission.filename,
                Submission.source,
                Submission.sha256,
                Submission.attempts,
            )
            .execution_options(synchronize_session=False)
        )
        with self.writing() as s, s.begin():
            row = s.execute(statement).first()
        return None if row is None else Job(*row)

    def requeue(self, submission: int) -> bool:
        """Put a submission whose grading was lost back in the queue (False when it is done already)."""
        return bool(self._requeue(Submission.id == submission))

    def requeue_abandoned(self) -> int:
        """At a server's start: every submission the previous server held in grading goes back to the queue."""
        return self._requeue()

    def _requeue(self, *which: ColumnElement[bool]) -> int:
        """Those of ``which`` submissions still in grading back to the queue; how many went."""
        with self.writing() as s, s.begin():
            result = s.execute(
                update(Submission)
                .where(Submission.state == GRADING, *which)
                .values(state=QUEUED, claimed_by=None)
                .execution_options(synchronize_session=False)
            )
        return rowcount(result)

    def reusable(self, job: Job) -> Verdict | None:
        """A verdict already given to a byte-identical file for the same puzzle, if one can stand for this one (a
        CPU verdict, which has no timings, or a timeout; one the node may explain is never copied)."""
        with self.session() as s:
            return s.scalar(
                select(Verdict)
                .join(Submission, Submission.id == Verdict.submission_id)
                .where(
                    Submission.puzzle == job.puzzle,
                    Submission.sha256 == job.sha256,
                    Submission.id != job.id,
                    *_COPYABLE,
                )
                .order_by(Verdict.submission_id)
                .limit(1)
            )

    def copy_verdict(self, job: Job) -> bool:
        """Answer ``job`` with a byte-identical file's verdict, if there is one (else it stays claimed). The copy
        names neither that file's submission nor its name or the folder it was graded in, which may be another
        learner's: it says only that the same bytes were graded before."""
        same = self.reusable(job)
        if same is None:
            return False
        with self.session() as s:
            original = s.scalar(select(Submission.filename).where(Submission.id == same.submission_id)) or ""
        report = _renamed(json.loads(same.report), [original, safe_name(original)], job.filename)
        report["path"] = job.filename
        first = same.reused_from or same.submission_id
        self.finish(job.id, Graded(report, same.node, 0.0, reused_from=first, reference_copy=same.reference_copy))
        return True

    def finish(self, submission: int, graded: Graded) -> bool:
        """Write the submission's verdict and mark it done; False (and nothing written) when it has one already."""
        report = graded.report
        perf = report.get("perf") or {}
        passed = bool(report.get("passed"))
        timed = passed and not perf.get("error")
        with self.writing() as s, s.begin():
            marked = s.execute(
                update(Submission)
                .where(Submission.id == submission, Submission.state != DONE)
                .values(state=DONE)
                .execution_options(synchronize_session=False)
            )
            if not rowcount(marked):
                return False
            s.add(
                Verdict(
                    submission_id=submission,
                    passed=passed,
                    failure=report.get("failure"),
                    summary=str(report.get("summary", "")),
                    device=str(report.get("device", "?")),
                    time_us=perf.get("time_us") if timed else None,
                    torch_us=perf.get("torch_us") if timed else None,
                    stars=int(perf.get("stars") or 0) if timed else 0,
                    report=json.dumps(report),
                    node=graded.node,
                    grading_s=graded.grading_s,
                    reused_from=graded.reused_from,
                    reference_copy=graded.reference_copy,
                    graded_at=time.time(),
                )
            )
        return True


def _renamed(value: Any, names: list[str], new: str) -> Any:
    """``value`` (a report as JSON) with every string's mention of ``names`` (a file's name as sent and as the slot
    saved it) made ``new``, and a slot's private folder dropped: a copied report must not name another's file."""
    if isinstance(value, dict):
        return {k: _renamed(v, names, new) for k, v in cast(dict[str, Any], value).items()}
    if isinstance(value, list):
        return [_renamed(v, names, new) for v in cast(list[Any], value)]
    if not isinstance(value, str):
        return value
    value = _PRIVATE_FOLDER.sub("", value)
    for name in sorted({n for n in names if len(n) >= 3}, key=len, reverse=True):
        value = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", lambda _: new, value)
    return value
