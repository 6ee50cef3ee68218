"""The grading server's database, on SQLite and on a real PostgreSQL: schema, tokens, limits, the queue."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from sqlalchemy import select, text
from tilescope.puzzles.server.admission import LimitError
from tilescope.puzzles.server.db import Base, Learner, Verdict
from tilescope.puzzles.server.grading_queue import Graded
from tilescope.puzzles.server.store import Store

SOURCE = "import tilelang\n# a file\n"


def report(
    passed: bool, device: str = "cpu", failure: str | None = None, time_us: float | None = None
) -> dict[str, Any]:
    perf = {"time_us": time_us, "torch_us": 2.0 * time_us, "stars": 2} if time_us else None
    return {
        "puzzle": "01",
        "path": "x.py",
        "device": device,
        "passed": passed,
        "summary": "s",
        "failure": failure,
        "perf": perf,
    }


def graded(store: Store, learner: Learner, filename: str, source: str, verdict: Graded) -> int:
    """Submit a file, claim it as the one slot ``w`` would (the oldest queued), and give it ``verdict``."""
    number = store.submit(learner, "01", filename, source)
    job = store.claim("w")
    assert job is not None and job.id == number
    assert store.finish(number, verdict)
    return number


def test_the_migrations_build_the_models_schema(db_url: str) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    store = Store(db_url)
    Store(db_url).close()  # a second open migrates nothing
    with store.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0002"
    store.close()


def test_a_token_is_stored_only_as_its_hash_and_a_new_one_retires_the_old(db_url: str) -> None:
    store = Store(db_url)
    token = store.add_learner("alice")
    with store.session() as s:
        row = s.scalar(select(Learner))
        assert row is not None and token not in (row.token_hash, row.name)
    alice = store.learner(token)
    assert alice is not None and alice.name == "alice"
    assert store.learner("not-a-token") is None and store.learner(None) is None
    again = store.add_learner("alice")
    assert store.learner(token) is None
    assert store.learner(again) is not None and store.learner(again).id == alice.id  # type: ignore[union-attr]
    store.close()


def test_size_and_rate_limits_per_learner(db_url: str) -> None:
    store = Store(db_url, max_bytes=100, per_minute=2)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    with pytest.raises(LimitError) as big:
        store.submit(alice, "01", "x.py", "#" * 101, now=1000.0)
    assert big.value.status == 413
    store.submit(alice, "01", "x.py", SOURCE, now=1000.0)
    store.submit(alice, "01", "x.py", SOURCE, now=1010.0)
    with pytest.raises(LimitError) as fast:
        store.submit(alice, "01", "x.py", SOURCE, now=1020.0)
    assert fast.value.status == 429
    store.submit(bob, "01", "x.py", SOURCE, now=1020.0)  # another learner's rate is their own
    store.submit(alice, "01", "x.py", SOURCE, now=1061.0)  # a minute later
    assert store.counts()["queued"] == 4
    store.close()


def test_concurrent_claims_never_take_the_same_submission(db_url: str) -> None:
    store = Store(db_url, per_minute=1000)
    learners = [store.learner(store.add_learner(f"l{i}")) for i in range(8)]
    ids = {store.submit(learners[i % 8], "01", f"{i}.py", SOURCE + str(i)) for i in range(40)}  # type: ignore[arg-type]
    taken: list[int] = []
    failed: list[BaseException] = []
    lock = threading.Lock()

    def drain(worker: str) -> None:
        try:
            own = Store(db_url)  # its own engine: its own connections, as another server's would be
            while (job := own.claim(worker)) is not None:
                with lock:
                    taken.append(job.id)
                own.finish(job.id, Graded(report(True)))  # the learner's next file can be claimed now
            own.close()
        except BaseException as err:
            failed.append(err)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failed
    assert sorted(taken) == sorted(ids)  # each once
    assert store.counts()["done"] == 40
    store.close()


def test_one_verdict_per_submission_and_the_leaderboard_counts_it_once(db_url: str) -> None:
    store = Store(db_url)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    first = store.submit(alice, "01", "a.py", SOURCE)
    job = store.claim("w")
    assert job and job.id == first
    assert store.finish(first, Graded(report(True, "cuda", time_us=5.0)))
    assert not store.finish(first, Graded(report(False, "cuda", "wrong-values")))  # graded twice: dropped
    assert not store.requeue(first)
    graded(store, alice, "b.py", SOURCE + "#", Graded(report(True, "cuda", time_us=3.0)))
    graded(store, bob, "c.py", SOURCE + "##", Graded(report(True, "cuda", time_us=4.0)))
    graded(store, bob, "ref.py", SOURCE + "###", Graded(report(True, "cuda", time_us=1.0), reference_copy=True))
    with store.session() as s:
        assert len(s.scalars(select(Verdict)).all()) == 4
    board = store.leaderboard("01")
    assert [(e["learner"], e["time_us"], e["passes"]) for e in board] == [("alice", 3.0, 2), ("bob", 4.0, 1)]
    assert board[0]["torch_us"] == 6.0 and board[0]["torch_ratio"] == pytest.approx(0.5)
    assert store.counts() == {"queued": 0, "grading": 0, "done": 4, "verdicts": 4}
    store.close()


def test_a_restarted_server_queues_again_what_the_last_one_was_grading(db_url: str) -> None:
    store = Store(db_url)
    alice = store.learner(store.add_learner("alice"))
    assert alice
    number = store.submit(alice, "01", "a.py", SOURCE)
    assert store.claim("old-server")
    store.close()
    restarted = Store(db_url)
    assert restarted.requeue_abandoned() == 1
    job = restarted.claim("new-server")
    assert job is not None and job.id == number and job.attempts == 2
    restarted.close()


def test_a_cpu_verdict_stands_for_a_byte_identical_file_but_not_a_load_dependent_one(db_url: str) -> None:
    store = Store(db_url, per_minute=100)
    alice = store.learner(store.add_learner("alice"))
    assert alice
    first = graded(store, alice, "a.py", SOURCE, Graded(report(False, "cpu", "out-of-bounds")))
    same = store.submit(alice, "01", "copy.py", SOURCE)
    job = store.claim("w")
    assert job and job.id == same
    found = store.reusable(job)
    assert found is not None and found.submission_id == first
    store.requeue(job.id)
    other_puzzle = store.submit(alice, "02", "a.py", SOURCE)
    assert store.copy_verdict(store.claim("w"))  # type: ignore[arg-type]  # the queued copy, then the other puzzle
    job2 = store.claim("w")
    assert job2 and job2.id == other_puzzle and store.reusable(job2) is None
    store.finish(job2.id, Graded(report(False)))
    graded(store, alice, "x.py", SOURCE + "x", Graded(report(False, "cpu", "child-exit")))
    graded(store, alice, "g.py", SOURCE + "g", Graded(report(True, "cuda", time_us=1.0)))
    for source in (SOURCE + "x", SOURCE + "g"):
        number = store.submit(alice, "01", "again.py", source)
        job3 = store.claim("w")
        assert job3 and job3.id == number and store.reusable(job3) is None
        store.finish(job3.id, Graded(report(False)))
    store.close()


def test_a_retried_submission_with_its_client_key_is_the_same_submission(db_url: str) -> None:
    store = Store(db_url, per_minute=1)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    first = store.submit(alice, "01", "a.py", SOURCE, client_key="k1")
    assert store.submit(alice, "01", "a.py", SOURCE, client_key="k1") == first  # no rate spent on a retry
    assert store.submit(bob, "01", "a.py", SOURCE, client_key="k1") != first  # keys are per learner
    assert store.counts()["queued"] == 2
    store.close()


def test_copies_can_be_claimed_ahead_of_files_still_to_grade(db_url: str) -> None:
    store = Store(db_url, per_minute=100)
    alice = store.learner(store.add_learner("alice"))
    assert alice
    graded(store, alice, "a.py", SOURCE, Graded(report(True, "cpu")))
    store.submit(alice, "01", "new.py", SOURCE + "# new")
    copy = store.submit(alice, "01", "copy.py", SOURCE)
    job = store.claim("copier", copies_only=True)
    assert job is not None and job.id == copy  # the older file still to grade is left for a slot
    assert store.claim("copier", copies_only=True) is None
    store.close()
