"""Analyse many files with several compiler workers at once: ``tilescope check DIR -j N``.

Each worker is an ``Analyzer`` of its own (one TileLang process each), fed from one queue by a
thread, so N files lower at the same time on N cores while results come back in file order. The
queue holds the biggest files first (size is the cheapest predictor of work there is before
anything runs), so small files fill in at the end instead of one long file finishing alone.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis, Span

_SKIP_DIRS = {"__pycache__", "node_modules", "build", "dist", "site-packages"}


def python_files(paths: Iterable[str]) -> list[Path]:
    """The files to check: each file named, and under each folder every ``*.py`` that mentions TileLang.

    Hidden folders, virtual environments and build output are skipped; a file that never names
    ``tilelang`` cannot define a kernel, so folders do not report it as kernel-less.
    """
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            found.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS and "venv" not in d)
            for name in sorted(files):
                file = Path(root) / name
                if name.endswith(".py") and _mentions_tilelang(file):
                    found.append(file)
    return list(dict.fromkeys(found))


def _mentions_tilelang(file: Path) -> bool:
    try:
        return "tilelang" in file.read_text(errors="replace")
    except OSError:
        return False


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def analyze_files(
    files: list[Path],
    jobs: int,
    options: dict[str, Any],
    analyzer_options: dict[str, Any],
    progress: Callable[[int, int, Path], None] | None = None,
) -> list[FileAnalysis]:
    """Every file's analysis, in the order given; ``progress(done, total, file)`` after each."""
    results: list[FileAnalysis | None] = [None] * len(files)
    work: queue.Queue[int] = queue.Queue()
    for index in sorted(range(len(files)), key=lambda i: -_size(files[i])):
        work.put(index)  # biggest first, so the workers do not finish on one long file while the others idle
    lock = threading.Lock()
    done = [0]

    def serve() -> None:
        with Analyzer(**analyzer_options) as analyzer:
            while True:
                try:
                    index = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    results[index] = analyzer.analyze(str(files[index]), **options)
                except Exception as err:  # a fault of ours on one file must not lose the others' results
                    results[index] = _failed(files[index], options, err)
                with lock:
                    done[0] += 1
                    if progress is not None:
                        progress(done[0], len(files), files[index])

    threads = [threading.Thread(target=serve, daemon=True) for _ in range(max(1, min(jobs, len(files))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [r for r in results if r is not None]


def _failed(file: Path, options: dict[str, Any], err: Exception) -> FileAnalysis:
    failure = diagnostic("internal-error", Span(1), form="file", error=f"{type(err).__name__}: {err}")
    return FileAnalysis(str(file), options.get("target") or "sm_90", [], [], [failure])
