"""The class server's database as transactions: a session to read, one that writes, and what both need.

Every operation of the store is one transaction. One that reads and then writes (a rate counted, then
a row added) is serialised by the database, never by this process: on SQLite a writing transaction
begins ``IMMEDIATE`` (``writing``), on PostgreSQL it locks the row it counts for.
"""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy.engine import CursorResult, Engine, Result
from sqlalchemy.orm import Session
from tilescope.puzzles.server.db import IMMEDIATE, engine_for, migrate


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE changed: ``Session.execute`` types every result as ``Result``, though an UPDATE's
    is a ``CursorResult``, the one with ``rowcount``."""
    return cast(CursorResult[Any], result).rowcount


class Database:
    """A database at its newest schema (migrated on open), and its transactions."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine: Engine = engine_for(url)
        migrate(self.engine)

    @property
    def postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"

    def close(self) -> None:
        self.engine.dispose()

    def session(self) -> Session:
        return Session(self.engine, expire_on_commit=False)

    def writing(self) -> Session:
        """A session for a transaction that writes: on SQLite it holds the write lock from its first statement, so
        a read it writes after (a count, a row found) cannot go stale, nor fail as a stale snapshot."""
        return Session(self.engine, expire_on_commit=False, execution_options={IMMEDIATE: True})
