"""Files shown to the user are written where no one else can reach: a fresh ``mkdtemp`` folder,
checked before each write, files created without following links. The old scheme, a predictable
``$TMPDIR/tilescope-<uid>``, accepted another user's 0777 folder and overwrote a planted link's target."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

import pytest
from tilescope.core.sandbox.private_files import PrivateFolder


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PrivateFolder:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return PrivateFolder()


def test_the_folder_is_private_and_not_predictable(folder: PrivateFolder, tmp_path: Path) -> None:
    planted = tmp_path / f"tilescope-{os.getuid()}"
    planted.mkdir(mode=0o777)
    os.chmod(planted, 0o777)
    written = folder.write("matmul.cu", "// cuda\n")
    assert written.parent != planted and not any(planted.iterdir())
    info = written.parent.stat()
    assert info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    assert stat.S_IMODE(written.stat().st_mode) == 0o600 and written.read_text() == "// cuda\n"


def test_a_planted_link_is_replaced_never_followed(folder: PrivateFolder, tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("export PS1=ok\n")
    first = folder.write("matmul.cu", "one")
    first.unlink()
    first.symlink_to(victim)
    again = folder.write("matmul.cu", "two")
    assert victim.read_text() == "export PS1=ok\n"
    assert not again.is_symlink() and again.read_text() == "two"


def test_a_folder_opened_to_others_is_abandoned(folder: PrivateFolder) -> None:
    first = folder.write("a.md", "x")
    os.chmod(first.parent, 0o777)
    second = folder.write("a.md", "y")
    assert second.parent != first.parent and stat.S_IMODE(second.parent.stat().st_mode) == 0o700


def test_names_cannot_leave_the_folder(folder: PrivateFolder) -> None:
    written = folder.write("../../etc/passwd", "x")
    assert written.parent == folder.path() and written.name == "_.._etc_passwd"
