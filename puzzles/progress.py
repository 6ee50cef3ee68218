"""The learner's progress in SQLite: attempts, results, best performance, hints and reveals.

The database runs in WAL mode with full synchronisation and every change is one transaction,
so a crash or a kill in the middle of a write leaves the last committed state intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import platformdirs
from tilescope.core.model import to_json
from tilescope.puzzles.report import Report

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    puzzle TEXT NOT NULL,
    at REAL NOT NULL,
    path TEXT NOT NULL,
    device TEXT NOT NULL,
    passed INTEGER NOT NULL,
    failure TEXT,
    summary TEXT NOT NULL,
    time_us REAL,
    percent REAL,
    stars INTEGER NOT NULL DEFAULT 0,
    report TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_puzzle ON attempts (puzzle);
CREATE TABLE IF NOT EXISTS hints (puzzle TEXT PRIMARY KEY, shown INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS reveals (puzzle TEXT PRIMARY KEY, at REAL NOT NULL);
"""


def data_dir() -> Path:
    """Where progress and learner files live; ``TILESCOPE_DATA_DIR`` overrides the platform default."""
    override = os.environ.get("TILESCOPE_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir("tilescope"))


@dataclass(frozen=True)
class PuzzleStatus:
    puzzle: str
    attempts: int
    solved: bool
    best_stars: int
    best_time_us: float | None
    best_percent: float | None
    hints_shown: int
    revealed: bool
    last_summary: str | None
    last_passed: bool | None


class ProgressStore:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "progress.sqlite3"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        with self._tx():
            for statement in filter(str.strip, SCHEMA.split(";")):
                self._db.execute(statement)

    def _tx(self) -> _Transaction:
        return _Transaction(self._db)

    def close(self) -> None:
        self._db.close()

    def record(self, report: Report, counts: bool = True) -> int:
        """Store one check's result; returns the attempt's id. An attempt that does not ``count`` (the
        reference solution, checked) is kept as an attempt but never marks the puzzle solved."""
        perf = report.perf
        passed = report.passed and counts
        with self._tx():
            cur = self._db.execute(
                "INSERT INTO attempts (puzzle, at, path, device, passed, failure, summary, time_us, percent, stars,"
                " report) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report.puzzle,
                    time.time(),
                    report.path,
                    report.device,
                    int(passed),
                    report.failure,
                    report.summary,
                    perf.time_us if perf and passed else None,
                    perf.percent if perf and passed else None,
                    report.stars if passed else 0,
                    json.dumps(to_json(report)),
                ),
            )
        return int(cur.lastrowid or 0)

    def unlock_hint(self, puzzle: str, available: int) -> int:
        """Show one more hint (up to ``available``); returns how many are now shown."""
        with self._tx():
            shown = min(self.hints_shown(puzzle) + 1, available)
            self._db.execute(
                "INSERT INTO hints (puzzle, shown) VALUES (?, ?) ON CONFLICT (puzzle) DO UPDATE SET shown = ?",
                (puzzle, shown, shown),
            )
        return shown

    def hints_shown(self, puzzle: str) -> int:
        row = self._db.execute("SELECT shown FROM hints WHERE puzzle = ?", (puzzle,)).fetchone()
        return int(row[0]) if row else 0

    def mark_revealed(self, puzzle: str) -> None:
        with self._tx():
            self._db.execute("INSERT OR IGNORE INTO reveals (puzzle, at) VALUES (?, ?)", (puzzle, time.time()))

    def last_report(self, puzzle: str) -> dict | None:
        row = self._db.execute(
            "SELECT report FROM attempts WHERE puzzle = ? ORDER BY id DESC LIMIT 1", (puzzle,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def status(self, puzzle: str) -> PuzzleStatus:
        db = self._db
        count, solved, stars = db.execute(
            "SELECT COUNT(*), COALESCE(MAX(passed), 0), COALESCE(MAX(stars), 0) FROM attempts WHERE puzzle = ?",
            (puzzle,),
        ).fetchone()
        best = db.execute(
            "SELECT MIN(time_us), MAX(percent) FROM attempts WHERE puzzle = ? AND passed = 1 AND device != 'cpu'",
            (puzzle,),
        ).fetchone()
        last = db.execute(
            "SELECT summary, passed FROM attempts WHERE puzzle = ? ORDER BY id DESC LIMIT 1", (puzzle,)
        ).fetchone()
        revealed = db.execute("SELECT 1 FROM reveals WHERE puzzle = ?", (puzzle,)).fetchone() is not None
        return PuzzleStatus(
            puzzle=puzzle,
            attempts=int(count),
            solved=bool(solved),
            best_stars=int(stars),
            best_time_us=best[0],
            best_percent=best[1],
            hints_shown=self.hints_shown(puzzle),
            revealed=revealed,
            last_summary=last[0] if last else None,
            last_passed=bool(last[1]) if last else None,
        )


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` on an exception."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
