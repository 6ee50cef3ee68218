"""The ``tilelang.language`` catalog (names, signatures, docstrings) of the TileLang release in use,
with each backend dialect it ships (``tilelang.ascend.language``: the common surface, Ascend's own
allocators and regions, less CUDA's intrinsics).

Read from that release's sources by ``catalog_source`` (never imported), once per release: the
result is kept in memory and on disk (``$TILESCOPE_CACHE_DIR``, else ``~/.cache/tilescope``), keyed
by version and location. Without an installed TileLang the shipped ``primitives.json`` (TileLang
0.1.15, read the same way by ``build_catalog``) stands in.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tilescope.core.static.catalog_source import read_catalog, release_version

SHIPPED = Path(__file__).with_name("primitives.json")
_FORMAT = 4
"""Bumped when the cached catalogs' shape changes, so old caches are not read."""
PrimitiveKind = Literal["function", "class", "module", "dtype", "value"]
ParamKind = Literal["positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"]
"""An ``inspect.Parameter`` kind in lower case."""


@dataclass(frozen=True)
class PrimitiveParam:
    name: str
    kind: ParamKind
    default: str | None


@dataclass(frozen=True)
class Primitive:
    """One public name of ``tilelang.language``."""

    name: str
    kind: PrimitiveKind
    doc: str
    signature: str | None
    params: tuple[PrimitiveParam, ...] | None
    """``None`` when the signature could not be read."""
    keyword_first: str | None = None
    """A keyword TileLang's wrapper moves to the front of the positional arguments (``_dtype_forward``:
    ``T.call_extern(name, *args, dtype=d)`` calls ``call_extern(d, name, *args)``)."""
    keyword_ignored: str | None = None
    """A keyword TileLang's wrapper accepts and drops (``_op_wrapper``)."""
    members: tuple[Primitive, ...] | None = None
    """A module a dialect exports by name (``T.simd``): its own names; ``None`` for any other entry."""

    def member(self, name: str) -> Primitive | None:
        return next((m for m in self.members or () if m.name == name), None)

    @property
    def summary(self) -> str:
        return self.doc.split("\n\n", 1)[0].replace("\n", " ") if self.doc else ""


class Catalog:
    """The names of one release, looked up by the static checks, hover and completion."""

    def __init__(
        self,
        version: str,
        table: dict[str, Primitive],
        module: str = "tilelang.language",
        dialects: dict[str, Catalog] | None = None,
        installed: bool = True,
        submodules: frozenset[str] = frozenset(),
    ) -> None:
        self.version = version
        self.table = table
        self.module = module
        """The module whose names ``table`` holds."""
        self.dialects = dialects or {}
        self.submodules = submodules
        self.installed = installed
        """Read from a TileLang the user's interpreter has, not the shipped stand-in: what it lacks,
        the user's release lacks."""

    @classmethod
    def from_json(cls, data: dict[str, Any], installed: bool = True) -> Catalog:
        version = data["tilelang_version"]
        table = {name: _primitive(name, entry) for name, entry in data["names"].items()}
        dialects: dict[str, Catalog] = {}
        for dialect, surface in data.get("dialects", {}).items():
            absent = set(surface["absent"])
            own = {name: _primitive(name, entry) for name, entry in surface["names"].items()}
            merged = {n: p for n, p in table.items() if n not in absent} | own
            dialects[dialect] = cls(
                version,
                dict(sorted(merged.items())),
                surface["module"],
                installed=installed,
                submodules=frozenset(surface.get("submodules", ())),
            )
        return cls(
            version, table, dialects=dialects, installed=installed, submodules=frozenset(data.get("submodules", ()))
        )

    def dialect(self, name: str | None) -> Catalog:
        """The catalog of ``tilelang.<name>.language`` (``None``, or a dialect this release lacks:
        ``tilelang.language``'s)."""
        return self.dialects.get(name, self) if name else self

    @functools.cached_property
    def scopes(self) -> dict[str, str]:
        """The memory scope each allocator gives by default, read from its ``scope`` parameter
        (``alloc_l1(shape, dtype, scope="shared.l1")``): how a dialect's own allocators are known."""
        found: dict[str, str] = {}
        for name, primitive in self.table.items():
            default = next((p.default for p in primitive.params or () if p.name == "scope"), None)
            if name.startswith("alloc_") and default and default[0] in "'\"" and default[-1] == default[0]:
                found[name] = default[1:-1]
        return found

    def homes(self, name: str) -> list[str]:
        """The language modules of this release that have ``name`` (``tilelang.language`` first)."""
        found = [self.module] if name in self.table else []
        return found + sorted(c.module for c in self.dialects.values() if name in c.table and c.module not in found)

    def lookup(self, name: str) -> Primitive | None:
        """``T.<name>``, or a module member's ``simd.vadd``."""
        owner, _, member = name.partition(".")
        found = self.table.get(owner)
        return found.member(member) if member and found is not None else found

    def closest(self, name: str) -> str | None:
        """The catalog name a misspelt ``name`` most likely meant."""
        matches = difflib.get_close_matches(name, self.table.keys(), n=1, cutoff=0.75)
        return matches[0] if matches else None


def _primitive(name: str, entry: dict[str, Any]) -> Primitive:
    params = entry.get("params")
    members = entry.get("members")
    return Primitive(
        name=name,
        kind=entry["kind"],
        doc=entry.get("doc", ""),
        signature=entry.get("signature"),
        params=None if params is None else tuple(PrimitiveParam(**p) for p in params),
        keyword_first=entry.get("keyword_first"),
        keyword_ignored=entry.get("keyword_ignored"),
        members=None if members is None else tuple(_primitive(n, e) for n, e in members.items()),
    )


def installed_package() -> Path | None:
    """Where this interpreter would import ``tilelang`` from, found without importing it."""
    try:
        spec = importlib.util.find_spec("tilelang")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _cache_dir() -> Path:
    configured = os.environ.get("TILESCOPE_CACHE_DIR")
    return Path(configured) if configured else Path.home() / ".cache" / "tilescope"


def _cache_name(package: Path, version: str) -> str:
    digest = hashlib.sha1(f"{_FORMAT}\0{package.resolve()}".encode()).hexdigest()[:12]
    return f"catalog-{version}-{digest}.json"


def seed(python: str, folder: Path) -> Path:
    """Make ``folder`` a compiler worker's own catalog cache holding the cached catalog of ``python``'s TileLang,
    when there is one; returns ``folder``. A worker's ``HOME`` is a new empty folder each time, where it would
    read TileLang's sources again for the catalog (0.7 s of every worker's start); it is given the one file it
    needs, not the user's cache (which also holds other projects' dry-run results)."""
    package = package_beside(python) or (installed_package() if python == sys.executable else None)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        if package is not None:
            name = _cache_name(package, release_version(package))
            shutil.copyfile(_cache_dir() / name, folder / name)
    return folder


_lock = threading.Lock()
_loaded: dict[str, Catalog] = {}


def catalog_for(package: Path) -> Catalog:
    """The catalog of the TileLang installed at ``package`` (``.../site-packages/tilelang``)."""
    key = str(package.resolve())
    with _lock:
        found = _loaded.get(key)
        if found is not None:
            return found
        version = release_version(package)
        cached = _cache_dir() / _cache_name(package, version)
        data: dict[str, Any] | None = None
        try:
            data = json.loads(cached.read_text())
        except (OSError, ValueError):
            data = None
        if data is None or data.get("tilelang_version") != version:
            data = read_catalog(package)
            try:
                cached.parent.mkdir(parents=True, exist_ok=True)
                temporary = cached.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps(data))
                temporary.replace(cached)
            except OSError:
                pass
        found = Catalog.from_json(data)
        _loaded[key] = found
        return found


@functools.cache
def shipped() -> Catalog:
    return Catalog.from_json(json.loads(SHIPPED.read_text()), installed=False)


_chosen: list[Catalog] = []
"""The catalog ``use_interpreter`` chose, which ``default`` answers instead of this interpreter's."""


def use_interpreter(python: str | None, run: bool = True) -> Catalog:
    """Make ``default`` the catalog of the TileLang that ``python`` has (``None``: this interpreter's).

    The static tier then checks and describes the release the user's code runs with, not the one
    beside Tilescope. The package is looked for beside the interpreter (a virtual environment's
    ``lib/pythonX.Y/site-packages``) and, when ``run`` allows it, by asking the interpreter itself:
    an untrusted workspace's interpreter is never run. Where neither finds TileLang, the shipped
    catalog stands in.
    """
    _chosen.clear()
    if python is None:
        return default()
    package = package_beside(python)
    if package is None and run:
        try:
            found = interpreter_package(python)
        except OSError:
            found = None
        package = Path(found) if found else None
    _chosen.append(catalog_for(package) if package is not None else shipped())
    return _chosen[0]


_PACKAGE_PROBE = (
    "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
    "import importlib.util as u\n"
    "spec = u.find_spec('tilelang')\n"
    "print(next(iter(spec.submodule_search_locations)) if spec and spec.submodule_search_locations else '')\n"
)


def interpreter_package(python: str, timeout_s: float = 30.0) -> str | None:
    """Where another interpreter would import ``tilelang`` from (found, not imported); raises ``OSError``
    when it cannot be run."""
    try:
        done = subprocess.run(
            [python, "-c", _PACKAGE_PROBE], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except subprocess.TimeoutExpired as err:
        raise OSError(f"{python} did not answer within {timeout_s:g} s") from err
    if done.returncode != 0:
        raise OSError(f"{python} exited with code {done.returncode}: {done.stderr.strip()[-300:]}")
    return done.stdout.strip() or None


def package_beside(python: str) -> Path | None:
    """``tilelang`` in the site-packages of the environment ``python`` belongs to, read from the disk only."""
    root = Path(python).absolute().parent.parent
    for site in sorted(root.glob("lib/python3*/site-packages")):
        if (site / "tilelang" / "__init__.py").is_file():
            return site / "tilelang"
    return None


def default() -> Catalog:
    """The catalog ``use_interpreter`` chose, else that of the TileLang this interpreter has, else the shipped one."""
    return _chosen[0] if _chosen else _own()


@functools.cache
def _own() -> Catalog:
    package = installed_package()
    return catalog_for(package) if package is not None else shipped()


def tilelang_version() -> str:
    return default().version


def primitives() -> dict[str, Primitive]:
    return default().table


def lookup(name: str) -> Primitive | None:
    return default().lookup(name)


def closest(name: str) -> str | None:
    return default().closest(name)
