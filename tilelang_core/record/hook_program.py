"""Where in the user's program the record hook is: which files and frames are the program's own, not
TileLang's, an installed library's or the hook's. Part of the record hook, copied beside it
(``tilescope_hook_program``): it must import nothing of Tilescope.

The hook's own files are every file in its folder (the private ``sitecustomize``'s, where the hook is
copied; ``record/`` where it is imported from the package).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from typing import Any

tilelang_root = os.path.join(os.sep, "nonexistent", "")
"""TileLang's installed folder, once the hook has seen ``tilelang.language`` imported."""
_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
_seen_modules: set[str] = set()


def found_tilelang(language: Any) -> None:
    """Note TileLang's folder from its language module (``tilelang/language/__init__.py``,
    ``tilelang/ascend/language/...``)."""
    global tilelang_root
    root = os.path.abspath(language.__file__)
    for _ in range(language.__name__.count(".") + 1):
        root = os.path.dirname(root)
    tilelang_root = root


def in_tilelang(file: str) -> bool:
    return file.startswith(tilelang_root)


def _library_paths() -> tuple[str, ...]:
    import sysconfig

    paths = {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.join(os.path.abspath(p), "") for p in paths if p)


def program_files() -> list[str]:
    """Files of the program's own modules (not an installed package's, not this hook's) imported since the
    last call."""
    libraries = (tilelang_root, *_library_paths(), _HOOK)
    found = []
    for name, module in list(sys.modules.items()):
        if name in _seen_modules:
            continue
        _seen_modules.add(name)
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py") and os.path.isabs(file):
            installed = f"{os.sep}site-packages{os.sep}" in file or f"{os.sep}dist-packages{os.sep}" in file
            if not installed and not file.startswith(libraries):
                found.append(file)
    return found


def uncompiled() -> dict[str, list[str]]:
    """``{"uncompiled": [...]}``: installed modules imported without bytecode for this interpreter's optimisation
    level, where there are any. A dry run runs under ``python -O``, whose bytecode pip never writes and its sealed
    child may not, so these are compiled again by every run until Tilescope writes it (``record.bytecode``)."""
    import importlib.util

    found = []
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not (isinstance(file, str) and file.endswith(".py") and os.path.isabs(file)):
            continue
        if f"{os.sep}site-packages{os.sep}" not in file and f"{os.sep}dist-packages{os.sep}" not in file:
            continue
        with contextlib.suppress(ValueError, NotImplementedError):
            if not os.path.exists(importlib.util.cache_from_source(file)):
                found.append(file)
    return {"uncompiled": found} if found else {}


def program_frame(tb: Any) -> dict[str, Any] | None:
    """The innermost frame of a traceback in the program's own code: the line a stopped run stopped at."""
    libraries = (tilelang_root, *_library_paths())
    found = None
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not name.startswith(libraries) and not os.path.basename(name).startswith(("tilescope_", "<")):
            found = {"file": name, "function": tb.tb_frame.f_code.co_name, "line": tb.tb_lineno}
        tb = tb.tb_next
    return found


def where(func: Any) -> tuple[str | None, int | None]:
    """The file and first line of ``func``'s definition, where ``inspect`` finds them."""
    with contextlib.suppress(TypeError, OSError):
        return os.path.abspath(inspect.getsourcefile(func) or ""), inspect.getsourcelines(func)[1]
    return None, None


def called_at(frame: Any) -> dict[str, Any] | None:
    """The first frame at or above ``frame`` in the program's own code (not TileLang, a library or this hook):
    where the program asked for the kernel, for "from a dry run of main(), line 212"."""
    libraries = (tilelang_root, *_library_paths(), _HOOK)
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(libraries) and not name.startswith("<"):
            function = frame.f_code.co_name
            if function.startswith("<") and function != "<module>":  # a lambda: the function that wrote it
                function = getattr(frame.f_code, "co_qualname", function).rsplit(".<locals>.", 1)[0]
            return {"file": name, "function": function, "line": frame.f_lineno}
        frame = frame.f_back
    return None
