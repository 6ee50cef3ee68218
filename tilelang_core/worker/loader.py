"""Load a user's kernel file, inside the worker process.

The file is executed as a module that is not ``__main__`` and with only its definitions kept:
imports, functions, classes, constant assignments and ``sys.path`` changes (so sibling modules
import as they do when the file runs). Benchmarks, argument parsing and kernel launches at module
level never run, so analysing a file never touches a GPU. A file inside a package (folders with
``__init__.py``, a ``src/`` layout, a namespace package) is loaded as ``import pkg.mod`` loads it:
parent packages first, under its dotted name, so relative imports and re-exporting ``__init__``
files resolve, whichever files the worker loaded before. Which statements are kept is
``definitions``; where the file lives as a module is ``import_path``; building a PrimFunc from the
loaded namespace is ``prim_func``.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import linecache
import os
import sys
import types
from typing import Any

from tilescope.core.lines import source_lines
from tilescope.core.worker.definitions import definitions_only
from tilescope.core.worker.import_path import absolute_roots, enter, import_parents, module_name, remember_user_folders

_last: dict[tuple[str, str], dict[str, Any]] = {}


_DEVICE_MODULES = ("torch_npu",)
"""A device's torch extension: imported by a program for that device only to register it, never needed to
build a kernel (which lowers for a named target); an empty stand-in where it is not installed."""


def _stand_in_device_modules(tree: ast.Module) -> None:
    for name in _DEVICE_MODULES:
        if name in absolute_roots(tree) and name not in sys.modules and importlib.util.find_spec(name) is None:
            stand_in = types.ModuleType(name)
            stand_in.__doc__ = "Tilescope's stand-in: this interpreter has no such device extension."
            sys.modules[name] = stand_in


def load_module(source: str, path: str) -> dict[str, Any]:
    """Execute the file's definitions and return its namespace.

    TileLang reads kernel source through ``inspect``, so the text is registered in ``linecache``
    under ``path``: unsaved editor buffers build exactly as they read. The last file loaded is
    kept, so its kernels (one request each) share one load, as they share one import in a program.
    A module of a package is loaded as ``import pkg.mod`` would load it: its packages imported
    first, under its dotted name, with only its package's folder on ``sys.path``.
    """
    lines = source_lines(source)
    linecache.cache[path] = (len(source), None, lines, path)
    key = (path, source)
    if key in _last:
        return _last[key]
    _last.clear()
    tree = ast.parse(source, filename=path)
    _stand_in_device_modules(tree)
    name, package, root = module_name(path, tree)
    if package is None:
        enter(root)
    else:
        import_parents(name, package, root)
    tree = definitions_only(tree)
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = package
    is_package = os.path.basename(path) == "__init__.py" and package is not None
    module.__spec__ = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[os.path.dirname(os.path.abspath(path))] if is_package else None
    )
    if is_package:
        module.__path__ = [os.path.dirname(os.path.abspath(path))]
    module.__dict__["__builtins__"] = builtins
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look the defining module up by name
    searched = list(sys.path)
    try:
        exec(compile(tree, path, "exec", dont_inherit=True), module.__dict__)
        remember_user_folders([p for p in sys.path if p not in searched and isinstance(p, str)])
    except BaseException:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise
    if package is not None and name != package and package in sys.modules:
        setattr(sys.modules[package], name.rpartition(".")[2], module)
    _last[key] = module.__dict__
    return module.__dict__
