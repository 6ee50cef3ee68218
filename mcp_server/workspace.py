"""The one folder an agent may name, and the private scratch folder for the source text it sends.

Paths are resolved (symlinks followed) before they are compared with the root, so neither ``..``
nor a link inside the workspace reaches outside it. Source text is written, never executed here:
a sealed compiler worker analyses it (``tools.Session.source_analyzer``), which writes only a folder
of its own, reads none of the server's secrets and has no network. The scratch folder is made with
``mkdtemp`` (mode 0700, owned by this user) for this server alone and removed when it stops; each
file in it is created with ``O_EXCL|O_NOFOLLOW``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from tilescope.core.sandbox.private_files import private_prefix

MAX_SOURCE_BYTES = 1 << 20
"""Source text larger than this is refused: the largest file of TileLang's examples is 60 KB."""


class Refused(ValueError):
    """A request the server will not carry out; the message says why, in the agent's terms."""


class Workspace:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        root_path = Path(root).expanduser().resolve()
        if not root_path.is_dir():
            raise Refused(f"the workspace root {root_path} is not a folder")
        self.root = root_path
        self._scratch: Path | None = None

    def file(self, path: str) -> Path:
        """The workspace file ``path`` names (relative to the root, or absolute inside it)."""
        if not path or "\x00" in path:
            raise Refused("a path must be a non-empty string without NUL characters")
        candidate = Path(path)
        resolved = (candidate if candidate.is_absolute() else self.root / candidate).resolve()
        if not resolved.is_relative_to(self.root):
            raise Refused(f"{path!r} is outside the workspace root {self.root}; only files inside it are analysed")
        if not resolved.is_file():
            raise Refused(f"{path!r} is not a file in the workspace (looked at {resolved})")
        return resolved

    def relative(self, path: str | os.PathLike[str]) -> str:
        """How answers name a file: relative to the root where it is inside, else as given."""
        resolved = Path(path)
        return str(resolved.relative_to(self.root)) if resolved.is_relative_to(self.root) else str(resolved)

    def write_source(self, source: str) -> Path:
        """A private file holding ``source``, named by its hash so equal texts share one analysis."""
        data = source.encode("utf-8", "surrogatepass")
        if len(data) > MAX_SOURCE_BYTES:
            raise Refused(
                f"the source is {len(data):,} bytes; at most {MAX_SOURCE_BYTES:,} are analysed "
                "(write it into the workspace and pass its path instead)"
            )
        target = self.scratch() / f"source_{hashlib.sha256(data).hexdigest()[:16]}.py"
        if target.is_file():
            return target
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return target

    def scratch(self) -> Path:
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix=private_prefix("mcp")))
        info = self._scratch.lstat()
        if info.st_uid != os.getuid() or info.st_mode & 0o077 or self._scratch.is_symlink():
            raise Refused(f"the scratch folder {self._scratch} is no longer private; refusing to write there")
        return self._scratch

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
