"""A real headless Chromium driven over the DevTools protocol: one tab in a throwaway profile.

The class server's page tests and the documentation site's test both drive it; each adds what it
watches (``DevTools._event`` sees every message that is not the answer awaited)."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import free_port


class DevTools:
    def __init__(self, profile: Path, *flags: str) -> None:
        import websocket

        binary = shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            pytest.skip("Chromium is not installed (apt-get install chromium; .ci/setup does)")
        port = free_port()
        self.process = subprocess.Popen(
            [
                binary,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                f"--user-data-dir={profile}",
                f"--remote-debugging-port={port}",
                "--remote-allow-origins=*",
                *flags,
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline, tab = time.monotonic() + 60, None
        while tab is None and time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError, ValueError, StopIteration),
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as answer,
            ):
                tab = next(t for t in json.loads(answer.read()) if t["type"] == "page")
            time.sleep(0.3)
        assert tab is not None, "Chromium did not open its DevTools port"
        self.ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=60)
        self.next_id = 0

    def send(self, method: str, **params: object) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message["result"]
            self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        """An event (or a late answer) that arrived while another answer was awaited."""

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(20)
