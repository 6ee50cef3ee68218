"""A class's grading server from an installed ``tilescope[server]``, as a teacher and two learners use it.

Run by ``.ci/install-check`` in a fresh environment, from a folder outside the checkout:
``python serve_check.py VENV REPO WORK`` issues a token, starts ``tilescope puzzles serve`` on loopback (SQLite,
one CPU slot: the tile interpreter), submits a correct and a wrong file of puzzle 01 with ``tilescope puzzles
submit``, checks both verdicts, and signs in through the page's form. Standard library only.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

READY_S = 240.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def sign_in(url: str, token: str) -> tuple[int, str]:
    """POST the page's sign-in form: the status and where it sends the browser."""
    body = urllib.parse.urlencode({"token": token}).encode()
    request = urllib.request.Request(url + "/login", data=body, method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    request.add_header("Origin", url)  # the form as the server's own page sends it
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=30) as answer:
            return answer.status, answer.headers.get("location", "")
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("location", "")


def main() -> int:
    venv, repo, work = (Path(a) for a in sys.argv[1:4])
    tilescope = str(venv / "bin" / "tilescope")
    env = {**os.environ, "TILESCOPE_DATA_DIR": str(work / "data")}
    db = f"sqlite:///{work / 'class.db'}"
    added = subprocess.run(
        [tilescope, "puzzles", "serve", "--db", db, "--add-learner", "ada"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=120,
    )
    token = added.stdout.strip().splitlines()[-1]

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = work / "serve.log"
    with open(log, "w") as out:
        server = subprocess.Popen(
            [tilescope, "puzzles", "serve", "--db", db, "--port", str(port), "--cpu-slots", "1"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    started = time.monotonic()
    try:
        while "ready on" not in log.read_text():
            if server.poll() is not None or time.monotonic() - started > READY_S:
                print(log.read_text(), file=sys.stderr)
                raise SystemExit("the grading server did not start")
            time.sleep(0.5)
        print(f"serve: a slot ready in {time.monotonic() - started:.1f} s")

        status, where = sign_in(url, token)
        assert status in (200, 303) and "failed" not in where, f"sign-in answered {status} → {where!r}"
        status, where = sign_in(url, "not-a-token")
        assert status == 303 and "login=failed" in where, f"a wrong token's sign-in answered {status} → {where!r}"
        print(f"sign-in: {status} to the page, a wrong token back to the form")

        content = repo / "puzzles" / "content" / "01_copy_one_block"
        for file, passes in ((content / "solution.py", True), (content / "wrong" / "unmasked.py", False)):
            began = time.monotonic()
            done = subprocess.run(
                [tilescope, "puzzles", "submit", "01", str(file), "--server", url, "--json", "--wait", "300"],
                capture_output=True,
                text=True,
                env={**env, "TILESCOPE_TOKEN": token},
                timeout=360,
            )
            assert done.returncode == (0 if passes else 1), done.stdout + done.stderr
            verdict = json.loads(done.stdout)["verdict"]
            assert verdict["passed"] is passes, verdict["summary"]
            assert verdict["device"] == "cpu", verdict["graded_on"]
            if not passes:
                assert "out-of-bounds" in json.dumps(verdict["report"]), verdict["summary"]
            print(
                f"submit {file.name}: {'PASS' if passes else 'FAIL'} in {time.monotonic() - began:.1f} s:",
                verdict["summary"],
            )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(30)
    said = log.read_text()
    assert "No module named" not in said and "Traceback" not in said, said
    return 0


if __name__ == "__main__":
    sys.exit(main())
