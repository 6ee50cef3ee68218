"""Every puzzle test gets its own data directory: no test touches the user's real progress, and a
grading service a test started (the app and ``check --service`` start one) is stopped after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from tilescope.puzzles import service

    monkeypatch.setenv("TILESCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("TILESCOPE_PUZZLES_DIR", raising=False)
    yield tmp_path / "data"
    with contextlib.suppress(OSError, RuntimeError):
        service.stop()
