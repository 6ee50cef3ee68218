"""Trust comes from the user, never from the project: the editor's own verdict (the VS Code
extension's ``workspaceTrust``), else the user's trust list (``tilescope trust DIR``). A ``trusted``
setting, pushed or pulled, is what a project-local settings file would send, and trusts nothing.

Each session's trust list lives in its own ``XDG_CONFIG_HOME``, so the test runner's own list never
decides. A session is trusted when the server offers code lenses (they run the compiler); its
``idle`` is long enough that the compiler tier never builds the file meanwhile.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from tilescope.lsp import trust_list

from tests.lsp.conftest import EXAMPLES, ROOT, TILESCOPE, open_file, set_workspace_trust, start, until, within

UNLISTED = Path(tempfile.mkdtemp(prefix="tilescope-trust-unlisted-"))
LISTED = Path(tempfile.mkdtemp(prefix="tilescope-trust-listed-"))
NO_BUILD = {"idle": 3600, "dryRun": False}


def _server(config_home: Path) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=[TILESCOPE, "lsp", "--stdio"], server_env={**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    )


def _trust(config_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tilescope trust ...`` as the user runs it, with this test's configuration folder."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home)}
    return subprocess.run([TILESCOPE, "trust", *args], env=env, capture_output=True, text=True, timeout=60)


async def _trusted(client: LanguageClient) -> bool:
    uri = (EXAMPLES / "gemm.py").resolve().as_uri()
    if uri not in client.diagnostics:
        open_file(client, EXAMPLES / "gemm.py")
        await until(lambda: uri in client.diagnostics, what="the static diagnostics")
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    return bool(await within(client.text_document_code_lens_async(params)))


@pytest_lsp.fixture(config=_server(UNLISTED))
async def project_settings(lsp_client: LanguageClient):
    """Neovim, no trust list, and ``trusted = true`` where the old README put it."""
    await start(lsp_client, editor="neovim", trusted=True, **NO_BUILD)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_server(LISTED))
async def listed(lsp_client: LanguageClient):
    """Neovim, with the workspace beneath a folder the user listed."""
    done = _trust(LISTED, str(ROOT.parent))
    assert done.returncode == 0, done.stderr
    await start(lsp_client, editor="neovim", **NO_BUILD)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_server(UNLISTED))
async def vscode(lsp_client: LanguageClient):
    """The VS Code extension in a trusted window: ``workspaceTrust`` from ``workspace.isTrusted``."""
    await start(lsp_client, workspaceTrust=True, **NO_BUILD)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=_server(LISTED))
async def restricted_but_listed(lsp_client: LanguageClient):
    """VS Code in restricted mode, in a folder the user's list covers."""
    done = _trust(LISTED, str(ROOT))
    assert done.returncode == 0, done.stderr
    await start(lsp_client, workspaceTrust=False, **NO_BUILD)
    yield
    await lsp_client.shutdown_session()


async def test_a_trusted_setting_pushed_or_pulled_does_not_trust(project_settings: LanguageClient) -> None:
    client = project_settings
    assert not await _trusted(client)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"trusted": True}})
    )
    assert not await _trusted(client)
    # A pull: the answer's `target` is adopted (the budget warning appears), its `trusted` is not.
    budgets = ROOT / "tests" / "lsp" / "fixtures" / "budgets.py"
    uri = open_file(client, budgets, text=budgets.read_text().replace("stages=4", "stages=3"))
    client.set_configuration({"trusted": True, "target": "sm_80"}, section="tilescope")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await until(lambda: "shared-memory" in [d.code for d in client.diagnostics.get(uri, [])], what="the pull")
    assert not await _trusted(client)
    ignored = [m.message for m in client.log_messages if "`trusted` setting is ignored" in m.message]
    assert len(ignored) == 1 and "tilescope trust DIR" in ignored[0]


async def test_the_trust_list_trusts_a_workspace_beneath_a_listed_folder(listed: LanguageClient) -> None:
    assert await _trusted(listed)
    assert not [m for m in listed.messages if "not trusted" in m.message]


async def test_the_vscode_extensions_verdict_trusts_and_revokes(vscode: LanguageClient) -> None:
    assert await _trusted(vscode)
    set_workspace_trust(vscode, False)
    await until(lambda: any("not trusted" in m.message for m in vscode.messages), what="the untrusted notice")
    assert not await _trusted(vscode)
    vscode.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilescope": {"trusted": True}})
    )
    assert not await _trusted(vscode)


async def test_the_editors_restricted_mode_outranks_the_trust_list(restricted_but_listed: LanguageClient) -> None:
    assert not await _trusted(restricted_but_listed)


def test_the_trust_command_keeps_a_private_list(tmp_path: Path) -> None:
    home, project = tmp_path / "config", tmp_path / "project"
    (project / "kernels").mkdir(parents=True)
    (tmp_path / "link").symlink_to(project)
    added = _trust(home, str(tmp_path / "link"))
    assert added.returncode == 0, added.stderr
    listing = home / "tilescope" / "trusted-folders"
    assert listing.read_text() == f"{project.resolve()}\n"
    assert listing.stat().st_mode & 0o777 == 0o600 and listing.parent.stat().st_mode & 0o777 == 0o700
    assert _trust(home, "--list").stdout == f"{project.resolve()}\n"
    assert trust_list.covers(project / "kernels", trust_list.listed(listing))
    assert not trust_list.covers(tmp_path, trust_list.listed(listing))
    assert _trust(home, str(tmp_path / "missing")).returncode == 2
    removed = _trust(home, "--remove", str(project))
    assert removed.returncode == 0 and _trust(home, "--list").stdout == ""
    assert _trust(home, "--remove", str(project)).returncode == 1


def test_a_trust_list_others_can_write_is_ignored(tmp_path: Path) -> None:
    listing = tmp_path / "trusted-folders"
    listing.write_text(f"{tmp_path}\n")
    listing.chmod(0o600)
    assert trust_list.listed(listing) == (tmp_path,)
    listing.chmod(0o620)
    assert trust_list.listed(listing) == ()
