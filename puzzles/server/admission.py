"""Who may submit, and what gets into the queue: learners' tokens, and each submission's size, rate and
grading budget.

A learner has a rate a minute and a budget of grading seconds an hour, both counted in the transaction
that queues the file while it holds the learner (``_hold``): a file that loops forever costs its
learner's budget, one slot at a time, and never the class's slots. A file, name or key a database
could not store is refused here with a 400, never deep in the driver with a 500.
"""

from __future__ import annotations

import hashlib
import secrets
import time

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from tilescope.puzzles.server.db import QUEUED, Learner, Submission, Verdict
from tilescope.puzzles.server.transactions import Database, rowcount

MAX_BYTES = 64 * 1024
PER_MINUTE = 6
BUDGET_S = 600.0
"""Seconds of grading a learner may use an hour: ten files that each run out the grader's 60 s."""
TOKEN_DAYS = 120.0
"""How long a new token works: about a term."""


class LimitError(Exception):
    """A submission refused before it was queued; ``status`` is the HTTP status that says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def token_hash(token: str) -> str:
    """What the database keeps of a token: its hash, so that a copy of the database logs no one in."""
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


class Admission(Database):
    """Learners and the queue's door; ``Store`` sets the limits."""

    max_bytes: int
    per_minute: int
    budget_s: float

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
        if self.postgresql:
            s.execute(select(Learner.id).where(Learner.id == learner.id).with_for_update())
