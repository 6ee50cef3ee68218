"""Hostile kernels through the running server: hover keeps answering within 1 s while one builds,
the diagnostic lands on that kernel's file, the next good file compiles, and nothing the kernel
started is left. Revoking trust and closing a file mid-build end the build cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import SERVER, execute, open_file, set_workspace_trust, start, until, within

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]
CORE_FIXTURES = Path(__file__).resolve().parents[1] / "core" / "fixtures"
HOSTILE = CORE_FIXTURES / "hostile"
GOOD = CORE_FIXTURES / "module_prim_func.py"
MARK = b"613.25"
WAIT = 120.0
TIMEOUT_S = 20


@pytest_lsp.fixture(config=SERVER, scope="module")
async def client(lsp_client: LanguageClient):
    lsp_client.statuses = []  # type: ignore[attr-defined]

    @lsp_client.feature("tilescope/status")
    def _status(params: Any) -> None:
        lsp_client.statuses.append((params.uri, params.state))  # type: ignore[attr-defined]

    # The timeout is the user's clock and covers a worker's start: after a kernel ends the worker, the next
    # file waits for a fresh one (importing TileLang), which takes over 8 s on a busy machine.
    await start(lsp_client, workspaceTrust=True, timeout=TIMEOUT_S, idle=0)
    yield
    await lsp_client.shutdown_session()


def _descendants(root: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of every live process below ``root``."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if fields[0] != b"Z":
                parents.setdefault(int(fields[1]), []).append(int(entry))
    found, frontier = [], [root]
    while frontier:
        for pid in parents.get(frontier.pop(), []):
            frontier.append(pid)
            with contextlib.suppress(OSError):
                found.append((pid, Path(f"/proc/{pid}/cmdline").read_bytes()))
    return found


def _survivors() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if MARK in Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0"):
                found.append(int(entry))
        except OSError:
            continue
    return found


def _compiler_diagnostics(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, ()) if d.source == "tilescope"]


async def _hover_param(client: LanguageClient, path: Path, uri: str) -> float:
    lines = path.read_text().splitlines()
    line = next(i for i, text in enumerate(lines) if "def main(" in text)
    where = types.Position(line=line, character=lines[line].index("A:"))
    began = time.monotonic()
    hover = await within(
        client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=where)
        ),
        timeout=5,
    )
    assert hover is not None and hover.contents.value.startswith("```text\nA: ")
    return time.monotonic() - began


CASES = [
    ("hostile/signals_parent.py", "supervised", "SIGTERM"),
    ("hostile/stray_bytes.py", "supervised", "private reply channel"),
    ("hostile/spawns.py", "supervised", "were ended"),
    ("hostile/closes_channels.py", "worker-crash", "protocol descriptors"),
    ("hostile/segfaults.py", "worker-crash", "SIGSEGV"),
    # The parent of user code is the worker's zygote: killing it ends the worker, reported as such.
    ("hostile/kills_parent.py", "worker-crash", "SIGKILL"),
    ("hostile/orphans.py", "worker-crash", "SIGKILL"),
    ("hostile/spins.py", "worker-leftovers", "spinner"),
    # The forging thread keeps the worker busy: it ends as leftovers, a forged answer never confirmed, or a
    # timeout when the hazard check's interpretation under it outlasts the timeout; either way no forged frame
    # becomes a result (the good file below).
    ("hostile/forges.py", "worker-leftovers|worker-channel|timeout", ""),
    ("hostile/stops_parent.py", "supervisor-lost", "supervisor"),
    ("hostile/allocates.py", "build-error", "out of memory"),
    ("exits.py", "worker-crash", "exited with code 3"),
    ("hangs.py", "timeout", f"did not finish within {TIMEOUT_S} s"),
]


@pytest.mark.parametrize(("name", "code", "words"), CASES, ids=[c[0] for c in CASES])
async def test_hostile_kernel_is_contained(client: LanguageClient, name: str, code: str, words: str) -> None:
    path = CORE_FIXTURES / name
    uri = open_file(client, path)
    await until(
        lambda: (uri, "analysing") in client.statuses,  # type: ignore[attr-defined]
        timeout=WAIT,
        what="the build to start",
    )
    assert await _hover_param(client, path, uri) < 1.0
    await until(lambda: bool(_compiler_diagnostics(client, uri)), timeout=WAIT, what=f"a diagnostic on {name}")
    found = [d for d in _compiler_diagnostics(client, uri) if d.code in code.split("|")]
    assert len(found) == 1 and words in found[0].message, _compiler_diagnostics(client, uri)
    assert found[0].range.start.line > 0
    assert await _hover_param(client, path, uri) < 1.0
    good = open_file(client, GOOD)
    model = await within(execute(client, "tilescope.kernelModel", good), timeout=WAIT)
    assert model["kernels"] and not model["diagnostics"] and not model["kernels"][0]["diagnostics"]
    assert not _compiler_diagnostics(client, good)
    deadline = time.monotonic() + 3
    while _survivors() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert _survivors() == []
    assert client.error is None
    _close(client, uri, good)


STATE = ["patches_json.py", "patches_tilelang.py", "installs_import_hook.py", "patches_tilescope.py"]


@pytest.mark.parametrize("name", STATE)
async def test_state_a_kernel_leaves_never_reaches_the_next_model(client: LanguageClient, name: str) -> None:
    """A kernel that patches ``json.dumps``, TileLang, the import system or a Tilescope global, and leaves no
    thread: the next file's model (``tilescope.kernelModel``) is still that file's."""
    uri = open_file(client, HOSTILE / name)
    model = await within(execute(client, "tilescope.kernelModel", uri), timeout=WAIT)
    assert model["kernels"]
    good = open_file(client, GOOD, text=GOOD.read_text() + f"# after {name}\n")
    model = await within(execute(client, "tilescope.kernelModel", good), timeout=WAIT)
    (kernel,) = model["kernels"]
    assert kernel["kernel"] == "double" and kernel["launch"]["threads"] == 128, kernel.get("kernel")
    assert not model["diagnostics"] and not kernel["diagnostics"]
    _close(client, uri, good)


async def test_a_sigterm_to_the_server_from_a_kernel_is_ignored(client: LanguageClient) -> None:
    """The kernel's grandparent is the server: its SIGTERM is ignored, the build goes on."""
    server = client._server.pid  # type: ignore[attr-defined]
    path = HOSTILE / "signals_grandparent.py"
    uri = open_file(client, path)
    await until(lambda: (uri, "analysing") in client.statuses, timeout=WAIT, what="the build")  # type: ignore[attr-defined]
    good = open_file(client, GOOD)
    model = await within(execute(client, "tilescope.kernelModel", good), timeout=WAIT)
    assert model["kernels"] and not model["diagnostics"]
    assert await _hover_param(client, path, uri) < 1.0
    assert client._server.returncode is None and Path(f"/proc/{server}").exists()  # type: ignore[attr-defined]
    _close(client, uri, good)


def _close(client: LanguageClient, *uris: str) -> None:
    """Closed, so that later setting changes do not build these files again."""
    for uri in uris:
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


async def test_revoking_trust_ends_the_worker_mid_build(client: LanguageClient) -> None:
    server = client._server.pid  # type: ignore[attr-defined]
    path = CORE_FIXTURES / "hangs.py"
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"timeout": 60}))
    uri = open_file(client, path, text=path.read_text() + "\n# revoked\n")
    await until(lambda: (uri, "analysing") in client.statuses, timeout=WAIT, what="the build")  # type: ignore[attr-defined]
    await until(
        lambda: any(b"tilescope.core.worker.main" in cmd for _, cmd in _descendants(server)),
        timeout=5,
        what="the worker",
    )
    set_workspace_trust(client, False)
    try:
        # Well before the build's own 60 s limit, however busy the machine (5 s was too little on a CI run).
        await until(lambda: not _descendants(server), timeout=20, what="the worker's processes to end")
        assert _compiler_diagnostics(client, uri) == []
        assert await _hover_param(client, path, uri) < 1.0
    finally:  # the module's other tests share this server
        set_workspace_trust(client, True)
        settings = {"timeout": TIMEOUT_S}
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))


async def test_closing_a_file_mid_build_is_clean(client: LanguageClient) -> None:
    path = CORE_FIXTURES / "hangs.py"
    uri = open_file(client, path, text=path.read_text() + "\n# closed\n")
    await until(lambda: (uri, "analysing") in client.statuses, timeout=WAIT, what="the build")  # type: ignore[attr-defined]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    good = open_file(client, GOOD)
    model = await within(execute(client, "tilescope.kernelModel", good), timeout=WAIT)
    assert model["kernels"]
    assert not client.diagnostics.get(uri)
    assert not [m for m in client.log_messages if m.type == types.MessageType.Error]
