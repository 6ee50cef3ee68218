"""The name a user's file imports under, and the ``sys.path`` and ``sys.modules`` its load sees, in the worker.

A file inside a package (folders with ``__init__.py``, a ``src/`` layout, a namespace package) is
loaded as ``import pkg.mod`` loads it: parent packages first, under its dotted name, so relative
imports and re-exporting ``__init__`` files resolve, whichever files the worker loaded before. Each
file is analysed as its own program: what earlier loads imported from the user's folders is
forgotten, installed packages (TileLang's TVM among them) stay.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import sysconfig

MODULE_NAME = "__tilescope_kernel__"
_NAMESPACE_DEPTH = 4
"""How many folders without ``__init__.py`` a file may sit below a regular package and still be its module."""


def _relative_level(tree: ast.Module | None) -> int:
    """The deepest ``from ..x import y`` of the file: how many packages it must sit in."""
    if tree is None:
        return 0
    return max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)


def absolute_roots(tree: ast.Module | None) -> set[str]:
    """Top-level names the file imports absolutely (``from mylib.config import X`` gives ``mylib``)."""
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
    return names


def _regular_chain(directory: str) -> tuple[list[str], str]:
    """The folders with ``__init__.py`` from ``directory`` up, and the folder above the topmost."""
    parts: list[str] = []
    root = directory
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.basename(root).isidentifier():
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    return parts, root


def _namespace_chain(directory: str, tree: ast.Module | None) -> tuple[list[str], str]:
    """Folders of a namespace package the file belongs to, as ``import`` would see them; none for a script.

    A folder without ``__init__.py`` under a regular package is a namespace portion of it; a file
    there is that package's module only when it says so: a relative import, or an absolute import
    of the package's own top name. Above no regular package, a relative import of level L makes
    the L folders above the file its (namespace) packages.
    """
    level = _relative_level(tree)
    gap: list[str] = []
    folder = directory
    for _ in range(_NAMESPACE_DEPTH):
        if not os.path.basename(folder).isidentifier():
            break
        gap.insert(0, os.path.basename(folder))
        above = os.path.dirname(folder)
        parts, root = _regular_chain(above)
        if parts:
            if level or parts[0] in absolute_roots(tree):
                return parts + gap, root
            break
        folder = above
    if level == 0:
        return [], directory
    parts, folder = [], directory
    for _ in range(level):
        if not os.path.basename(folder).isidentifier():
            return [], directory
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return parts, folder


def module_name(path: str, tree: ast.Module | None = None) -> tuple[str, str | None, str]:
    """The name a file imports under, its package, and the folder to put on ``sys.path`` for it.

    Outside a package: a private name, no package, the file's folder. Inside ``a/b/__init__.py``'s
    folder: ``b.file`` (``a`` too when it is a package), package ``b``, and the folder above ``b``
    (``src/`` in a src layout). Namespace packages (folders without ``__init__.py``) count where
    the file's own imports say it lives in one (``_namespace_chain``).
    """
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts, root = _regular_chain(directory)
    if not parts:
        parts, root = _namespace_chain(directory, tree)
    if not parts:
        return MODULE_NAME, None, directory
    package = ".".join(parts)
    return (package if stem == "__init__" else f"{package}.{stem}"), package, root


def _forget_package(top: str, root: str) -> None:
    """Drop the user's package from ``sys.modules``, so every load imports it as it is on disk now.

    Only modules of ``top`` that live under ``root`` go: a file of the workspace never makes the
    worker forget TileLang, or an installed package of the same name.
    """
    first = sys.modules.get(top)
    locations = [*(getattr(first, "__path__", None) or []), getattr(first, "__file__", None) or ""]
    if first is not None and not any(p and os.path.abspath(p).startswith(root + os.sep) for p in locations):
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


OWN = ("tilescope", "__main__")
"""Modules never forgotten, wherever the user's folders are: this worker's own."""
_user_roots: set[str] = set()
"""Folders loads put on ``sys.path``: where the modules of the user's own code come from."""
_fresh = False
"""Whether no user file has been loaded in this process: a child just forked from the worker's zygote, which
runs no user code, so ``sys.modules`` holds nothing of the user's folders to forget."""


def forked() -> None:
    """Say that this process was just forked from the zygote: its first load need not look through the 2,000
    modules it holds for ones of the user's folders (every look writes to a page the zygote shares with it,
    copying it: about 8 ms)."""
    global _fresh
    _fresh = True


def _installed() -> tuple[str, ...]:
    """Where installed code lives: the interpreter's prefixes and every site-packages folder on the path
    (one a ``.pth`` file added included); TileLang puts its own TVM on ``sys.path`` there."""
    places = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
    places.update(p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"))
    return tuple(os.path.abspath(p) + os.sep for p in places if p)


def enter(root: str) -> None:
    """Put ``root`` first on ``sys.path`` and forget what earlier loads imported from the user's folders, and
    those folders: a file's ``import utils`` finds its own folder's ``utils``, never one another folder's
    file left in ``sys.modules`` (each file is analysed as its own program). Installed packages stay."""
    global _fresh
    installed = _installed()
    folders = tuple(r + os.sep for r in _user_roots)
    modules = [] if _fresh else list(sys.modules.items())
    _fresh = False
    for name, module in modules:
        file = getattr(module, "__file__", None)
        where = os.path.abspath(file) if isinstance(file, str) else ""
        if where.startswith(folders) and not where.startswith(installed) and not name.startswith(OWN):
            del sys.modules[name]
    for folder in _user_roots - {root}:
        while folder in sys.path:
            sys.path.remove(folder)
    _user_roots.add(root)
    if root not in sys.path:
        sys.path.insert(0, root)


def _user_folders(added: list[str]) -> set[str]:
    """The folders a file's own ``sys.path`` edits added, less installed ones (TileLang adds its TVM)."""
    installed = _installed()
    return {os.path.abspath(p) for p in added if not (os.path.abspath(p) + os.sep).startswith(installed)}


def import_parents(name: str, package: str, root: str) -> None:
    """Import the packages above the file first, as ``import pkg.mod`` does: their ``__init__`` may
    re-export the file's own kernels, and must find their modules whole, not half-loaded."""
    enter(root)
    _forget_package(package.split(".")[0], root)
    parent = package if name != package else package.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)


def remember_user_folders(added: list[str]) -> None:
    """Folders a load's own ``sys.path`` edits added count as the user's from now on (installed ones not)."""
    _user_roots.update(_user_folders(added))
