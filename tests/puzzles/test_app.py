"""The app, driven through Textual's pilot: list, statement, hints, reset, reveal, results."""

from __future__ import annotations

import os
import time

import pytest
import torch
from textual.widgets import Markdown, OptionList, Static
from tilescope.puzzles import catalog, service, workspace
from tilescope.puzzles.app import PuzzlesApp
from tilescope.puzzles.buffers import GuardReport
from tilescope.puzzles.compare import compare
from tilescope.puzzles.report import CaseResult, OutputCheck, Report


def _text(app: PuzzlesApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_list_and_statement_follow_the_cursor() -> None:
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        assert app.query_one("#puzzle-list", OptionList).option_count == len(catalog.puzzles())
        await pilot.press("down", "down")
        assert app.current.id == "03"
        assert "Vector add" in _text(app, "#title")
        assert app.query_one("#statement", Markdown).source.startswith("# 03 ·")


async def test_hint_key_unlocks_one_hint_at_a_time() -> None:
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("h")
        await pilot.pause()
        source = app.query_one("#hints", Markdown).source
        assert "Hint 1." in source and "Hint 2." not in source
        await pilot.press("h")
        assert app.store.hints_shown("01") == 2
        assert "hints 2/3" in _text(app, "#status")


async def test_reset_key_backs_up_the_learners_file() -> None:
    p = catalog.get(1)
    path = workspace.start(p)
    path.write_text("# my attempt\n")
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("r")
        await pilot.pause()
    assert path.read_text() == p.starter_path.read_text()
    backups = list(workspace.backup_dir().iterdir())
    assert [b.read_text() for b in backups] == ["# my attempt\n"]


async def test_reveal_asks_twice_before_showing_an_unsolved_solution() -> None:
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("v")
        await pilot.pause()
        assert "Reference solution" not in app.query_one("#statement", Markdown).source
        await pilot.press("v")
        await pilot.pause()
        assert "Reference solution" in app.query_one("#statement", Markdown).source
        assert app.store.status("01").revealed


def _failing_report() -> Report:
    expected = torch.zeros(16, 64)
    got = torch.zeros(16, 64)
    got[12:, 60:] = 5.0
    check = OutputCheck("C", compare(expected, got, 1e-4, 1e-4), GuardReport(0, 0, None, None, 16384))
    case = CaseResult("ragged", {"M": 16, "N": 64}, "normal", 0, False, [check], "wrong-values", "C[12, 60] is 5")
    return Report("04", "/tmp/04.py", "cpu", False, "case ragged: C[12, 60] is 5", cases=[case], failure="wrong-values")


async def test_results_pane_shows_the_failure_and_where_it_is() -> None:
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("down", "down", "down")
        app.show_report(catalog.get(4), _failing_report())
        await pilot.pause()
        text = _text(app, "#results")
        assert "FAIL" in text and text.count("C[12, 60] is 5") == 1  # stated once, in the summary
        heat = [line for line in text.splitlines() if line.strip().startswith("│")]
        assert heat and heat[-1].rstrip().endswith("█│") and heat[0].strip()[1] == " "
        assert app.store.status("04").attempts == 1
        assert "·" in str(app.query_one("#puzzle-list", OptionList).get_option_at_index(3).prompt)


@pytest.mark.slow
async def test_check_key_grades_the_file_and_watch_rechecks_on_save() -> None:
    p = catalog.get(12)
    path = workspace.start(p)
    path.write_text((p.folder / "wrong" / "b_tile_shape.py").read_text())
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        for _ in range(11):
            await pilot.press("down")
        assert app.current.id == "12"
        await pilot.press("c")
        for _ in range(3000):  # compiling on a loaded two-core machine can take minutes
            await pilot.pause(0.1)
            if not app.checking:
                break
        text = _text(app, "#results")
        assert "FAIL" in text and "K shape check failed" in text and ":18:" in text
        await pilot.press("w")
        assert app.watching and "watching" in _text(app, "#status")
        path.write_text(path.read_text() + "\n# saved again\n")
        os.utime(path, (time.time() + 5, time.time() + 5))
        for _ in range(3000):
            await pilot.pause(0.1)
            if app.store.status("12").attempts == 2:
                break
        assert app.store.status("12").attempts == 2, "saving the file while watching re-checks it"


async def test_the_app_and_the_command_line_share_one_warm_grading_service() -> None:
    p = catalog.get(1)
    path = workspace.start(p)
    path.write_text((p.folder / "wrong" / "forged_report.py").read_text())
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("c")
        for _ in range(1200):
            await pilot.pause(0.1)
            if not app.checking:
                break
        assert "FAIL" in _text(app, "#results") and "private channel" in _text(app, "#results")
        assert app.store.status("01").attempts == 1
    first = service.status()
    assert first is not None and first["checks"] == 1  # the app's check, and the service outlives the app
    from tilescope.core.cli.main import main

    assert main(["puzzles", "check", "1", "--cpu", "--service", "--json"]) == 1
    second = service.status()
    assert second == {"pid": first["pid"], "checks": 2}
