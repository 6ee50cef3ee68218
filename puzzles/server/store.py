"""The queue and its verdicts, as the server's database holds them; every operation is one transaction.

A slot claims the oldest queued submission with one ``UPDATE ... RETURNING`` guarded by its state
(and ``FOR UPDATE SKIP LOCKED`` on PostgreSQL), so two slots never hold the same one; a verdict is
written only while its submission is not done yet, in the same transaction that marks it done, so
a submission graded twice (a node lost after grading, a server restarted) still has one verdict.

A learner has at most one submission in grading (a unique index on the learner's grading rows, so two
slots claiming at once cannot both win), a rate a minute and a budget of grading seconds an hour, both
counted in the transaction that queues the file while it holds the learner (``_hold``): a file that
loops forever costs its learner's budget, one slot at a time, and never the class's slots.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, exists, func, select, update
from sqlalchemy.engine import CursorResult, Engine, Result
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased
from tilescope.puzzles.server.db import (
    DONE,
    GRADING,
    IMMEDIATE,
    QUEUED,
    Learner,
    Submission,
    Verdict,
    engine_for,
    migrate,
)
from tilescope.puzzles.server.slot import PRIVATE_PREFIX, safe_name

MAX_BYTES = 64 * 1024
PER_MINUTE = 6
BUDGET_S = 600.0
"""Seconds of grading a learner may use an hour: ten files that each run out the grader's 60 s."""
TOKEN_DAYS = 120.0
"""How long a new token works: about a term."""
REGRADED_FAILURES = ("child-exit", "out-of-memory")
"""Failures that say as much about the node as about the file: a copy of the file is graded again."""
MAX_ID = 2**31 - 1
"""The largest id a submission can have (the column is a 32-bit integer on PostgreSQL)."""

_COPYABLE = (
    (Verdict.failure == "timeout")
    | ((Verdict.device == "cpu") & (Verdict.failure.is_(None) | Verdict.failure.not_in(REGRADED_FAILURES))),
)
"""A verdict that can stand for a byte-identical file's: a timeout (the same file loops the same way again, and
grading it again would hold a slot for the whole limit once more), or any CPU verdict (untimed) but one the
node may explain."""

_PRIVATE_FOLDER = re.compile(r"[^\s\"'()<>]*" + re.escape(PRIVATE_PREFIX) + r"[^/\\\s]*[/\\]\d+[/\\]")
"""A grading slot's private folder for one submission, as a traceback in a report may name it (with its id)."""


class LimitError(Exception):
    """A submission refused before it was queued; ``status`` is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE changed: ``Session.execute`` types every result as ``Result``, though an UPDATE's
    is a ``CursorResult``, the one with ``rowcount``."""
    return cast(CursorResult[Any], result).rowcount


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


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def checked_text(what: str, value: str) -> str:
    """``value`` if a database can store it; ``LimitError`` (400) naming ``what`` otherwise. A lone surrogate has no
    UTF-8, and PostgreSQL refuses NUL in text: either would otherwise fail deep in the driver, as a 500."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise LimitError(400, f"the {what} is not text: character {err.start} is a lone surrogate") from None
    if "\0" in value:
        raise LimitError(400, f"the {what} is not text: character {value.index(chr(0))} is NUL")
    return value


class Store:
    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = MAX_BYTES,
        per_minute: int = PER_MINUTE,
        budget_s: float = BUDGET_S,
    ) -> None:
        self.url = url
        self.engine: Engine = engine_for(url)
        self.max_bytes = max_bytes
        self.per_minute = per_minute
        self.budget_s = budget_s
        migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def writing(self) -> Session:
        """A session for a transaction that writes: on SQLite it holds the write lock from its first statement, so
        a read it writes after (a count, a row found) cannot go stale, nor fail as a stale snapshot."""
        return Session(self.engine, expire_on_commit=False, execution_options={IMMEDIATE: True})

    # Learners

    def add_learner(self, name: str, valid_days: float = TOKEN_DAYS) -> str:
        """A new token for ``name``, working ``valid_days`` (a learner who exists gets a new one, and the old one
        stops working)."""
        name = checked_text("name", name.strip())
        if not name or len(name) > 64:
            raise ValueError("a learner's name is 1 to 64 characters")
        token = secrets.token_urlsafe(32)
        now = time.time()
        expires = now + valid_days * 86400.0
        with self.writing() as s, s.begin():
            learner = s.scalar(select(Learner).where(Learner.name == name))
            if learner is None:
                s.add(Learner(name=name, token_hash=token_hash(token), created_at=now, token_expires_at=expires))
            else:
                learner.token_hash = token_hash(token)
                learner.token_expires_at = expires
        return token

    def revoke_learner(self, name: str) -> bool:
        """End ``name``'s token now (False when there is no such learner); their submissions and verdicts stay."""
        with self.writing() as s, s.begin():
            result = s.execute(update(Learner).where(Learner.name == name.strip()).values(token_expires_at=time.time()))
        return bool(rowcount(result))

    def learner(self, token: str | None, now: float | None = None) -> Learner | None:
        """The learner whose token this is, while it has not expired (nor been revoked)."""
        if not token:
            return None
        now = time.time() if now is None else now
        with self.session() as s:
            return s.scalar(
                select(Learner).where(Learner.token_hash == token_hash(token), Learner.token_expires_at > now)
            )

    # Submitting

    def submit(
        self,
        learner: Learner,
        puzzle: str,
        filename: str,
        source: str,
        now: float | None = None,
        client_key: str | None = None,
    ) -> int:
        """Queue a submission; ``LimitError`` when it is too large or the learner is over their rate. A
        ``client_key`` the learner sent before (a retry after a lost answer) gives that submission's id."""
        now = time.time() if now is None else now
        checked_text("file name", filename)
        size = len(checked_text("file", source).encode())
        if size > self.max_bytes:
            raise LimitError(413, f"the file is {size} bytes; this server takes at most {self.max_bytes}")
        if client_key is not None:
            if len(checked_text("client key", client_key)) > 64:
                raise LimitError(400, "a client key is at most 64 characters")
            known = self._by_key(learner, client_key)
            if known is not None:
                return known
        try:
            return self._insert(learner, puzzle, filename, source, now, client_key)
        except IntegrityError:  # the same key, sent twice at once: the other one was stored
            known = self._by_key(learner, client_key) if client_key is not None else None
            if known is None:
                raise
            return known

    def _by_key(self, learner: Learner, client_key: str) -> int | None:
        with self.session() as s:
            return s.scalar(
                select(Submission.id).where(Submission.learner_id == learner.id, Submission.client_key == client_key)
            )

    def _insert(
        self, learner: Learner, puzzle: str, filename: str, source: str, now: float, client_key: str | None
    ) -> int:
        with self.writing() as s, s.begin():
            self._hold(s, learner)
            recent = s.scalar(
                select(func.count())
                .select_from(Submission)
                .where(Submission.learner_id == learner.id, Submission.created_at > now - 60.0)
            )
            if (recent or 0) >= self.per_minute:
                raise LimitError(429, f"at most {self.per_minute} submissions a minute; try again shortly")
            used = s.scalar(
                select(func.coalesce(func.sum(Verdict.grading_s), 0.0))
                .join(Submission, Submission.id == Verdict.submission_id)
                .where(Submission.learner_id == learner.id, Verdict.graded_at > now - 3600.0)
            )
            if float(used or 0.0) >= self.budget_s:
                raise LimitError(
                    429,
                    f"your files took {float(used or 0.0):.0f} s of grading in the last hour, the most this server "
                    f"gives a learner ({self.budget_s:.0f} s); try again later",
                )
            row = Submission(
                learner_id=learner.id,
                puzzle=puzzle,
                filename=filename[-200:],
                source=source,
                client_key=client_key,
                sha256=hashlib.sha256(source.encode()).hexdigest(),
                state=QUEUED,
                created_at=now,
                attempts=0,
            )
            s.add(row)
            s.flush()
            return row.id

    def _hold(self, s: Session, learner: Learner) -> None:
        """Hold ``learner`` until the transaction ends, so that their counts cannot change meanwhile: PostgreSQL
        locks their row; on SQLite the transaction holds the database's write lock already (``writing``)."""
        if self.engine.dialect.name == "postgresql":
            s.execute(select(Learner.id).where(Learner.id == learner.id).with_for_update())

    # Grading

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
        if self.engine.dialect.name == "postgresql":
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

    # Reading

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


def _faster(new: Verdict, held: Verdict) -> bool:
    if new.time_us is None:
        return False
    return held.time_us is None or new.time_us < held.time_us
