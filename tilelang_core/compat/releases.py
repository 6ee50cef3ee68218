"""The supported TileLang releases, and which one an interpreter has, without importing TileLang.

Reading the version from the distribution's metadata costs milliseconds; importing TileLang costs
seconds and, on a release outside the range, may fail before it can say why.
"""

from __future__ import annotations

import re
import subprocess

OLDEST = (0, 1, 10)
NEWEST = (0, 1, 15)
SUPPORTED = "0.1.10 to 0.1.15"

_PROBE = (
    "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
    "import importlib.metadata as m\n"
    "try:\n    print(m.version('tilelang'))\nexcept m.PackageNotFoundError:\n    print('')\n"
)


def parse(version: str) -> tuple[int, ...]:
    """``"0.1.12.post1+cu128"`` → ``(0, 1, 12)``: the release numbers, without suffixes."""
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(n or 0) for n in match.groups()) if match else ()


def problem(version: str | None) -> str | None:
    """Why the compiler tier cannot run with this TileLang version, or None when it can."""
    if not version:
        return f"TileLang is not installed in this interpreter; Tilescope supports TileLang {SUPPORTED}"
    if not OLDEST <= parse(version) <= NEWEST:
        return f"TileLang {version} is not supported; Tilescope supports TileLang {SUPPORTED}"
    return None


def installed_version() -> str | None:
    """This interpreter's TileLang version."""
    import importlib.metadata

    try:
        return importlib.metadata.version("tilelang")
    except importlib.metadata.PackageNotFoundError:
        return None


def interpreter_version(python: str, timeout_s: float = 30.0) -> str | None:
    """The TileLang version of another interpreter; raises ``OSError`` when it cannot be run."""
    try:
        done = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as err:
        raise OSError(f"{python} did not answer within {timeout_s:g} s") from err
    if done.returncode != 0:
        raise OSError(f"{python} exited with code {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout.strip() or None
