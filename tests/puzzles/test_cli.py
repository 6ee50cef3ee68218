"""``tilescope puzzles`` verbs from the shell, through the real dispatcher."""

from __future__ import annotations

import json

import pytest
from tilescope.core.cli.main import main
from tilescope.puzzles import catalog, workspace


def test_list_shows_every_puzzle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["puzzles", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(catalog.puzzles())
    assert "Copy, one block" in out[0]


def test_list_json_gives_progress_for_editors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["puzzles", "start", "3"]) == 0
    capsys.readouterr()
    assert main(["puzzles", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["number"] for r in rows] == [int(p.id) for p in catalog.puzzles()]
    third = rows[2]
    assert (third["title"], third["solved"]) == (catalog.get(3).title, False)
    assert third["path"] == str(workspace.learner_path(catalog.get(3)))


def test_show_prints_statement_target_and_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["puzzles", "show", "13"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# 13 · Pipelined GEMM")
    assert "Target: ≤ 1.25× torch's time in the same run" in out
    assert str(workspace.learner_path(catalog.get(13))) in out


def test_start_then_hint_then_reset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["puzzles", "start", "2"]) == 0
    path = workspace.learner_path(catalog.get(2))
    started = capsys.readouterr().out.splitlines()
    assert started[0].endswith(f"your file is ready: {path}") and "tilescope puzzles check 02" in started[2]
    assert main(["puzzles", "hint", "2"]) == 0 and main(["puzzles", "hint", "2"]) == 0
    out = capsys.readouterr().out
    assert "Hint 2/3" in out and out.count("Hint 1/3") == 2
    path.write_text("# edited\n")
    assert main(["puzzles", "reset", "2"]) == 0
    assert "your version is in" in capsys.readouterr().out


def test_reveal_needs_confirmation_until_solved(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["puzzles", "reveal", "4"]) == 2
    assert main(["puzzles", "reveal", "4", "--yes"]) == 0
    assert "def kernel(M, N" in capsys.readouterr().out


def test_unknown_puzzle_is_a_clear_error() -> None:
    with pytest.raises(SystemExit, match="no puzzle"):
        main(["puzzles", "show", "99"])


@pytest.mark.slow
def test_check_json_reports_a_compile_error_at_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    p = catalog.get(12)
    wrong = p.folder / "wrong" / "b_tile_shape.py"
    assert main(["puzzles", "check", "12", str(wrong), "--json", "--cpu"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["failure"] == "compile-error" and report["passed"] is False
    line = report["diagnostics"][0]["span"]["line"]
    assert "T.gemm" in wrong.read_text().splitlines()[line - 1]
    assert main(["puzzles", "list"]) == 0
    assert "· 12" in capsys.readouterr().out


def test_a_file_that_never_loads_gets_the_whole_timeout_for_its_own_code() -> None:
    """``--timeout`` counts the file's own time: the loader's start (importing TileLang) is not taken from it, so
    a file that never loads runs the full 15 s, and the command answers soon after."""
    import subprocess
    import sys
    import time

    never = catalog.get(1).folder / "wrong" / "never_loads.py"
    command = [sys.executable, "-m", "tilescope", "puzzles", "check", "1", str(never), "--cpu", "--timeout", "15"]
    start = time.monotonic()
    done = subprocess.run([*command, "--no-service", "--json"], capture_output=True, text=True, timeout=300)
    ended = time.monotonic() - start
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["failure"] == "timeout" and "within the 15 s limit" in report["summary"], report["summary"]
    assert 15 < ended < 15 + 120, ended
