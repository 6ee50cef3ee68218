"""The user's list of trusted folders (``tilescope trust DIR``), for editors without a trust model.

The compiler tier imports and runs the user's file, so the language server runs code only in a
workspace the user trusts. VS Code says so itself (``workspace.isTrusted``); Neovim, Emacs and
Helix have no such verdict, and what they send as settings is often read from files inside the
project (``.neoconf.json``, ``.dir-locals.el``), so a setting would let a repository trust itself.
This list is what such editors use instead, as direnv and mise keep theirs: one real path per line
in a file in the user's configuration folder, written only by ``tilescope trust`` with mode 0600,
and not read at all when another user could have written it. A folder is trusted when it, or a
folder above it, is listed (both compared as resolved real paths).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

import platformdirs

log = logging.getLogger(__name__)

FILE_NAME = "trusted-folders"


class TrustListError(Exception):
    """The folder cannot be listed, or the list cannot be written (the message says why)."""


def list_path() -> Path:
    """Where the list lives: the user's configuration folder (``$XDG_CONFIG_HOME/tilescope`` on Linux)."""
    return platformdirs.user_config_path("tilescope") / FILE_NAME


def _safe(path: Path) -> bool:
    """Only the user can have written the list: owned by them, writable by no one else."""
    info = path.stat()
    if os.name != "posix":
        return True
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def listed(path: Path | None = None) -> tuple[Path, ...]:
    """The trusted folders; none when the list is missing, unreadable, or open to other users."""
    path = path or list_path()
    try:
        if not _safe(path):
            log.warning("ignoring the trust list %s: another user could have written it (chmod 600 it)", path)
            return ()
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ()
    except (OSError, UnicodeDecodeError) as err:
        log.warning("ignoring the trust list %s: %s", path, err)
        return ()
    return tuple(Path(line) for line in text.splitlines() if Path(line).is_absolute())


def covers(folder: Path, trusted: Iterable[Path]) -> bool:
    """Whether ``folder`` (resolved here) is a listed folder or lies beneath one."""
    real = folder.resolve()
    return any(real == entry or entry in real.parents for entry in trusted)


def _real_folder(folder: Path) -> Path:
    real = folder.expanduser().resolve()
    if not real.is_dir():
        raise TrustListError(f"{folder} is not a folder")
    if "\n" in str(real) or "\r" in str(real):
        raise TrustListError(f"{real!r}: a folder whose name holds a line break cannot be listed")
    return real


def _write(entries: Iterable[Path], path: Path) -> None:
    """Replace the list in one step (a temporary file renamed over it), created 0600 in a 0700 folder."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{FILE_NAME}.")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.writelines(f"{entry}\n" for entry in entries)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def add(folder: Path, path: Path | None = None) -> Path:
    """List ``folder`` (its real path, which is returned); listing it again changes nothing."""
    path = path or list_path()
    real = _real_folder(folder)
    entries = listed(path)
    if real not in entries:
        try:
            _write([*entries, real], path)
        except OSError as err:
            raise TrustListError(f"cannot write the trust list {path}: {err.strerror or err}") from err
    return real


def remove(folder: Path, path: Path | None = None) -> Path | None:
    """Unlist ``folder``; its real path, or None when it was not listed."""
    path = path or list_path()
    real = folder.expanduser().resolve()
    entries = listed(path)
    if real not in entries:
        return None
    try:
        _write([entry for entry in entries if entry != real], path)
    except OSError as err:
        raise TrustListError(f"cannot write the trust list {path}: {err.strerror or err}") from err
    return real
