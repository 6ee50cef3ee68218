"""Which program a dry run runs to reach a file's kernels: the file's own ``__main__`` (``python -m
pkg.mod`` inside a package), else its project's test files that import it or its package (under
pytest from the project's root), else the first program of the project with a ``__main__`` that
imports it. Runs on the host; reads files, runs nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_TEST_NAME = re.compile(r"^(test_.*|.*_test)\.py$")
_MAX_FILES = 5000


def has_main(source: str) -> bool:
    """Whether the file has an ``if __name__ == "__main__":`` block."""
    return bool(re.search(r"""^if\s+__name__\s*==\s*["']__main__["']\s*:""", source, re.MULTILINE))


@dataclass(frozen=True)
class Runner:
    """The program a dry run runs to reach a file's kernels."""

    path: Path
    argv: list[str]
    """After ``python -O``."""
    command: str
    root: Path | None = None
    """The project's root, for a run of its tests (their ``conftest.py`` and ``rootdir``)."""


def import_root(file: Path) -> Path:
    """The folder ``import pkg.mod`` works from: above the outermost package holding ``file`` (a folder
    without ``__init__.py`` inside a package is a namespace portion of it)."""
    folder = file.parent
    while folder.parent != folder and ((folder / "__init__.py").exists() or (folder.parent / "__init__.py").exists()):
        folder = folder.parent
    return folder


def module_name(file: Path) -> str:
    """``mylib.ops.gemm`` for ``src/mylib/ops/gemm.py``."""
    return ".".join(file.resolve().relative_to(import_root(file)).with_suffix("").parts)


def _main_runner(file: Path) -> Runner:
    """``python -O FILE``, or ``python -O -m pkg.mod`` for a module of a package (its relative imports then
    work); a script in a plain folder runs as a script, its folder first on ``sys.path``."""
    name = module_name(file)
    if (file.parent / "__init__.py").exists() and "." in name:
        return Runner(file, ["-m", name], f"python -O -m {name}")
    return Runner(file, [str(file)], f"python -O {file.name}")


def _project_files(file: Path) -> tuple[Path, list[Path]]:
    """The root of the project holding ``file`` (its ``pyproject.toml``, ``setup.py`` or ``.git``, at most
    four folders up) and its Python files, virtual environments and hidden folders left out."""
    folder = root = file.parent
    for _ in range(4):
        if any((folder / marker).exists() for marker in ("pyproject.toml", "setup.py", ".git")):
            root = folder
            break
        folder = folder.parent
    found = []
    for candidate in sorted(root.rglob("*.py"))[:_MAX_FILES]:
        parts = candidate.relative_to(root).parts[:-1]
        if not any(p.startswith(".") or "venv" in p or p in ("site-packages", "node_modules") for p in parts):
            found.append(candidate)
    return root, found


def runner(file: Path, source: str) -> Runner | None:
    """The file's own ``__main__``; else the project's test files importing it or a package holding it, under
    pytest from the project's root; else the first program with a ``__main__`` that imports it or its package
    (``from mylib import matmul``)."""
    if has_main(source):
        return _main_runner(file)
    dotted = module_name(file).split(".")
    names = {".".join(dotted[: i + 1]) for i in range(len(dotted))} | {file.stem}
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    imports = re.compile(rf"^\s*(from|import)\s+([\w.]*\.)?({alternatives})(?![\w.])", re.M)
    programs, tests = [], []
    root, files = _project_files(file)
    for candidate in files:
        if candidate == file:
            continue
        try:
            text = candidate.read_text(errors="replace")
        except OSError:
            continue
        if not imports.search(text):
            continue
        if _TEST_NAME.match(candidate.name):
            tests.append(candidate)
        elif has_main(text):
            programs.append(candidate)
    if tests:
        argv = ["-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={root}", *map(str, tests)]
        names = " ".join(t.name for t in tests[:3]) + (f" (+{len(tests) - 3})" if len(tests) > 3 else "")
        return Runner(tests[0], argv, f"python -O -m pytest {names}", root)
    return _main_runner(programs[0]) if programs else None
