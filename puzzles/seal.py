"""What a learner's Python may touch while it runs: the file sandbox of every process that runs it.

A learner's kernel factory runs in the loader (``builder``) and, on the CPU path, in the core's
compiler worker. Both start in a fresh private folder (their working directory and ``TMPDIR``, the
only place they may write) and, where the kernel offers Landlock, sealed for good before their first
instruction (``tilescope.core.sandbox.landlock``, applied by the supervisor between ``fork`` and ``exec``):
nothing of the installed package, the puzzle content, the progress store or the grader can be
written; the puzzle content (each reference, with the hidden cases' generators) and the progress
store cannot be read; the grader's memory (where the hidden cases' seed lives) cannot be read, nor
the grader signalled. Landlock needs no root and no user namespaces (which many distributions turn
off for unprivileged users); where a kernel lacks it, the report says the file's code was not
sealed, and the content manifest (``manifest``) still refuses a check once anything has changed it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

from tilescope.core.compiler.service import Analyzer
from tilescope.core.sandbox import clean_env, landlock
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.puzzles.manifest import CONTENT

NOT_SEALED = (
    "file access of the file's own code: this kernel offers no Landlock, so the code could read the "
    "references and write the content (any change is caught by the content manifest, and refuses the check)"
)


def protected() -> list[str]:
    """Paths no learner code may read besides what no sandboxed code may (``clean_env.protected``): the puzzle
    content, the data folder (the progress store, a grading server's database), the grader's buffers."""
    from tilescope.puzzles.progress import data_dir

    store = data_dir() / "progress.sqlite3"
    paths = [str(CONTENT), str(data_dir()), *(f"{store}{suffix}" for suffix in ("", "-wal", "-shm", "-journal"))]
    if os.path.isdir("/dev/shm"):
        paths.append("/dev/shm")
    return paths


@cache
def available() -> bool:
    """Whether this kernel can seal a child (Landlock)."""
    return landlock.abi() > 0


def sandbox(private: str) -> landlock.Sandbox | None:
    """The sandbox of a process running learner code whose own folder is ``private``; None without Landlock."""
    return clean_env.sandbox(private, protected()) if available() else None


def private_folder(role: str) -> str:
    """A fresh, empty folder that only this child may write; ``release`` removes it."""
    return tempfile.mkdtemp(prefix=private_prefix(role))


def private_env(private: str, sealed: bool) -> dict[str, str]:
    """Temporary files go to the private folder, the one place a sealed child may write; so does TileLang's
    kernel cache for a sealed child (it makes its folders on import, and a loader compiles nothing). The
    kernel processes, whose ``HOME`` is a fresh folder too, share this user's cache: the helper that compiles
    the hidden shapes ahead leaves them there for the kernel process."""
    env = {"TMPDIR": private, "TEMP": private, "TMP": private}
    env["TILELANG_CACHE_DIR"] = str(Path(private) / "tilelang-cache") if sealed else clean_env.tilelang_cache()
    return env


def release(private: str) -> None:
    shutil.rmtree(Path(private), ignore_errors=True)


class SealedAnalyzer(Analyzer):
    """The core's analyzer for a check on the CPU path (it runs the file's factory too), sealed like the loader.
    Used by one check and ended, so its worker takes no warm-up steps: they would cost more than its one or two
    analyses could gain."""

    def __init__(self, timeout_s: float) -> None:
        self.private = private_folder("compiler")
        super().__init__(timeout_s=timeout_s, sandbox=sandbox(self.private), workdir=self.private, warm_up=False)

    def close(self) -> None:
        super().close()
        release(self.private)
