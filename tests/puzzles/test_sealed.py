"""Held-out hostile files against the sealed grader, on the CPU path (``--cpu``, the tile interpreter),
through the command line and the app: learner code cannot change or read what judges it, an output the
kernel never wrote fails whatever the reference holds, and the installed content is unchanged after."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tilescope.core.cli.main import main
from tilescope.core.sandbox import landlock
from tilescope.puzzles import catalog, manifest, workspace
from tilescope.puzzles.progress import ProgressStore

FIXTURES = Path(__file__).parent / "fixtures"
needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel offers no Landlock")


@pytest.fixture
def content() -> Iterator[Path]:
    """Puzzle 01's folder, put back byte for byte after the test whatever happened to it, and checked
    against the manifest there."""
    folder = catalog.get(1).folder
    saved = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    yield folder
    changed = manifest.changes(folder)
    for path in folder.rglob("*"):
        if path.is_file() and path not in saved and "__pycache__" not in path.parts:
            path.unlink()
    for path, data in saved.items():
        path.chmod(0o644)
        path.write_bytes(data)
    catalog._load_reference.cache_clear()
    assert changed == [], f"the check changed the installed content: {changed}"


def _check(file: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    code = main(["puzzles", "check", "1", str(file), "--json", "--cpu", "--timeout", "120", *extra])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["passed"] else 1)
    return report


@needs_landlock
@pytest.mark.slow
def test_a_factory_that_rewrites_the_reference_and_a_kernel_that_writes_nothing_fail(
    content: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = manifest.current(content)
    report = _check(FIXTURES / "rewrites_reference.py", capsys)
    assert not report["passed"] and report["failure"] == "wrong-values", report["summary"]
    assert "were never written" in report["summary"] and "poison" in report["summary"]
    assert manifest.current(content) == before
    assert not ProgressStore().status("01").solved
    again = _check(content / "solution.py", capsys, "--service")  # a fresh service loads the reference now
    assert again["passed"], again["summary"]


@needs_landlock
@pytest.mark.slow
def test_a_factory_cannot_read_the_reference_or_the_progress_store(
    content: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ProgressStore()
    store.close()
    report = _check(FIXTURES / "reads_reference.py", capsys)
    assert report["passed"], report["summary"]


@needs_landlock
@pytest.mark.slow
def test_a_factory_cannot_read_the_graders_memory_where_the_hidden_seed_is(
    content: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _check(FIXTURES / "reads_hidden_seed.py", capsys, "--seed", "4242")
    assert report["passed"], report["summary"]
    assert report["seed"] == 4242


@needs_landlock
@pytest.mark.slow
async def test_the_app_fails_the_rewriting_file_and_leaves_the_content_alone(content: Path) -> None:
    from textual.widgets import Static
    from tilescope.puzzles.app import PuzzlesApp

    path = workspace.start(catalog.get(1))
    path.write_text((FIXTURES / "rewrites_reference.py").read_text())
    before = manifest.current(content)
    app = PuzzlesApp(device="cpu")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("c")
        for _ in range(3000):
            await pilot.pause(0.1)
            if not app.checking:
                break
        text = str(app.query_one("#results", Static).render())
        assert "FAIL" in text and "never written" in text, text
        assert app.store.status("01").attempts == 1 and not app.store.status("01").solved
    assert manifest.current(content) == before


def test_the_manifest_records_the_content_as_it_is() -> None:
    assert manifest.changes(manifest.CONTENT) == [], "run `python -m tilescope.puzzles.manifest` after editing content"


def test_a_changed_content_file_refuses_the_check(content: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reference = content / "reference.py"
    original = reference.read_bytes()
    reference.write_bytes(original + b"\n# edited\n")
    catalog._load_reference.cache_clear()
    try:
        report = _check(content / "solution.py", capsys)
    finally:
        reference.write_bytes(original)
    assert report["failure"] == "content-modified" and "01_copy_one_block/reference.py" in report["summary"]


def test_poison_left_in_an_output_fails_even_where_the_reference_is_nan() -> None:
    import torch
    from tilescope.puzzles.buffers import Workspace
    from tilescope.puzzles.verdict import check_output, judge_output

    ws = Workspace()
    try:
        out = ws.buffer("B", (64,), torch.float32, 3)
        out.poison_body()
        out.body[:32] = 1.0  # half written
        out.load("cpu")
        verdict = judge_output(check_output("B", torch.full((64,), float("nan")), out, {}))
        assert verdict is not None and verdict[0] == "wrong-values"
        assert verdict[1].startswith("32 of 64 elements of B were never written, the first at B[32]")
    finally:
        ws.close()


def test_a_nan_in_the_reference_is_reported_as_the_references_bug() -> None:
    import torch
    from tilescope.puzzles.case_run import reference_bug

    expected = torch.ones(4, 5)
    expected[2, 3] = float("nan")
    words = reference_bug(["C"], [expected])
    assert words is not None and "reference computed NaN for C[2, 3] (1 of 20 elements)" in words
    assert reference_bug(["C"], [torch.ones(3)]) is None
