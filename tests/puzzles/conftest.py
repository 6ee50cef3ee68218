"""Every puzzle test gets its own data directory: no test touches the user's real progress, and a
grading service a test started (the app and ``check --service`` start one) is stopped after it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.puzzles.session import Session


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    from tilescope.puzzles import service

    monkeypatch.setenv("TILESCOPE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("TILESCOPE_PUZZLES_DIR", raising=False)
    yield tmp_path / "data"
    with contextlib.suppress(OSError, RuntimeError):
        service.stop()


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    """The grader's helper processes on the CPU, shared by a module's checks as a class server's are: each
    check still takes a fresh loader (the only process that runs the learner's code); the kernel process is
    replaced after a runtime error, a crash or a protocol violation, as in the grader."""
    s = Session(cpu_only=True)
    yield s
    s.close()
