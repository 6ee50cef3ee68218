"""The dry run through the editor: a trusted workspace learns the sizes the source does not give from
the program's own run and says where they came from; an untrusted one never runs it; the setting
turns it off."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.conftest import TILESCOPE, open_file, set_workspace_trust, start, until, within

pytestmark = [pytest.mark.asyncio(loop_scope="function"), pytest.mark.slow]
SIZES = Path(__file__).resolve().parents[1] / "core" / "fixtures" / "dry_run" / "sizes_from_run.py"
SCRATCH = Path(tempfile.mkdtemp(prefix="tilescope-dry-run-lsp-"))
SERVER = ClientServerConfig(
    server_command=[TILESCOPE, "lsp", "--stdio"],
    server_env={**os.environ, "TILESCOPE_CACHE_DIR": str(SCRATCH / "cache")},
)
WAIT_S = 180.0


def program(folder: Path) -> tuple[Path, Path]:
    """The fixture, made to leave a mark beside itself when its ``main()`` runs."""
    folder.mkdir(parents=True, exist_ok=True)
    path, marker = folder / "sizes.py", folder / "ran.marker"
    text = SIZES.read_text().replace(
        "def main(args):\n",
        "def main(args):\n    __import__('pathlib').Path(__file__).with_name('ran.marker').touch()\n",
    )
    path.write_text(text)
    return path, marker


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=False)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def trusted(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=120)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def opted_out(lsp_client: LanguageClient):
    await start(lsp_client, workspaceTrust=True, timeout=120, dryRun=False)
    yield
    await lsp_client.shutdown_session()


async def test_an_untrusted_workspace_never_runs_the_program(untrusted: LanguageClient) -> None:
    path, marker = program(SCRATCH / "untrusted")
    uri = open_file(untrusted, path)
    await until(lambda: uri in untrusted.diagnostics, what="static diagnostics")
    untrusted.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    await asyncio.sleep(8)
    assert not marker.exists()
    assert not (SCRATCH / "cache" / "dry-run").exists()


async def test_a_trusted_workspace_learns_the_sizes_and_hover_says_where_from(trusted: LanguageClient) -> None:
    path, marker = program(SCRATCH / "trusted")
    uri = open_file(trusted, path)

    def waiting() -> bool:  # the first analysis does not wait for the dry run: it says the run is under way
        return any("is under way" in d.message for d in trusted.diagnostics.get(uri, ()))

    await until(waiting, timeout=WAIT_S, what="a kernel waiting for the dry run")
    line = next(i for i, text in enumerate(path.read_text().splitlines()) if "B[bx * block_M + i, j] = A" in text)
    column = path.read_text().splitlines()[line].index("A[") + 1
    where = types.HoverParams(text_document=types.TextDocumentIdentifier(uri), position=types.Position(line, column))
    text = ""

    async def compiled() -> bool:
        nonlocal text
        hover = await within(trusted.text_document_hover_async(where))
        text = hover.contents.value if hover else ""
        return "(compiled facts)" in text and "dry run of main()" in text

    deadline = asyncio.get_running_loop().time() + WAIT_S
    while not await compiled():
        assert asyncio.get_running_loop().time() < deadline, text
        await asyncio.sleep(0.5)
    assert marker.exists()
    assert "A: 384×256 float16 global" in text
    assert "M=384 (dry run of main(), line 27, fake H100), N=256 (dry run of main(), line 27, fake H100)" in text


async def test_the_setting_turns_the_dry_run_off(opted_out: LanguageClient) -> None:
    path, marker = program(SCRATCH / "opted_out")
    uri = open_file(opted_out, path)

    def missing() -> bool:
        return any(d.code == "missing-args" for d in opted_out.diagnostics.get(uri, ()))

    await until(missing, timeout=WAIT_S, what="the compiler tier's missing-args warning")
    assert not marker.exists()


async def test_revoking_trust_ends_a_dry_run_under_way(trusted: LanguageClient) -> None:
    folder = SCRATCH / "revoked"
    path, _ = program(folder)
    pid_file = folder / "pid"
    stalls = "    Path(__file__).with_name('pid').write_text(str(os.getpid()))\n    time.sleep(600)\n"
    path.write_text(
        "import os\nimport time\nfrom pathlib import Path\n"
        + path.read_text().replace("def main(args):\n", "def main(args):\n" + stalls)
    )
    open_file(trusted, path)
    # The program creates the file, then writes its pid: wait for the number, not the empty file.
    await until(lambda: pid_file.exists() and pid_file.read_text().strip() != "", timeout=WAIT_S, what="the dry run")
    pid = int(pid_file.read_text())
    set_workspace_trust(trusted, False)
    await until(lambda: not _alive(pid), timeout=15, what="the dry run to end")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"
