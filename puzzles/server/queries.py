"""What the class server's pages read: the queue, a learner's own submissions, the leaderboard, the counts.

Reads only, each in one session. A learner reads only their own submissions and verdicts; the
leaderboard names learners, never their files.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from tilescope.puzzles.server.db import DONE, GRADING, QUEUED, Learner, Submission, Verdict
from tilescope.puzzles.server.transactions import Database


class Queries(Database):
    """The store's reads."""

    def queue(self) -> list[tuple[Submission, str]]:
        """Submissions not done yet, oldest first, with their learner's name."""
        with self.session() as s:
            rows = s.execute(
                select(Submission, Learner.name)
                .join(Learner, Learner.id == Submission.learner_id)
                .where(Submission.state != DONE)
                .order_by(Submission.id)
            ).all()
        return [(sub, name) for sub, name in rows]

    def ahead_of(self, submission: int) -> int:
        with self.session() as s:
            return int(
                s.scalar(
                    select(func.count())
                    .select_from(Submission)
                    .where(Submission.state != DONE, Submission.id < submission)
                )
                or 0
            )

    def own(self, learner: Learner, limit: int = 100) -> list[tuple[Submission, Verdict | None]]:
        """A learner's submissions, newest first, with their verdicts."""
        with self.session() as s:
            rows = s.execute(
                select(Submission, Verdict)
                .outerjoin(Verdict, Verdict.submission_id == Submission.id)
                .where(Submission.learner_id == learner.id)
                .order_by(Submission.id.desc())
                .limit(limit)
            ).all()
        return [(sub, verdict) for sub, verdict in rows]

    def submission(self, learner: Learner, submission: int) -> tuple[Submission, Verdict | None] | None:
        """One of the learner's own submissions; None for another learner's (which they must not see)."""
        with self.session() as s:
            row = s.execute(
                select(Submission, Verdict)
                .outerjoin(Verdict, Verdict.submission_id == Submission.id)
                .where(Submission.id == submission, Submission.learner_id == learner.id)
            ).first()
        return None if row is None else (row[0], row[1])

    def leaderboard(self, puzzle: str) -> list[dict[str, Any]]:
        """Per learner, their best passing verdict for ``puzzle``: the fastest timed one, else the first pass
        (CPU verdicts carry no time); fastest first, untimed passes after, in the order they passed. A copy of
        the reference solution is no one's pass."""
        with self.session() as s:
            rows = s.execute(
                select(Verdict, Submission.learner_id, Learner.name)
                .join(Submission, Submission.id == Verdict.submission_id)
                .join(Learner, Learner.id == Submission.learner_id)
                .where(Submission.puzzle == puzzle, Verdict.passed.is_(True), Verdict.reference_copy.is_(False))
                .order_by(Verdict.submission_id)
            ).all()
        best: dict[int, tuple[Verdict, str, int]] = {}
        for verdict, learner_id, name in rows:
            held = best.get(learner_id)
            if held is None:
                best[learner_id] = (verdict, name, 1)
            else:
                best[learner_id] = (verdict if _faster(verdict, held[0]) else held[0], name, held[2] + 1)
        entries = [
            {
                "learner": name,
                "submission": v.submission_id,
                "time_us": v.time_us,
                "torch_us": v.torch_us,
                "torch_ratio": v.time_us / v.torch_us if v.time_us and v.torch_us else None,
                "stars": v.stars,
                "device": v.device,
                "passes": count,
            }
            for v, name, count in best.values()
        ]
        entries.sort(key=lambda e: (e["time_us"] is None, e["time_us"] or 0.0, e["submission"]))
        return entries

    def puzzles_with_passes(self) -> list[str]:
        with self.session() as s:
            rows = s.scalars(
                select(Submission.puzzle)
                .join(Verdict, Verdict.submission_id == Submission.id)
                .where(Verdict.passed.is_(True), Verdict.reference_copy.is_(False))
                .distinct()
            ).all()
        return sorted(rows)

    def counts(self) -> dict[str, int]:
        """Submissions by state, and verdicts: what the page's header and the load benchmark read."""
        with self.session() as s:
            states = dict(s.execute(select(Submission.state, func.count()).group_by(Submission.state)).all())
            verdicts = s.scalar(select(func.count()).select_from(Verdict)) or 0
        return {QUEUED: 0, GRADING: 0, DONE: 0, **{k: int(v) for k, v in states.items()}, "verdicts": int(verdicts)}


def _faster(new: Verdict, held: Verdict) -> bool:
    if new.time_us is None:
        return False
    return held.time_us is None or new.time_us < held.time_us
