"""``tilescope puzzles submit N FILE --server URL``: send a file to a grading server and wait for its verdict.

Plain HTTP through the standard library (a learner's machine needs no server extra and no GPU); the
token comes from ``--token`` or ``TILESCOPE_TOKEN``. The verdict is drawn as ``puzzles check`` draws a
report.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

POLL_S = 1.0
RETRY_S = 120.0
"""How long a server that does not answer (restarting, say) is retried before the command gives up."""


class ServerError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def call(server: str, path: str, token: str, body: dict[str, Any] | None = None, timeout_s: float = 60.0) -> Any:
    """One request to the server's API; ``ServerError`` with the server's own words for anything not 2xx."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        server.rstrip("/") + path,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read()).get("error", err.reason)
        except ValueError:
            message = err.reason
        raise ServerError(err.code, str(message)) from None
    except (urllib.error.URLError, OSError) as err:
        raise ServerError(0, f"cannot reach {server} ({getattr(err, 'reason', err)})") from None


def patient_call(server: str, path: str, token: str, body: dict[str, Any] | None = None) -> Any:
    """``call``, retried while the server cannot be reached or answers 502-504, for at most ``RETRY_S``. A
    submission carries its client key, so a retry after a lost answer is not a second submission."""
    deadline = time.monotonic() + RETRY_S
    while True:
        try:
            return call(server, path, token, body)
        except ServerError as err:
            if (err.status and err.status not in (502, 503, 504)) or time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def verdict_lines(answer: dict[str, Any], title: str) -> list[str]:
    from tilescope.core.model import from_json
    from tilescope.puzzles.render import report_lines
    from tilescope.puzzles.report import Report

    verdict = answer["verdict"]
    try:
        lines = report_lines(from_json(Report, verdict["report"]), title)
    except (TypeError, ValueError, KeyError):
        lines = [f"{'PASS' if verdict['passed'] else 'FAIL'} {title}: {verdict['summary']}"]
    where = f"graded on {verdict['graded_on']}" + (f", node {verdict['node']}" if verdict.get("node") else "")
    if verdict.get("reused"):
        where += "; a byte-identical file was graded before; this is its verdict"
        if verdict.get("failure") == "timeout":
            where += " (change the file to have it graded again)"
    if verdict.get("reference_copy"):
        where += "; this is the reference solution, so it is not on the leaderboard"
    return [*lines, where]


def submit(puzzle: str, file: Path, server: str, token: str | None, as_json: bool, wait_s: float) -> int:
    from tilescope.puzzles import catalog

    token = token or os.environ.get("TILESCOPE_TOKEN")
    if not token:
        print("tilescope puzzles submit: no token (--token, or TILESCOPE_TOKEN from your teacher)", file=sys.stderr)
        return 2
    try:
        p = catalog.get(puzzle)
        source = file.read_text(encoding="utf-8")
    except KeyError as err:
        print(f"tilescope puzzles submit: {err.args[0]}", file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as err:
        print(f"tilescope puzzles submit: cannot read {file}: {err}", file=sys.stderr)
        return 2
    try:
        body = {"puzzle": p.id, "filename": file.name, "source": source, "client_key": uuid.uuid4().hex}
        queued = patient_call(server, "/api/submissions", token, body)
        print(f"submitted #{queued['id']} for {p.id} {p.title}: queued, {queued['ahead']} ahead", file=sys.stderr)
        deadline = time.monotonic() + wait_s
        answer = patient_call(server, f"/api/submissions/{queued['id']}", token)
        while answer["verdict"] is None and time.monotonic() < deadline:
            time.sleep(POLL_S)
            answer = patient_call(server, f"/api/submissions/{queued['id']}", token)
    except ServerError as err:
        print(f"tilescope puzzles submit: {err}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(answer, indent=1))
    if answer["verdict"] is None:
        still = f"#{answer['id']} is still {answer['state']} after {wait_s:g} s; the page shows it when graded"
        print(still, file=sys.stderr)
        return 2
    if not as_json:
        print("\n".join(verdict_lines(answer, f"{p.id} {p.title}")))
    return 0 if answer["verdict"]["passed"] else 1
