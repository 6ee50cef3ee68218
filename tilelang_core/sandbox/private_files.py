"""Files written for the user to open (a kernel's CUDA, its passes), where no one else can reach them.

The folder is made with ``mkdtemp`` (mode 0700, a name no one can predict) once per process and
checked for owner and mode before every write; a folder that is no longer this user's alone is
abandoned for a fresh one. Files are created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to the
folder's descriptor, after removing the previous file of that name (a link, if someone managed to
place one, is removed, never followed). Never a shared, predictable path such as ``/tmp/tilescope-<uid>``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
import threading
from pathlib import Path

PRIVATE_PREFIX = "tilescope-private-"
"""The start of the name of every folder Tilescope makes in the temporary folder for one process's own files
(a worker's, a dry run's, a grading's): every sandbox hides all such folders but its own
(``clean_env.protected``), and only those, so a user's project that lives in ``/tmp/tilescope-demo`` is still
readable by the analysis of its own files."""


def private_prefix(purpose: str) -> str:
    """The ``mkdtemp`` prefix of a private folder made for ``purpose`` (``worker``, ``dry-run``, ...)."""
    return f"{PRIVATE_PREFIX}{purpose}-"


class NotPrivate(OSError):
    """The folder is not this user's alone (another owner, or readable or writable by others)."""


class PrivateFolder:
    def __init__(self, prefix: str = PRIVATE_PREFIX) -> None:
        self.prefix = prefix
        self._path: Path | None = None
        self._lock = threading.Lock()

    def path(self) -> Path:
        """The folder, made on first use, or made anew when the old one is gone or no longer private."""
        with self._lock:
            if self._path is not None:
                try:
                    _check(os.lstat(self._path))
                    return self._path
                except OSError:
                    pass
            self._path = Path(tempfile.mkdtemp(prefix=self.prefix))
            return self._path

    def write(self, name: str, text: str) -> Path:
        """Write ``text`` to a file called ``name`` (made safe) in the folder; its path."""
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "file"
        folder = self.path()
        flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_NOFOLLOW
        directory = os.open(folder, flags)
        try:
            _check(os.fstat(directory))
            with contextlib.suppress(FileNotFoundError):
                os.unlink(safe, dir_fd=directory)
            fd = os.open(safe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=directory)
        finally:
            os.close(directory)
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogatepass") as handle:
            handle.write(text)
        return folder / safe


def _check(info: os.stat_result) -> None:
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise NotPrivate("the folder for files shown to the user is not private")
