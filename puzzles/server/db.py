"""The server's tables, and opening a database at its newest schema (Alembic migrations run on open).

Times are seconds since the epoch (floats), the same in SQLite and PostgreSQL, so queue waits are a
subtraction. A verdict's primary key is its submission's id: a submission has at most one verdict,
whatever the cluster did, and the leaderboard, read from verdicts, counts it once.

Transactions that read and then write (a rate counted, then a row added) are serialised by the
database, never by this process: on SQLite they begin ``IMMEDIATE`` (the write lock first, so no
other writer runs between the count and the insert), on PostgreSQL they lock the learner's row.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

MIGRATIONS = Path(__file__).parent / "migrations"

_MIGRATING = threading.Lock()
"""Alembic's ``context`` is one module-wide proxy: two migrations in one process must take turns."""

QUEUED, GRADING, DONE = "queued", "grading", "done"
MAX_ID = 2**31 - 1
"""The largest id a submission can have (the column is a 32-bit integer on PostgreSQL)."""
"""A submission's states, in order: waiting, held by one grading slot, answered by its one verdict."""

IMMEDIATE = "tilescope_immediate"
"""The execution option that makes a transaction on SQLite begin ``IMMEDIATE``: it takes the write lock before
its first read, so what it counted is still true when it writes."""

_MIGRATION_LOCK = 0x7469_6C65_7363_6F70
"""The PostgreSQL advisory lock key that serialises migrations (``tilescop`` in ASCII), whichever process runs them."""


class Base(DeclarativeBase):
    pass


class Learner(Base):
    __tablename__ = "learners"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    """SHA-256 of the token; the token itself is printed once, to the teacher, and never stored."""
    created_at: Mapped[float] = mapped_column(Float)
    token_expires_at: Mapped[float] = mapped_column(Float, server_default=text("0"))
    """When the token stops working; revoking a learner sets it to the moment of revocation. A row the
    migration found without one (0) is expired: the teacher issues a new token."""


class Submission(Base):
    __tablename__ = "submissions"
    __table_args__ = (
        UniqueConstraint("learner_id", "client_key", name="uq_submissions_client_key"),
        Index(
            "uq_submissions_one_grading",
            "learner_id",
            unique=True,
            sqlite_where=text("state = 'grading'"),
            postgresql_where=text("state = 'grading'"),
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    learner_id: Mapped[int] = mapped_column(ForeignKey("learners.id"), index=True)
    puzzle: Mapped[str] = mapped_column(String(16), index=True)
    filename: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(Text)
    client_key: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The submitting client's own name for it: the same key sent again (a retry) is the same submission."""
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    state: Mapped[str] = mapped_column(String(16), index=True, default=QUEUED)
    created_at: Mapped[float] = mapped_column(Float, index=True)
    first_claimed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    claimed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    claimed_by: Mapped[str | None] = mapped_column(String(120), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    """How many times a slot took it; more than one means a node or a server was lost while grading it."""


class Verdict(Base):
    __tablename__ = "verdicts"

    submission_id: Mapped[int] = mapped_column(ForeignKey("submissions.id"), primary_key=True)
    passed: Mapped[bool] = mapped_column(Boolean)
    failure: Mapped[str | None] = mapped_column(String(32), nullable=True)
    summary: Mapped[str] = mapped_column(Text)
    device: Mapped[str] = mapped_column(String(16))
    """``cuda`` or ``cpu`` (the tile interpreter), as the grader's report says."""
    time_us: Mapped[float | None] = mapped_column(Float, nullable=True)
    torch_us: Mapped[float | None] = mapped_column(Float, nullable=True)
    """The puzzle's torch baseline, timed in the same run on the same GPU."""
    stars: Mapped[int] = mapped_column(Integer, default=0)
    report: Mapped[str] = mapped_column(Text)
    """The grader's whole ``Report``, as JSON."""
    node: Mapped[str | None] = mapped_column(String(120), nullable=True)
    grading_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    reference_copy: Mapped[bool] = mapped_column(Boolean, default=False)
    """The file is the puzzle's reference solution up to layout and comments: passing with it is not solving,
    so it is kept off the leaderboard (as ``puzzles check`` does not mark the puzzle solved)."""
    reused_from: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """Set when a byte-identical file's CPU verdict was copied instead of grading it again."""
    graded_at: Mapped[float] = mapped_column(Float)


class ServerLease(Base):
    """The one server that may grade from this database: its name and until when it holds the lease (it renews
    it while it runs; a server killed outright stops renewing, and the lease lapses)."""

    __tablename__ = "server_lease"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(120), nullable=True)
    """``host:pid`` of the holder; None once it stopped cleanly."""
    expires_at: Mapped[float] = mapped_column(Float)


BUSY_S = 30.0
"""How long a SQLite connection waits for a lock another process holds (its busy timeout)."""


def engine_for(url: str) -> Engine:
    """An engine for ``url``; SQLite waits for a busy lock and runs in WAL mode, so readers never block the queue."""
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    _create_private(url)
    engine = create_engine(url, connect_args={"timeout": BUSY_S})

    @event.listens_for(engine, "connect")
    def _pragmas(connection: sqlite3.Connection, _record: object) -> None:
        connection.isolation_level = None  # transactions begin as ``_begin`` says, not when pysqlite guesses
        cursor = connection.cursor()
        _write_ahead_log(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE" if connection.get_execution_options().get(IMMEDIATE) else "BEGIN")

    return engine


def _write_ahead_log(cursor: sqlite3.Cursor) -> None:
    """Put the database in WAL mode, once per file (the mode is kept in the file). Switching needs the database to
    itself, and SQLite answers "database is locked" at once, without its busy timeout, while another process
    opening the same new database holds it: such a switch is tried again for up to the engine's ``BUSY_S``."""
    deadline = time.monotonic() + BUSY_S
    while cursor.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _create_private(url: str) -> None:
    """Create a SQLite database file readable by its owner only (0600) before SQLite creates it with the umask's
    mode; its ``-wal`` and ``-shm`` files take the same mode. It holds every learner's code and token hashes."""
    database = make_url(url).database
    if not database or database == ":memory:" or database.startswith("file:"):
        return
    path = Path(database)
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))


def migrate(engine: Engine) -> None:
    """Bring the database to the newest schema the package ships (a no-op when it is there already)."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with _MIGRATING, engine.execution_options(**{IMMEDIATE: True}).begin() as connection:
        _lock_migrations(connection)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


def _lock_migrations(connection: Connection) -> None:
    """Hold off every other process's migration until this transaction ends: a server starting while the teacher
    adds a learner would otherwise run the same ``CREATE TABLE`` twice. SQLite's ``BEGIN IMMEDIATE`` (the
    engine's ``begin`` hook) already holds the database's write lock; PostgreSQL takes an advisory lock."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
