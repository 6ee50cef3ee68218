"""The learner's own puzzle files: created from the starter, never overwritten without a backup.

Writes go to a temporary file that replaces the target in one rename, so an interrupted write
never leaves half a file behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.progress import data_dir


def workspace_dir() -> Path:
    """``TILESCOPE_PUZZLES_DIR``, else ``puzzles/`` in the user data directory."""
    override = os.environ.get("TILESCOPE_PUZZLES_DIR")
    return Path(override) if override else data_dir() / "puzzles"


def learner_path(puzzle: Puzzle) -> Path:
    return workspace_dir() / f"{puzzle.folder.name}.py"


def backup_dir() -> Path:
    return workspace_dir() / ".backups"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def backup(path: Path) -> Path:
    """Copy ``path`` to the backup folder under a timestamped name; returns the copy's path."""
    backup_dir().mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = backup_dir() / f"{path.stem}.{stamp}{path.suffix}"
    n = 1
    while target.exists():
        target = backup_dir() / f"{path.stem}.{stamp}-{n}{path.suffix}"
        n += 1
    shutil.copy2(path, target)
    return target


def start(puzzle: Puzzle) -> Path:
    """The learner's file, created from the starter the first time; an existing file is kept."""
    path = learner_path(puzzle)
    if not path.exists():
        _write_atomic(path, puzzle.starter_path.read_text())
    return path


def reset(puzzle: Puzzle) -> tuple[Path, Path | None]:
    """Put the starter back, after backing up the learner's current file; returns (file, backup)."""
    path = learner_path(puzzle)
    saved = backup(path) if path.exists() else None
    _write_atomic(path, puzzle.starter_path.read_text())
    return path, saved


def write_solution(puzzle: Puzzle) -> Path:
    """Put the reference solution next to the learner's file (never over it)."""
    path = workspace_dir() / f"{puzzle.folder.name}.solution.py"
    if path.exists():
        backup(path)
    _write_atomic(path, puzzle.solution_path.read_text())
    return path


def is_solution_copy(puzzle: Puzzle, path: Path) -> bool:
    """Whether ``path`` holds the reference solution (up to layout and comments): passing with it is not solving."""
    try:
        return is_solution_text(puzzle, path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


def is_solution_text(puzzle: Puzzle, source: str) -> bool:
    """``is_solution_copy`` for a file's text (parsed, never run): the same code as the reference up to layout,
    comments, docstrings and the names it binds, so renaming a variable of a revealed solution is still a copy."""
    try:
        return canonical_code(source) == canonical_code(puzzle.solution_path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError, MemoryError):
        return False


def canonical_code(source: str) -> str:
    """``source``'s syntax tree with layout and comments gone (parsing drops them), docstrings and other bare strings
    dropped, and each name the file binds renamed ``_0``, ``_1``... in the order it first appears: two files that
    differ only in those ways dump alike. Attributes and the keywords of calls into libraries keep their names."""
    import ast

    tree = ast.parse(source)
    bound = {
        name
        for node in ast.walk(tree)
        for name in (
            [node.id]
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
            else [node.arg]
            if isinstance(node, ast.arg)
            else [node.name]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            else [node.asname or node.name.split(".")[0]]
            if isinstance(node, ast.alias)
            else list(node.names)
            if isinstance(node, ast.Global | ast.Nonlocal)
            else []
        )
    }
    names: dict[str, str] = {}

    def canonical(name: str) -> str:
        return names.setdefault(name, f"_{len(names)}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            node.id = canonical(node.id)
        elif isinstance(node, ast.arg):
            node.arg = canonical(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            node.name = canonical(node.name)
        elif isinstance(node, ast.alias) and node.asname is not None:
            node.asname = canonical(node.asname)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            node.names = [canonical(n) for n in node.names]
        elif isinstance(node, ast.keyword) and node.arg in bound:
            node.arg = canonical(node.arg)
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and all(isinstance(s, ast.stmt) for s in statements):
                kept = [
                    s
                    for s in statements
                    if not (
                        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)
                    )
                ]
                setattr(node, field, kept or [ast.Pass()])
    return ast.dump(tree)
