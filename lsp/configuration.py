"""``initialize`` options, ``workspace/didChangeConfiguration`` and trust: target, hints, timeout,
interpreter. A change notification without settings makes the server pull the ``tilescope``
section with ``workspace/configuration``; a change re-analyses every open document. Revoking
trust stops the compiler worker at once; ``shutdown`` stops it too.

Trust (whether the compiler tier may import and run the user's files) comes from the user, never
from the project: the editor's own verdict, which an editor extension sends as the
``workspaceTrust`` initialization option and then as ``tilescope/didChangeWorkspaceTrust``
(VS Code's ``workspace.isTrusted`` and ``onDidGrantWorkspaceTrust``), or else the user's trust
list (``tilescope trust DIR``) covering every workspace folder. A ``trusted`` setting, in
``didChangeConfiguration`` or a ``workspace/configuration`` answer, is ignored: clients fill those
from project files (``.vscode/settings.json``, ``.neoconf.json``, ``.dir-locals.el``). The
initialization options and the command line belong to how the editor starts the server, which
editors keep as the user's code.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

from lsprotocol import types
from pygls.uris import to_fs_path
from tilescope.core.static import use_interpreter
from tilescope.lsp import diagnostics, trust_list
from tilescope.lsp.server import TilescopeServer
from tilescope.lsp.settings import SECTION, Settings, asks_for_trust, merged

CLIENT_TRUST_OPTION = "workspaceTrust"
"""The initialization option with the editor's own trust verdict (a boolean)."""
WORKSPACE_TRUST = "tilescope/didChangeWorkspaceTrust"
"""The notification of a new verdict, ``{"trusted": bool}``: VS Code grants trust without a reload."""


def _folders(ls: TilescopeServer) -> list[Path] | None:
    """The workspace's folders on disk; None when it has none, or one that is not a local folder."""
    uris = [folder.uri for folder in ls.workspace.folders.values()] or [ls.workspace.root_uri]
    paths = [to_fs_path(uri) if uri and urlparse(uri).scheme == "file" else None for uri in uris]
    return [Path(path) for path in paths if path] if all(paths) else None


def trusted(ls: TilescopeServer) -> bool:
    """The editor's verdict when it gave one; else whether the user's trust list covers every folder."""
    if ls.client_trust is not None:
        return ls.client_trust
    folders = _folders(ls)
    listed = trust_list.listed()
    return bool(folders) and all(trust_list.covers(folder, listed) for folder in folders or ())


def _client_trust(options: Any) -> bool | None:
    verdict: object = cast("dict[str, object]", options).get(CLIENT_TRUST_OPTION) if isinstance(options, dict) else None
    return verdict if isinstance(verdict, bool) else None


def initialize(ls: TilescopeServer, params: types.InitializeParams) -> None:
    """Trusted: the compiler worker starts now (it imports TileLang: seconds), while the client finishes
    starting and opens its first file; every file then shares it."""
    options = params.initialization_options
    if asks_for_trust(options):
        ls.note_ignored_trust_setting_once()
    ls.client_trust = _client_trust(options)
    ls.settings = replace(merged(ls.settings, options), trusted=trusted(ls))
    # Names, signatures and checks of the release the code runs with; an untrusted interpreter is not run.
    use_interpreter(ls.settings.python, run=ls.settings.trusted)
    ls.compiler.warm()


def shutdown(ls: TilescopeServer, params: None) -> None:
    ls.compiler.close()


async def did_change_configuration(ls: TilescopeServer, params: types.DidChangeConfigurationParams) -> None:
    raw = params.settings
    capabilities = ls.client_capabilities.workspace
    if not raw and capabilities and capabilities.configuration:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
        raw = answer[0] if answer else None
    if asks_for_trust(raw):
        ls.note_ignored_trust_setting_once()
    apply(ls, merged(ls.settings, raw))


def did_change_workspace_trust(ls: TilescopeServer, params: Any) -> None:
    """The editor's own verdict changed (VS Code granted trust): adopt it, with no restart."""
    verdict = getattr(params, "trusted", None)
    if isinstance(verdict, bool):
        ls.client_trust = verdict
        apply(ls, replace(ls.settings, trusted=trusted(ls)))


def did_change_workspace_folders(ls: TilescopeServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    """A folder came or went: the trust list must cover the new set (pygls has updated the folders)."""
    apply(ls, replace(ls.settings, trusted=trusted(ls)))


def apply(ls: TilescopeServer, settings: Settings) -> None:
    """Adopt new settings and bring every open document up to date with them."""
    before, ls.settings = ls.settings, settings
    if settings == before:
        return
    if (settings.python, settings.trusted) != (before.python, before.trusted):
        use_interpreter(settings.python, run=settings.trusted)
        ls.documents.reread()
    if before.trusted and not settings.trusted:
        ls.compiler.stop()
        ls.documents.compiled.clear()
        ls.hint_answers.clear()
    for uri in list(ls.workspace.text_documents):
        diagnostics.publish(ls, uri)
        if settings.trusted:
            ls.compiler.schedule(uri, delay=0)
    if settings.trusted and not before.trusted:
        ls.compiler.warm()
    ls.notify_untrusted_once()
    capabilities = ls.client_capabilities.workspace
    if capabilities and capabilities.inlay_hint and capabilities.inlay_hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)
    if capabilities and capabilities.code_lens and capabilities.code_lens.refresh_support:
        ls.workspace_code_lens_refresh(None)
