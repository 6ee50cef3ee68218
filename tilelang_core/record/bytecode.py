"""Bytecode for the dry run's ``python -O``, written by Tilescope because the dry run itself may not.

pip compiles what it installs for plain ``python`` only; ``python -O`` reads bytecode files of its own
(``*.opt-1.pyc``), and the dry run's sealed child may write nothing outside its folder. So every dry run
compiled TileLang, torch and numpy from source again: about 2.8 of the CPU seconds a GEMM file's dry run
takes. The hook names the installed modules the program imported without such bytecode (``hook_program.
uncompiled``); after the run, Tilescope compiles those with the program's interpreter, outside the seal:
``python -O -I -S -m compileall``, isolated and without ``site`` (no ``.pth`` file runs), which compiles
sources and imports none of them. Only the dry run, which runs trusted code, asks for it; only existing
``.py`` files under a ``site-packages`` or ``dist-packages`` folder are compiled.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterable

MOST = 20_000
"""Files compiled at most after one run (an environment's worth: torch and TileLang import about 2,500)."""
TIMEOUT_S = 300.0


def installed_sources(named: Iterable[object]) -> list[str]:
    """What Tilescope compiles of the files a run's hook named: existing installed Python sources."""
    found: set[str] = set()
    for file in named:
        if not isinstance(file, str) or not file.endswith(".py") or not os.path.isabs(file):
            continue
        parts = file.split(os.sep)
        if ("site-packages" in parts or "dist-packages" in parts) and os.path.isfile(file):
            found.add(file)
    return sorted(found)[:MOST]


def compile_optimized(python: str, files: list[str]) -> threading.Thread | None:
    """Compile ``files`` for ``python -O`` with that interpreter, in the background (a thread feeds the list and
    reaps the compiler); the thread, or None when there is nothing to compile or the interpreter cannot start."""
    if not files:
        return None
    try:
        process = subprocess.Popen(
            [python, "-O", "-I", "-S", "-m", "compileall", "-q", "-i", "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a terminal's Ctrl-C for the command is not meant for it
        )
    except OSError:
        return None

    def feed_and_reap() -> None:
        try:
            process.communicate("\n".join(files).encode(), timeout=TIMEOUT_S)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    thread = threading.Thread(target=feed_and_reap, name="tilescope-bytecode", daemon=True)
    thread.start()
    return thread
