"""``tilescope mcp --http``: a real server on loopback, reached by a real HTTP client and the SDK's.

A tool call runs the workspace's kernel factories, so the HTTP transport answers only a request
with the bearer token and a Host and Origin that name this server, on every interface: no token or
a wrong one gets 401, a rebound DNS name (another Host) 421, a web page's foreign Origin 403.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
GEMM = "examples/gemm.py"
TOOLS = {"check", "layout", "passes", "pass_diff", "variants", "run", "profile", "explain", "puzzles_check"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}},
}


@dataclass(frozen=True)
class Served:
    port: int
    token: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def post(self, headers: dict[str, str]) -> httpx2.Response:
        """One raw ``initialize`` POST, with exactly the headers given besides the protocol's own."""
        base = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        with httpx2.Client(timeout=30) as http:
            return http.post(self.url, json=INITIALIZE, headers={**base, **headers})


@contextmanager
def _serving(*extra: str, token: str | None = None) -> Iterator[Served]:
    """``tilescope mcp --http`` in a subprocess, once it listens; the token is the one it printed
    before binding, unless ``token`` is the one given to it in a file."""
    port = free_port()
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "tilescope", "mcp", "--root", str(ROOT), "--http", str(port), *extra],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and server.poll() is None:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.2)
            log.seek(0)
            printed = log.read()
            assert server.poll() is None, printed
            found = re.search(r"Authorization: Bearer (\S+?)'", printed)
            bearer = token or (found.group(1) if found else None)
            assert bearer, f"no token printed: {printed!r}"
            yield Served(port, bearer)
        finally:
            server.terminate()
            server.wait(timeout=30)


def _client(served: Served, token: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(served.url, http_client=http))


@pytest.fixture(scope="module")
def loopback() -> Iterator[Served]:
    with _serving() as served:
        yield served


@pytest.mark.slow
def test_streamable_http_serves_the_same_tools_to_the_token_holder(loopback: Served) -> None:
    async def session() -> tuple[Any, Any]:
        async with _client(loopback, loopback.token) as client:
            tools = await client.list_tools()
            return tools, await client.call_tool("check", {"path": GEMM})

    tools, check = anyio.run(session)
    assert {t.name for t in tools.tools} == TOOLS
    assert not check.is_error and check.structured_content["summary"]["kernels"][0]["kernel"] == "matmul"


def test_a_request_without_the_token_gets_401(loopback: Served) -> None:
    answer = loopback.post({})
    assert answer.status_code == 401
    assert answer.headers["WWW-Authenticate"].startswith("Bearer")


def test_a_wrong_token_gets_401(loopback: Served) -> None:
    for header in (f"Bearer {loopback.token[:-1]}x", f"Bearer {loopback.token}x", "Bearer", loopback.token):
        assert loopback.post({"Authorization": header}).status_code == 401, header


def test_the_right_token_is_answered(loopback: Served) -> None:
    answer = loopback.post({"Authorization": f"Bearer {loopback.token}"})
    assert answer.status_code == 200, answer.text
    assert "serverInfo" in answer.text


def test_a_rebound_host_is_refused_even_with_the_token(loopback: Served) -> None:
    bearer = {"Authorization": f"Bearer {loopback.token}"}
    for host in (f"attacker.example:{loopback.port}", f"127.0.0.1:{loopback.port + 1}", "localhost"):
        assert loopback.post({**bearer, "Host": host}).status_code == 421, host
    assert loopback.post({**bearer, "Host": f"localhost:{loopback.port}"}).status_code == 200


def test_a_foreign_origin_is_refused_even_with_the_token(loopback: Served) -> None:
    bearer = {"Authorization": f"Bearer {loopback.token}"}
    for origin in ("http://attacker.example", f"http://attacker.example:{loopback.port}", "http://localhost:6274"):
        assert loopback.post({**bearer, "Origin": origin}).status_code == 403, origin
    assert loopback.post({**bearer, "Origin": f"http://127.0.0.1:{loopback.port}"}).status_code == 200


def test_every_interface_is_guarded_and_the_token_file_is_used(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-token-the-user-keeps-private\n")
    token_file.chmod(0o600)
    extra = ("--host", "0.0.0.0", "--token-file", str(token_file), "--allow-host", "gpu-box")
    with _serving(*extra, token="a-token-the-user-keeps-private") as served:
        bearer = {"Authorization": f"Bearer {served.token}"}
        assert served.post({}).status_code == 401
        assert served.post({"Authorization": "Bearer a-token-the-user-keeps-privatE"}).status_code == 401
        assert served.post({**bearer, "Host": f"attacker.example:{served.port}"}).status_code == 421
        assert served.post({**bearer, "Origin": "http://attacker.example"}).status_code == 403
        assert served.post(bearer).status_code == 200
        assert served.post({**bearer, "Host": f"gpu-box:{served.port}"}).status_code == 200


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a-token-the-user-keeps-private\n")
    token_file.chmod(0o644)
    command = [sys.executable, "-m", "tilescope", "mcp", "--root", str(ROOT), "--http", str(free_port())]
    done = subprocess.run(
        [*command, "--token-file", str(token_file)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "chmod 600" in done.stderr
