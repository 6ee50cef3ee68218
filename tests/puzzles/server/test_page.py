"""The server-rendered page in a real headless Chromium: signing in with a token, the learner's verdicts and
report, the queue, the leaderboard, and another learner's submission answering 404."""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import CONTENT, Browser, Server, api, wait_verdict


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    chromium = Browser(tmp_path)
    try:
        yield chromium
    finally:
        chromium.close()


def sign_in(browser: Browser, server: Server, token: str) -> None:
    browser.open(server.url + "/")
    assert browser.evaluate("!!document.querySelector('#login form')")
    browser.evaluate(f"document.querySelector('input[name=token]').value = {token!r}")
    browser.submit("#login form")


def test_the_page_shows_a_learner_their_verdicts_the_queue_and_the_leaderboard(
    class_server: tuple[Server, dict[str, str]], browser: Browser
) -> None:
    server, tokens = class_server
    source = (CONTENT / "01_copy_one_block" / "solution.py").read_text() + "\nAUTHOR = 'dave'\n"  # not a bare copy
    status, queued = api(
        server, "/api/submissions", tokens["dave"], {"puzzle": "1", "filename": "mine.py", "source": source}
    )
    assert status == 201 and isinstance(queued, dict)
    wait_verdict(server, queued["id"], tokens["dave"])

    browser.open(server.url + "/?login=failed")
    assert "not one this server issued" in str(browser.evaluate("document.body.innerText"))
    sign_in(browser, server, tokens["dave"])
    assert browser.evaluate("document.querySelector('#learner').textContent") == "dave"
    text = str(browser.evaluate("document.body.innerText"))
    assert "no GPU in the cluster: graded on the CPU through the tile interpreter" in text
    row = str(browser.evaluate(f"document.querySelector('tr.submission[data-id=\"{queued['id']}\"]').innerText"))
    assert "mine.py" in row and "PASS" in row and "CPU (tile interpreter" in row
    board = str(browser.evaluate("document.querySelector('table.leaderboard[data-puzzle=\"01\"]').innerText"))
    assert "dave" in board and "passed on the CPU, untimed" in board
    assert "graded" in str(browser.evaluate("document.querySelector('#queue').innerText"))
    shot = os.environ.get("TILESCOPE_PAGE_SCREENSHOT")
    if shot:  # README's picture of the page: TILESCOPE_PAGE_SCREENSHOT=path.png
        Path(shot).write_bytes(base64.b64decode(str(browser.send("Page.captureScreenshot", format="png")["data"])))

    browser.open(f"{server.url}/submissions/{queued['id']}")
    report = str(browser.evaluate("document.querySelector('#report').innerText"))
    assert report.startswith("PASS 01 Copy, one block") and "tile interpreter" in report
    assert "def kernel" in str(browser.evaluate("document.querySelector('#source').innerText"))

    status, other = api(
        server, "/api/submissions", tokens["bob"], {"puzzle": "1", "filename": "b.py", "source": source}
    )
    assert status == 201 and isinstance(other, dict)
    browser.open(f"{server.url}/submissions/{other['id']}")  # another learner's: not found, none of its code
    assert browser.evaluate("document.querySelector('#source')") is None
    assert "No such submission of yours" in str(browser.evaluate("document.body.innerText"))
    browser.submit("header form")
    assert browser.evaluate("!!document.querySelector('#login form')")
