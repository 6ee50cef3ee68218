"""Every puzzle test gets its own data directory: no test touches the user's real progress."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILESCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("TILESCOPE_PUZZLES_DIR", raising=False)
    return tmp_path / "data"
