"""Learner files: created from the starter, never overwritten, backed up before a reset."""

from __future__ import annotations

from pathlib import Path

import pytest
from tilescope.puzzles import catalog, workspace


def test_start_creates_the_file_from_the_starter_once(data_dir: Path) -> None:
    p = catalog.get(4)
    path = workspace.start(p)
    assert path.parent == data_dir / "puzzles"
    assert path.read_text() == p.starter_path.read_text()
    path.write_text("# my work\n")
    assert workspace.start(p) == path
    assert path.read_text() == "# my work\n"


def test_reset_backs_up_the_learners_file_first() -> None:
    p = catalog.get(6)
    path = workspace.start(p)
    path.write_text("# attempt one\n")
    restored, saved = workspace.reset(p)
    assert restored == path and path.read_text() == p.starter_path.read_text()
    assert saved is not None and saved.read_text() == "# attempt one\n"
    path.write_text("# attempt two\n")
    _, second = workspace.reset(p)
    assert second is not None and second != saved and second.read_text() == "# attempt two\n"
    assert saved.read_text() == "# attempt one\n"


def test_reset_without_a_file_needs_no_backup() -> None:
    _, saved = workspace.reset(catalog.get(7))
    assert saved is None and not workspace.backup_dir().exists()


def test_revealed_solution_never_replaces_the_learners_file() -> None:
    p = catalog.get(8)
    mine = workspace.start(p)
    mine.write_text("# mine\n")
    written = workspace.write_solution(p)
    assert written != mine and written.read_text() == p.solution_path.read_text()
    assert mine.read_text() == "# mine\n"


def test_puzzles_dir_can_be_chosen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILESCOPE_PUZZLES_DIR", str(tmp_path / "mine"))
    assert workspace.start(catalog.get(1)).parent == tmp_path / "mine"
