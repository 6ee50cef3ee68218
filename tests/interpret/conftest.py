"""Build small kernels from source text written to a temporary file (TileLang reads the source)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Build = Callable[..., tuple[Any, str]]


@pytest.fixture
def build(tmp_path: Path) -> Build:
    """``build(source, factory, **args)`` → (interpreter kernel, path of the file)."""
    from tilescope.core.interpret import compile_kernel
    from tilescope.core.worker.loader import load_module

    def make(source: str, factory: str = "kernel", **args: Any) -> tuple[Any, str]:
        path = tmp_path / f"k{len(list(tmp_path.iterdir()))}.py"
        text = "import tilelang\nimport tilelang.language as T\n\n" + textwrap.dedent(source)
        path.write_text(text)
        namespace = load_module(text, str(path))
        return compile_kernel(namespace[factory](**args), str(path)), str(path)

    return make


def line_of(path: str, needle: str) -> int:
    """The 1-based line of the first line containing ``needle``."""
    for number, text in enumerate(Path(path).read_text().splitlines(), start=1):
        if needle in text:
            return number
    raise AssertionError(needle)
