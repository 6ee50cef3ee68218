"""A real PostgreSQL (Debian's, started here with initdb and pg_ctl in a temporary folder on a free port),
and a real grading server (``tilescope puzzles serve`` as its own process, on a new local Ray cluster)."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.chromium import DevTools
from tests.conftest import ROOT, free_port

pytest.importorskip("sqlalchemy")
pytest.importorskip("ray")

CONTENT = ROOT / "puzzles" / "content"


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The URL of a fresh PostgreSQL server's ``postgres`` database; as root, the server runs as ``postgres``."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        pytest.skip("PostgreSQL's initdb/pg_ctl are not installed (apt-get install postgresql; .ci/setup does)")
    folder = Path(tempfile.mkdtemp(prefix="tilescope-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run PostgreSQL as")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = folder / "data", free_port()

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], check=True, capture_output=True, timeout=120)

    run(initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "-t", "60", "start")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        with contextlib.suppress(subprocess.SubprocessError):
            run(pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def fresh_postgres_db(server: str) -> str:
    """A new empty database on the server (one per test, so none sees another's rows)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'grading.db'}"
    return fresh_postgres_db(request.getfixturevalue("postgres"))


def tilescope(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def add_learner(db: str, name: str) -> str:
    done = tilescope("puzzles", "serve", "--db", db, "--add-learner", name)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@dataclass
class Server:
    url: str
    db: str
    process: subprocess.Popen[str]
    log: Path

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)

    def said(self) -> str:
        return self.log.read_text()


def start_server(db: str, folder: Path, *extra: str, ready_s: float = 180.0) -> Server:
    """``tilescope puzzles serve`` as its own process (its own local Ray cluster), once it answers HTTP."""
    port = free_port()
    log = folder / f"serve-{port}.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "tilescope", "puzzles", "serve", "--db", db, "--port", str(port), *extra],
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            env={**os.environ, "TILESCOPE_DATA_DIR": str(folder / "data")},
        )
    server = Server(f"http://127.0.0.1:{port}", db, process, log)
    deadline = time.monotonic() + ready_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {server.said()}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(server.url + "/api/health", timeout=5) as answer:
                json.loads(answer.read())
            if "ready on" in server.said():  # a slot's actor is placed: grading can start
                return server
        time.sleep(0.5)
    server.stop(signal.SIGKILL)
    raise AssertionError(f"the server did not start in {ready_s} s: {server.said()}")


@pytest.fixture(scope="session")
def class_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str]]]:
    """One server for the HTTP and page tests, SQLite, one CPU slot; three learners and their tokens; rate 3 a
    minute and 4 KB files, so that the limits are quick to reach."""
    folder = tmp_path_factory.mktemp("class")
    db = f"sqlite:///{folder / 'class.db'}"
    tokens = {name: add_learner(db, name) for name in ("alice", "bob", "carol", "dave", "erin")}
    server = start_server(db, folder, "--cpu-slots", "1", "--per-minute", "3", "--max-kb", "4")
    try:
        yield server, tokens
    finally:
        server.stop()


def api(server: Server, path: str, token: str | None, body: dict[str, object] | None = None) -> tuple[int, object]:
    """One API call: the status and the JSON answer (errors included)."""
    import urllib.error

    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def wait_verdict(server: Server, number: int, token: str, timeout_s: float = 240.0) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status, answer = api(server, f"/api/submissions/{number}", token)
        assert status == 200, answer
        assert isinstance(answer, dict)
        if answer["verdict"] is not None:
            return answer
        time.sleep(0.5)
    raise AssertionError(f"no verdict for #{number} in {timeout_s} s: {server.said()}")


class Browser(DevTools):
    """The class server's page in a real headless Chromium (one tab, its own throwaway profile)."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder / "profile", "--window-size=1200,900")
        self.send("Page.enable")

    def evaluate(self, expression: str) -> object:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")  # type: ignore[union-attr]

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)
        self._wait(lambda: self.evaluate("document.readyState === 'complete' && location.href") == url, url)

    def submit(self, form: str) -> None:
        """Submit the form that ``form`` selects and wait for the page it leads to."""
        self.evaluate(f"window.beforeSubmit = true; document.querySelector({form!r}).submit()")
        self._wait(lambda: self.evaluate("!window.beforeSubmit && document.readyState === 'complete'") is True, form)

    def _wait(self, done: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if done():
                return
            time.sleep(0.1)
        raise AssertionError(f"the page did not load: {what}")
