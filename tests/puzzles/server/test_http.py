"""The grading server over real HTTP: the learner's shell command, tokens, isolation between learners, limits,
and a server killed mid-grading (on PostgreSQL) that loses nothing when it starts again."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

from .conftest import CONTENT, Server, add_learner, api, fresh_postgres_db, start_server, tilescope, wait_verdict

SOLUTION = CONTENT / "01_copy_one_block" / "solution.py"
UNMASKED = CONTENT / "01_copy_one_block" / "wrong" / "unmasked.py"


def submit(server: Server, token: str, *args: str, timeout: float = 300) -> tuple[int, str, str]:
    done = tilescope(
        "puzzles", "submit", *args, "--server", server.url, env={"TILESCOPE_TOKEN": token}, timeout=timeout
    )
    return done.returncode, done.stdout, done.stderr


def test_a_learner_submits_from_the_shell_and_the_cpu_verdict_says_so(
    class_server: tuple[Server, dict[str, str]],
) -> None:
    server, tokens = class_server
    code, out, err = submit(server, tokens["alice"], "1", str(SOLUTION))
    assert code == 0, out + err
    assert out.startswith("PASS 01 Copy, one block") and "(CPU, tile interpreter)" in out
    assert "graded on CPU (tile interpreter, no timing)" in out and "submitted #" in err
    assert "this is the reference solution, so it is not on the leaderboard" in out
    code, out, err = submit(server, tokens["alice"], "01", str(UNMASKED), "--json")
    assert code == 1, out + err
    answer = json.loads(out)
    assert answer["state"] == "done" and answer["filename"] == "unmasked.py"
    verdict = answer["verdict"]
    assert (verdict["passed"], verdict["failure"], verdict["device"]) == (False, "out-of-bounds", "cpu")
    assert verdict["report"]["path"] == "unmasked.py"  # the node's private copy is not named


def test_a_report_with_values_that_are_not_finite_comes_back_whole(class_server: tuple[Server, dict[str, str]]) -> None:
    server, tokens = class_server
    code, out, err = submit(
        server, tokens["erin"], "2", str(CONTENT / "02_copy_ragged" / "wrong" / "drop_tail.py"), "--json"
    )
    assert code == 1, out + err
    verdict = json.loads(out)["verdict"]
    assert verdict["failure"] == "wrong-values" and "never written" in verdict["summary"]
    assert "NaN" in out  # the poison the kernel left, as `puzzles check --json` prints it
    code, out, _ = submit(server, tokens["erin"], "2", str(CONTENT / "02_copy_ragged" / "wrong" / "drop_tail.py"))
    assert code == 1 and out.startswith("FAIL 02") and "a byte-identical file was graded before" in out
    assert "submission" not in out.splitlines()[-1]  # no other submission's number


def test_a_learner_sees_only_their_own_code_and_reports(class_server: tuple[Server, dict[str, str]]) -> None:
    server, tokens = class_server
    status, mine = api(server, "/api/submissions", tokens["alice"])
    assert status == 200 and isinstance(mine, list) and mine
    number = mine[0]["id"]
    assert api(server, f"/api/submissions/{number}", tokens["bob"])[0] == 404
    assert api(server, f"/api/submissions/{number}", None)[0] == 401
    assert api(server, f"/api/submissions/{number}", "forged-token")[0] == 401
    assert api(server, "/api/submissions", tokens["bob"]) == (200, [])
    page = urllib.request.Request(
        f"{server.url}/submissions/{number}", headers={"Cookie": f"tilescope_token={tokens['bob']}"}
    )
    try:
        urllib.request.urlopen(page, timeout=30)
        raise AssertionError("bob read alice's submission page")
    except urllib.error.HTTPError as err:
        assert err.code == 404 and b"def kernel" not in err.read()
    own = urllib.request.Request(
        f"{server.url}/submissions/{number}", headers={"Cookie": f"tilescope_token={tokens['alice']}"}
    )
    with urllib.request.urlopen(own, timeout=30) as answer:
        assert answer.status == 200 and b"def kernel" in answer.read()


def test_size_and_rate_limits_per_learner(class_server: tuple[Server, dict[str, str]], tmp_path: Path) -> None:
    server, tokens = class_server
    big = tmp_path / "big.py"
    big.write_text(SOLUTION.read_text() + "#" * 5000 + "\n")
    code, _, err = submit(server, tokens["carol"], "1", str(big))
    assert code == 2 and "at most 4096" in err
    body = {"puzzle": "01", "filename": "s.py", "source": SOLUTION.read_text()}
    answers = [api(server, "/api/submissions", tokens["carol"], body) for _ in range(4)]
    assert [status for status, _ in answers] == [201, 201, 201, 429]
    assert "a minute" in str(answers[3][1])
    assert api(server, "/api/submissions", tokens["bob"], body)[0] == 201  # bob's rate is his own
    assert api(server, "/api/submissions", tokens["bob"], {**body, "puzzle": "99"})[0] == 404
    assert api(server, "/api/submissions", None, body)[0] == 401


def test_a_second_server_on_a_live_servers_database_exits_saying_why(
    class_server: tuple[Server, dict[str, str]],
) -> None:
    server, _ = class_server
    started = time.monotonic()
    second = tilescope("puzzles", "serve", "--db", server.db, "--port", "0", "--cpu-slots", "1", timeout=120)
    assert second.returncode == 3, second.stdout + second.stderr
    assert "another server" in second.stderr and "grades from this database" in second.stderr
    assert time.monotonic() - started < 60
    status, health = api(server, "/api/health", None)
    assert status == 200 and health == {"ok": True, "grading": {"kind": "cpu", "slots": 1}}


def test_a_server_killed_mid_grading_loses_nothing_on_postgresql(postgres: str, tmp_path: Path) -> None:
    db = fresh_postgres_db(postgres)
    token = add_learner(db, "erin")
    server = start_server(db, tmp_path, "--cpu-slots", "1")
    try:
        status, queued = api(
            server,
            "/api/submissions",
            token,
            {"puzzle": "02", "filename": "s.py", "source": (CONTENT / "02_copy_ragged" / "solution.py").read_text()},
        )
        assert status == 201 and isinstance(queued, dict)
        number = queued["id"]
        deadline = time.monotonic() + 60
        while api(server, f"/api/submissions/{number}", token)[1]["state"] != "grading":  # type: ignore[index]
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        os.killpg(server.process.pid, signal.SIGKILL)  # the server and the local cluster it started, at once
        server.process.wait(30)
    again = start_server(db, tmp_path, "--cpu-slots", "1")
    try:
        answer = wait_verdict(again, number, token)
        assert "queued again" in again.said()
        assert answer["attempts"] == 2 and answer["verdict"]["passed"] is True  # type: ignore[index]
        status, listed = api(again, "/api/submissions", token)
        assert status == 200 and [s["id"] for s in listed] == [number]  # type: ignore[union-attr]
    finally:
        again.stop()
