"""Progress in SQLite: attempts, best results, hints; and it survives a crash mid-write."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

from tilescope.puzzles.progress import ProgressStore
from tilescope.puzzles.report import PerfResult, Report


def _report(puzzle: str, passed: bool, time_us: float = 10.0, percent: float = 50.0, stars: int = 2) -> Report:
    perf = PerfResult({"N": 1}, time_us, 8, 0, "memory", 1e12, 4.8e12, percent, 40.0, stars, "H200", "datasheet")
    return Report(
        puzzle=puzzle,
        path="/tmp/x.py",
        device="NVIDIA H200",
        passed=passed,
        summary="ok" if passed else "bad",
        perf=perf if passed else None,
        failure=None if passed else "wrong-values",
    )


def test_records_attempts_and_keeps_the_best(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path / "p.sqlite3")
    store.record(_report("03", False))
    store.record(_report("03", True, time_us=20.0, percent=40.0, stars=2))
    store.record(_report("03", True, time_us=12.0, percent=70.0, stars=3))
    s = store.status("03")
    assert s.attempts == 3 and s.solved and s.best_stars == 3
    assert s.best_time_us == 12.0 and s.best_percent == 70.0
    assert s.last_passed is True
    assert store.last_report("03")["perf"]["time_us"] == 12.0
    assert store.status("04").attempts == 0 and not store.status("04").solved


def test_hints_unlock_one_at_a_time_up_to_the_last(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path / "p.sqlite3")
    assert [store.unlock_hint("05", 3) for _ in range(5)] == [1, 2, 3, 3, 3]
    assert ProgressStore(tmp_path / "p.sqlite3").hints_shown("05") == 3


def test_reveal_is_remembered(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path / "p.sqlite3")
    store.mark_revealed("07")
    store.mark_revealed("07")
    assert store.status("07").revealed and not store.status("08").revealed


def _die_mid_transaction(path: str) -> None:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "INSERT INTO attempts (puzzle, at, path, device, passed, summary, report)"
        " VALUES ('03', 0, 'x', 'cpu', 1, 's', '{}')"
    )
    os._exit(1)  # the process dies before COMMIT


def _write_forever(path: str) -> None:
    store = ProgressStore(Path(path))
    while True:
        store.record(_report("09", True))


def test_a_crash_before_commit_leaves_the_last_committed_state(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    store = ProgressStore(path)
    store.record(_report("03", False))
    proc = multiprocessing.get_context("spawn").Process(target=_die_mid_transaction, args=(str(path),))
    proc.start()
    proc.join()
    assert proc.exitcode == 1
    reopened = ProgressStore(path)
    assert reopened.status("03").attempts == 1 and not reopened.status("03").solved
    reopened.record(_report("03", True))
    assert reopened.status("03").solved


def test_a_kill_during_writes_leaves_a_consistent_database(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    ProgressStore(path).close()
    proc = multiprocessing.get_context("spawn").Process(target=_write_forever, args=(str(path),))
    proc.start()
    db = sqlite3.connect(path)
    while db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0] < 5:
        pass
    proc.kill()
    proc.join()
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = db.execute("SELECT report FROM attempts").fetchall()
    assert all(r[0].startswith("{") and r[0].endswith("}") for r in rows)
    assert ProgressStore(path).status("09").attempts == len(rows)
