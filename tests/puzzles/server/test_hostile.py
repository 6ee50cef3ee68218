"""The grading server against a hostile learner, a careless teacher and a local attacker: each test makes the
attack a review found and checks that it fails, on SQLite and PostgreSQL where the database matters."""

from __future__ import annotations

import ast
import contextlib
import http.client
import json
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import pytest
from sqlalchemy import select
from tilescope.puzzles import catalog
from tilescope.puzzles.server import views
from tilescope.puzzles.server.admission import LimitError
from tilescope.puzzles.server.db import Learner, Submission
from tilescope.puzzles.server.grading_queue import Graded
from tilescope.puzzles.server.slot import PRIVATE_PREFIX
from tilescope.puzzles.server.store import Store
from tilescope.puzzles.workspace import is_solution_text

from tests.conftest import free_port

from .conftest import fresh_postgres_db, tilescope

SOURCE = "import tilelang\n# a file\n"


def report(failure: str | None, summary: str = "s", device: str = "cpu") -> dict[str, object]:
    return {"puzzle": "01", "path": "x.py", "device": device, "passed": False, "summary": summary, "failure": failure}


def at_once(count: int, work: object) -> list[object]:
    """Run ``work(i)`` in ``count`` threads released together, each with its own engine (as separate servers' or
    workers' connections would be); their answers, or the exception each raised."""
    barrier = threading.Barrier(count)
    answers: list[object] = [None] * count

    def run(i: int) -> None:
        try:
            barrier.wait(30)
            answers[i] = work(i)  # type: ignore[operator]
        except BaseException as err:  # the test reads what each thread met
            answers[i] = err

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return answers


# Rate limit and grading slots


def test_parallel_submissions_from_one_learner_never_pass_the_rate_limit(db_url: str) -> None:
    store = Store(db_url, per_minute=6)
    token = store.add_learner("alice")
    stores = [Store(db_url, per_minute=6) for _ in range(8)]

    def post(i: int) -> int:
        own = stores[i]
        alice = own.learner(token)
        assert alice is not None
        accepted = 0
        for n in range(25):
            with contextlib.suppress(LimitError):
                own.submit(alice, "01", f"{i}-{n}.py", SOURCE + f"#{i}-{n}")
                accepted += 1
        return accepted

    answers = at_once(8, post)
    assert all(isinstance(a, int) for a in answers), answers
    assert sum(answers) == 6 and store.counts()["queued"] == 6  # type: ignore[arg-type]
    for own in (store, *stores):
        own.close()


def test_parallel_submissions_from_a_class_never_pass_anyones_rate_limit(db_url: str) -> None:
    store = Store(db_url, per_minute=6)
    tokens = [store.add_learner(f"l{i}") for i in range(20)]
    ids = [learner.id for learner in map(store.learner, tokens) if learner is not None]
    stores = [Store(db_url, per_minute=6) for _ in range(10)]

    def post(i: int) -> int:
        own, accepted = stores[i], 0
        learners = [own.learner(token) for token in tokens]
        for learner in learners:  # every thread sends each learner's next file at about the same moment
            assert learner is not None
            with contextlib.suppress(LimitError):
                own.submit(learner, "01", "f.py", SOURCE + f"#{i}")
                accepted += 1
        return accepted

    answers = at_once(10, post)  # 20 learners, 10 files each
    assert all(isinstance(a, int) for a in answers), answers
    with store.session() as s:
        per_learner = [len(s.scalars(select(Submission.id).where(Submission.learner_id == i)).all()) for i in ids]
    assert per_learner == [6] * 20
    for own in (store, *stores):
        own.close()


def test_one_learner_holds_at_most_one_grading_slot_however_many_claim_at_once(db_url: str) -> None:
    store = Store(db_url, per_minute=100)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    for n in range(6):
        store.submit(alice, "01", "loop.py", SOURCE + f"while True: pass  # {n}")
    bobs = store.submit(bob, "01", "b.py", SOURCE)
    stores = [Store(db_url) for _ in range(6)]
    jobs = at_once(6, lambda i: stores[i].claim(f"slot-{i}"))
    taken = [j for j in jobs if j is not None]
    assert not [j for j in taken if isinstance(j, BaseException)], taken
    with store.session() as s:
        owners = sorted(s.scalar(select(Submission.learner_id).where(Submission.id == j.id)) for j in taken)  # type: ignore[union-attr]
    assert owners == [alice.id, bob.id] and bobs in [j.id for j in taken]  # type: ignore[union-attr]
    assert store.counts()["grading"] == 2
    for own in (store, *stores):
        own.close()


def test_a_byte_identical_file_that_timed_out_is_not_graded_again(db_url: str) -> None:
    store = Store(db_url, per_minute=100)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    loop = SOURCE + "while True:\n    pass\n"
    first = store.submit(alice, "01", "loop.py", loop)
    job = store.claim("slot-0")
    assert job is not None and job.id == first
    store.finish(first, Graded(report("timeout", device="cuda"), node="n1", grading_s=60.0))
    again = store.submit(bob, "01", "mine.py", loop)
    job = store.claim("slot-0")
    assert job is not None and job.id == again
    assert store.reusable(job) is not None and store.copy_verdict(job)
    found = store.submission(bob, again)
    assert found is not None and found[1] is not None
    assert found[1].failure == "timeout" and found[1].grading_s == 0.0
    store.close()


def test_a_learner_past_their_grading_budget_is_refused_until_it_frees(db_url: str) -> None:
    store = Store(db_url, per_minute=100, budget_s=100.0)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    for n in range(2):
        number = store.submit(alice, "01", "loop.py", SOURCE + f"# {n}")
        assert store.claim("slot-0") is not None
        store.finish(number, Graded(report("timeout"), grading_s=60.0))
    with pytest.raises(LimitError) as refused:
        store.submit(alice, "01", "loop.py", SOURCE + "# 3")
    assert refused.value.status == 429 and "120 s of grading in the last hour" in str(refused.value)
    store.submit(bob, "01", "b.py", SOURCE)  # bob's budget is his own
    store.submit(alice, "01", "later.py", SOURCE + "# later", now=time.time() + 3601.0)
    store.close()


# The server lease

HOLDER = """
import sys, time
from tilescope.puzzles.server.lease import Lease, holder_name
from tilescope.puzzles.server.store import Store
Lease(Store(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else holder_name(), ttl_s=4.0, renew_s=0.5).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_second_server_neither_starts_nor_requeues_a_live_servers_work(db_url: str, tmp_path: Path) -> None:
    from tilescope.puzzles.server.lease import Lease

    store = Store(db_url)
    alice = store.learner(store.add_learner("alice"))
    assert alice
    number = store.submit(alice, "01", "a.py", SOURCE)
    assert store.claim("live-server:1/slot-0") is not None
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, db_url, "live-server:1"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        second = tilescope(
            "puzzles", "serve", "--db", db_url, "--port", str(free_port()), "--cpu-slots", "1", timeout=90
        )
        assert second.returncode == 3, second.stderr
        assert "another server (live-server:1) grades from this database" in second.stderr
        assert time.monotonic() - started < 30
        found = store.submission(alice, number)
        assert found is not None and found[0].state == "grading" and found[0].claimed_by == "live-server:1/slot-0"
    finally:
        holder.send_signal(signal.SIGKILL)  # the live server dies without a word: its lease lapses
        holder.wait(30)
    started, lease = time.monotonic(), Lease(store, "next-server:2")
    lease.acquire()
    assert time.monotonic() - started < 10  # the dead one's 4 s lease, and two of its renewal periods
    assert store.requeue_abandoned() == 1
    lease.release()
    store.close()


def test_a_restart_after_a_crash_on_the_same_host_takes_the_lease_at_once(db_url: str) -> None:
    from tilescope.puzzles.server.lease import Lease, LeaseHeld

    store = Store(db_url)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, db_url], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LeaseHeld):  # alive on this host: watched, and renewed
            Lease(store, "next-server:2").acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
    started, lease = time.monotonic(), Lease(store, "next-server:2")
    lease.acquire()
    assert time.monotonic() - started < 1.0  # its process is gone: no need to wait for the lease to lapse
    lease.release()
    store.close()


# Migrations run by several processes at once

OPENER = """
import sys, time
from tilescope.puzzles.server.store import Store
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
store = Store(sys.argv[1])
store.add_learner(sys.argv[3])
store.close()
"""


def test_processes_migrating_a_new_database_at_once_all_succeed(
    db_url: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    for round in range(3):
        if round == 0:
            url = db_url
        elif db_url.startswith("sqlite"):
            url = f"sqlite:///{tmp_path / f'grading-{round}.db'}"
        else:
            url = fresh_postgres_db(request.getfixturevalue("postgres"))
        start = str(time.time() + 4.0)  # after every process has imported, all of them at once
        openers = [
            subprocess.Popen([sys.executable, "-c", OPENER, url, start, f"l{i}"], stderr=subprocess.PIPE, text=True)
            for i in range(4)
        ]
        said = [(p.wait(120), p.stderr.read()) for p in openers if p.stderr is not None]
        assert [code for code, _ in said] == [0] * 4, [err[-300:] for _, err in said]
        store = Store(url)
        with store.session() as s:
            assert len(s.scalars(select(Learner)).all()) == 4
        store.close()


# Bad input over HTTP: 4xx with a message, never a 500


@dataclass
class App:
    url: str
    port: int
    store: Store
    token: str


@pytest.fixture
def app(db_url: str) -> Iterator[App]:
    """The server's real app (no cluster: nothing here is graded), on a free port in a thread of this process."""
    import uvicorn
    from tilescope.puzzles.server.web import create_app

    store = Store(db_url)
    token = store.add_learner("alice")
    port = free_port()
    application = create_app(store, lambda: {"kind": "cpu", "slots": 0})
    server = uvicorn.Server(uvicorn.Config(application, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    try:
        yield App(f"http://127.0.0.1:{port}", port, store, token)
    finally:
        server.should_exit = True
        thread.join(30)
        store.close()


def request(
    app: App, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", app.port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


BAD_INPUTS = {
    "id 2**63": ("GET", f"/api/submissions/{2**63}", None),
    "page id 2**63": ("GET", f"/submissions/{2**63}", None),
    "a lone surrogate in source": ("POST", "/api/submissions", b'{"puzzle": "01", "source": "x = 1 \\ud800"}'),
    "a lone surrogate in the file name": (
        "POST",
        "/api/submissions",
        b'{"puzzle": "01", "filename": "\\udfff.py", "source": "x = 1"}',
    ),
    "NUL in source": ("POST", "/api/submissions", b'{"puzzle": "01", "source": "x = 1\\u0000"}'),
    "100,000-deep JSON": ("POST", "/api/submissions", b"[" * 100_000 + b"]" * 100_000),
    "a superscript digit for a puzzle": ("POST", "/api/submissions", '{"puzzle": "²", "source": "x"}'.encode()),
    "a superscript digit for a leaderboard": ("GET", "/api/leaderboard/%C2%B2", None),
    "a puzzle number of 5000 digits": ("GET", "/api/leaderboard/" + "9" * 5000, None),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_answered_4xx_with_a_message(app: App, case: str) -> None:
    method, path, body = BAD_INPUTS[case]
    headers = {"Authorization": f"Bearer {app.token}", "Cookie": f"tilescope_token={app.token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    status, got, answer = request(app, method, path, body, headers)
    assert 400 <= status < 500, (status, answer[:300])
    if got.get("content-type", "").startswith("application/json"):
        assert json.loads(answer)["error"]
    else:
        assert b"No such submission" in answer
    assert app.store.counts()["queued"] == 0


# Copied verdicts


def test_a_copied_verdict_names_no_one_elses_submission_file_or_folder(db_url: str) -> None:
    store = Store(db_url, per_minute=100)
    alice, bob = (store.learner(store.add_learner(n)) for n in ("alice", "bob"))
    assert alice and bob
    failing = SOURCE + "raise ValueError('no')\n"
    first = store.submit(alice, "01", "/home/alice/secret_plan.py", failing)
    assert store.claim("slot-0") is not None
    summary = "secret_plan.py:3: ValueError: no"
    traceback = f'File "/tmp/{PRIVATE_PREFIX}k2j4/{first}/secret_plan.py", line 3, in <module>'
    sent = {**report("load-error", summary), "path": "/home/alice/secret_plan.py", "detail": traceback}
    store.finish(first, Graded(sent))
    mine = store.submit(bob, "01", "bobs.py", failing)
    job = store.claim("slot-0")
    assert job is not None and job.id == mine and store.copy_verdict(job)
    found = store.submission(bob, mine)
    assert found is not None
    shown = json.dumps(views.submission_json(*found))
    for secret in ("secret_plan", "/home/alice", PRIVATE_PREFIX, f"/{first}/", '"reused_from"'):
        assert secret not in shown, secret
    verdict = views.verdict_json(found[1])
    assert verdict is not None and verdict["reused"] is True and verdict["summary"] == "bobs.py:3: ValueError: no"
    assert verdict["report"]["detail"] == 'File "bobs.py", line 3, in <module>'
    store.close()


# The leaderboard's reference-copy filter


def renamed(source: str) -> str:
    """``source`` with the first name it binds renamed, a docstring added to each function, and ``ast``'s layout."""
    tree = ast.parse(source)
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    names += [a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)]
    old = names[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == old:
            node.id = f"{old}_mine"
        elif isinstance(node, ast.arg) and node.arg == old:
            node.arg = f"{old}_mine"
        elif isinstance(node, ast.FunctionDef):
            node.body.insert(0, ast.Expr(ast.Constant("My own work.")))
    return "# written by me\n" + ast.unparse(tree)


@pytest.mark.parametrize("puzzle", [p.id for p in catalog.puzzles()])
def test_a_renamed_copy_of_the_reference_is_still_a_copy(puzzle: str) -> None:
    p = catalog.get(puzzle)
    reference = p.solution_path.read_text()
    copy = renamed(reference)
    assert copy != reference and is_solution_text(p, copy)
    assert not is_solution_text(p, p.starter_path.read_text())
    for wrong in sorted((p.folder / "wrong").glob("*.py")):
        assert not is_solution_text(p, wrong.read_text()), wrong.name


# Tokens


def test_a_token_expires_and_a_revoked_learners_token_stops_working(db_url: str) -> None:
    store = Store(db_url)
    token = store.add_learner("alice", valid_days=1.0)
    assert store.learner(token) is not None
    assert store.learner(token, now=time.time() + 2 * 86400.0) is None
    done = tilescope("puzzles", "serve", "--db", db_url, "--revoke-learner", "alice")
    assert done.returncode == 0, done.stderr
    assert store.learner(token) is None
    assert store.add_learner("alice") and store.learner(token) is None  # a new token, not the old one back
    unknown = tilescope("puzzles", "serve", "--db", db_url, "--revoke-learner", "nobody")
    assert unknown.returncode == 2 and "no learner 'nobody'" in unknown.stderr
    store.close()


# Cross-site requests and the cookie


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_post_from_another_sites_page_is_refused(app: App) -> None:
    form = urlencode({"token": app.token}).encode()
    kind = {"Content-Type": "application/x-www-form-urlencoded"}
    for path in ("/login", "/logout"):
        for origin in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {}):
            status, headers, _ = request(app, "POST", path, form, {**kind, **origin})
            assert status == 403 and "set-cookie" not in headers, (path, origin)
    status, _, _ = request(
        app,
        "POST",
        "/api/submissions",
        json.dumps({"puzzle": "01", "source": "x"}).encode(),
        {"Authorization": f"Bearer {app.token}", "Origin": "http://evil.example"},
    )
    assert status == 403 and app.store.counts()["queued"] == 0


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_cookie_is_http_only_strict_and_secure_over_tls(app: App) -> None:
    form = urlencode({"token": app.token}).encode()
    own = {"Content-Type": "application/x-www-form-urlencoded", "Origin": app.url}
    status, headers, _ = request(app, "POST", "/login", form, own)
    cookie = headers["set-cookie"].lower()
    assert status == 303 and "httponly" in cookie and "samesite=strict" in cookie and "secure" not in cookie
    tls = {**own, "Origin": f"https://127.0.0.1:{app.port}", "X-Forwarded-Proto": "https"}  # a TLS proxy in front
    status, headers, _ = request(app, "POST", "/login", form, tls)
    cookie = headers["set-cookie"].lower()
    assert status == 303 and "httponly" in cookie and "samesite=strict" in cookie and "; secure" in cookie


# The database file


def test_the_database_and_its_folder_are_created_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = tilescope("puzzles", "serve", "--add-learner", "alice", env={"TILESCOPE_DATA_DIR": str(data)})
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    files = sorted(data.glob("grading-server.db*"))
    assert files and all(stat.S_IMODE(f.stat().st_mode) == 0o600 for f in files), [
        (f.name, oct(f.stat().st_mode)) for f in files
    ]
    given = tmp_path / "given.db"
    assert tilescope("puzzles", "serve", "--db", f"sqlite:///{given}", "--add-learner", "a").returncode == 0
    assert stat.S_IMODE(given.stat().st_mode) == 0o600


# An older database


def test_a_database_of_the_first_schema_is_migrated_safely(db_url: str) -> None:
    from alembic import command
    from alembic.config import Config
    from sqlalchemy import insert
    from tilescope.puzzles.server.admission import token_hash
    from tilescope.puzzles.server.db import MIGRATIONS, engine_for

    engine = engine_for(db_url)
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.execute(
            insert(Learner.__table__).values(id=1, name="ada", token_hash=token_hash("old"), created_at=1.0)  # type: ignore[arg-type]
        )
        for number in (1, 2):  # an older server let one learner hold two slots
            row = {"learner_id": 1, "puzzle": "01", "filename": "a.py", "source": SOURCE, "sha256": str(number)}
            connection.execute(
                insert(Submission.__table__).values(  # type: ignore[arg-type]
                    id=number, state="grading", created_at=1.0, attempts=1, claimed_by="old", **row
                )
            )
    engine.dispose()
    store = Store(db_url)
    assert store.learner("old") is None  # a token from before expiry was issued no longer works
    with store.session() as s:
        states = s.execute(select(Submission.id, Submission.state).order_by(Submission.id)).all()
    assert [tuple(r) for r in states] == [(1, "grading"), (2, "queued")]
    store.close()
