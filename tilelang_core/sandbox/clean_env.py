"""What a process running code Tilescope does not trust starts with: an environment and a file sandbox that
hold none of the caller's secrets.

The caller may be a grading server whose environment holds a database password and a Ray cluster's
credentials (``RAY_*``, ``~/.ray/auth_token``), with its session folder (``/tmp/ray``) beside. A
learner's or an agent's code must reach none of it, whatever it tries: so its environment is built from
an allow-list (what Python, TileLang, TVM, CUDA and torch read), never copied from the caller's; its
``HOME`` and ``TMPDIR`` are an empty private folder; and its file sandbox denies the secrets' places
(``protected``) and every other process's ``/proc`` entry (``landlock.sealing``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from tilescope.core.sandbox import landlock
from tilescope.core.sandbox.private_files import PRIVATE_PREFIX
from tilescope.core.sandbox.spawn import worker_env

_ALLOWED = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "USER",
        "LOGNAME",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE",
        "CC",
        "CXX",
        "PYTORCH_CUDA_ALLOC_CONF",
        "PYTORCH_NO_CUDA_MEMORY_CACHING",
        "TORCH_CUDA_ARCH_LIST",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
    }
)
_ALLOWED_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "NVCC_", "TILELANG_", "TVM_", "TL_", "OMP_", "MKL_", "OPENBLAS_")
_NEVER = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^KEY$|AUTH)", re.IGNORECASE)
"""Even an allowed prefix does not carry a variable whose name says it holds a secret."""
PROTECT_VARIABLE = "TILESCOPE_PROTECT"
"""Paths (``os.pathsep``-separated) a server adds to what no sandboxed process may read: its database."""


def named_protected() -> list[str]:
    """The paths this process's server named in ``TILESCOPE_PROTECT``."""
    return [p for p in os.environ.get(PROTECT_VARIABLE, "").split(os.pathsep) if p]


def protect(paths: Iterable[str]) -> None:
    """Add ``paths`` to what no sandboxed child of this process, or of the processes it starts, may read."""
    os.environ[PROTECT_VARIABLE] = os.pathsep.join(dict.fromkeys([*named_protected(), *paths]))


def allowed(name: str) -> bool:
    return (name in _ALLOWED or name.startswith(_ALLOWED_PREFIXES)) and not _NEVER.search(name)


def clean_env(private: str | os.PathLike[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child whose own folder is ``private``: the allowed variables of ``environ`` (this
    process's by default, less what an installed TileLang exported on import), ``HOME`` an empty folder made in
    ``private`` (mode 0700), and temporary files in ``private``."""
    env = {k: v for k, v in worker_env(os.environ if environ is None else environ).items() if allowed(k)}
    home = Path(private) / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    folder = str(private)
    env.update(HOME=str(home), TMPDIR=folder, TEMP=folder, TMP=folder)
    return env


def tilelang_cache(environ: Mapping[str, str] | None = None) -> str:
    """TileLang's kernel cache as this process's user has it: where a child whose ``HOME`` is a fresh folder
    that still shares compiles with others (the kernel processes of one grader) keeps them. Made here when
    missing: a sandbox made afterwards grants what exists, and its parent (a home holding ``~/.ray``) may not
    be one the child can make folders in."""
    environ = os.environ if environ is None else environ
    folder = environ.get("TILELANG_CACHE_DIR") or str(Path.home() / ".tilelang" / "cache")
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)
    return folder


def protected(keep: Iterable[str] = ()) -> list[str]:
    """Paths no sandboxed process may read: Ray's credentials and session folders, what a server named in
    ``TILESCOPE_PROTECT``, and every other Tilescope private folder in the temporary folder (other checks'
    files, other graders' submissions; named from ``PRIVATE_PREFIX``), but those in ``keep`` (the process's
    own). A user's own folder there, whatever its name, stays readable."""
    temp = tempfile.gettempdir()
    ray_roots = {"/tmp", temp, *(os.environ[v] for v in ("RAY_TMPDIR",) if os.environ.get(v))}
    paths = [str(Path.home() / ".ray"), *(os.path.join(root, "ray") for root in sorted(ray_roots))]
    paths.extend(named_protected())
    own = {os.path.realpath(k) for k in keep}
    paths.extend(p for p in glob.glob(os.path.join(temp, PRIVATE_PREFIX + "*")) if os.path.realpath(p) not in own)
    return paths


def sandbox(private: str, deny: Iterable[str] = (), write_everywhere: bool = False) -> landlock.Sandbox | None:
    """The file sandbox of a child whose own folder is ``private``: it reads nothing ``protected`` nor ``deny``
    names, and writes only ``private`` and signals no process outside it (with ``write_everywhere``, for code
    the user trusts, it writes wherever the user may, but in those places and ``/proc``, and its signals reach
    its supervisor, which reports them); None where the kernel has no Landlock."""
    if landlock.abi() < 1:
        return None
    write = [private, "/"] if write_everywhere else [private]
    return landlock.sealing([*protected(keep=[private]), *deny], write, signals=not write_everywhere)
