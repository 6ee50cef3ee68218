"""The class server's store: its database, and every operation on it as one transaction.

``Store`` is one object for the server's parts to share, made of three rooms: ``admission`` (learners'
tokens; a submission's size, rate and budget, counted where it is queued), ``grading_queue`` (slots
claim submissions and write verdicts, each at most once) and ``queries`` (what the pages read), over
``transactions`` (the engine and its two kinds of session).
"""

from __future__ import annotations

from tilescope.puzzles.server.admission import BUDGET_S, MAX_BYTES, PER_MINUTE, Admission
from tilescope.puzzles.server.grading_queue import GradingQueue
from tilescope.puzzles.server.queries import Queries


class Store(Admission, GradingQueue, Queries):
    def __init__(
        self,
        url: str,
        *,
        max_bytes: int = MAX_BYTES,
        per_minute: int = PER_MINUTE,
        budget_s: float = BUDGET_S,
    ) -> None:
        super().__init__(url)
        self.max_bytes = max_bytes
        self.per_minute = per_minute
        self.budget_s = budget_s
