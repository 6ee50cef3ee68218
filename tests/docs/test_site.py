"""The documentation site builds with ``mkdocs build --strict`` and every page opens in a real browser without a
console error; README stays a front door."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chromium import DevTools
from tests.conftest import ROOT, free_port


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("material", reason="the docs extra is not installed (pip install -e '.[docs]')")
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(folder),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site over HTTP on loopback (the search's web worker does not start from file://)."""
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class Chromium(DevTools):
    """One tab whose console errors, uncaught exceptions and failed loads are collected."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.errors: list[str] = []
        self.loaded = False
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            self.errors.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
            )
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            self.errors.append("exception: " + str(details.get("exception", {}).get("description", details["text"])))
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            self.errors.append(f"log: {params['entry']['text']} {params['entry'].get('url', '')}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            self.errors.append(f"load failed: {params.get('errorText')}")
        elif method == "Page.loadEventFired":
            self.loaded = True

    def open(self, url: str, settle_s: float = 0.5) -> list[str]:
        """Load ``url`` and wait for its load event and a moment after it; the errors it caused."""
        self.errors, self.loaded = [], False
        self.send("Page.navigate", url=url)
        deadline = time.monotonic() + 30
        self.ws.settimeout(0.2)
        try:
            while time.monotonic() < deadline and not self.loaded:
                with contextlib.suppress(Exception):
                    self._event(json.loads(self.ws.recv()))
            assert self.loaded, f"{url} did not load"
            settled = time.monotonic() + settle_s
            while time.monotonic() < settled:
                with contextlib.suppress(Exception):
                    self._event(json.loads(self.ws.recv()))
        finally:
            self.ws.settimeout(60)
        return self.errors


def test_every_page_opens_without_a_console_error(site: Path, served: str, tmp_path: Path) -> None:
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("index.html"))
    assert "index.html" in pages and "reference/codes/index.html" in pages and len(pages) >= 25, pages
    browser = Chromium(tmp_path / "profile")
    try:
        failures = {page: errors for page in pages if (errors := browser.open(f"{served}/{page}"))}
        # The search index loads in a web worker: a search that answers shows the worker started.
        browser.open(f"{served}/index.html?q=layout", settle_s=2.0)
    finally:
        browser.close()
    assert not failures, failures


def test_the_codes_page_is_what_explain_prints(site: Path) -> None:
    table = subprocess.run(
        [sys.executable, "-m", "tilescope", "explain", "--markdown"], capture_output=True, text=True, check=True
    ).stdout
    codes = re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.MULTILINE)
    page = (site / "reference" / "codes" / "index.html").read_text()
    assert codes and all(f"<code>{code}</code>" in page for code in codes)


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text()
    words = len(re.findall(r"\S+", readme))
    assert words <= 2000, f"README.md has {words} words; the site holds the manual (docs/)"
    assert "bash .ci/setup && " in readme and "bash .ci/test" in readme
    assert ".ci/run" in readme
    for link in re.findall(r"\]\((docs/[^)#]+)", readme):
        assert (ROOT / link).exists(), link
