"""Drive the pass viewer with keys, as a user would, and read what is on screen."""

from __future__ import annotations

import pytest
from textual.widgets import OptionList
from textual.worker import WorkerState
from tilescope.visualizer.ir_view import IRView
from tilescope.visualizer.trace_app import CUDA, KernelPicker, PassList, TraceApp
from tilescope.visualizer.trace_session import NoTrace, TraceSession

SIZE = (160, 45)


@pytest.fixture(scope="module")
def session(analyzer, gemm_analysis, gemm) -> TraceSession:
    return TraceSession(analyzer, gemm_analysis.path, gemm)


def _index(session: TraceSession, name: str) -> int:
    return next(p.index for p in session.passes if p.name == name)


def _screen(app: TraceApp) -> list[str]:
    """The IR pane's visible lines, as drawn."""
    view = app.query_one(IRView)
    return [view.render_line(y).text for y in range(view.size.height)]


def _text(app: TraceApp, selector: str) -> str:
    return str(app.query_one(selector).render())


def _listed(app: TraceApp) -> list[str]:
    return [o.id for o in app.query_one(PassList).options if o.id and o.id.startswith("pass-")]


async def _settle(app: TraceApp, pilot) -> None:
    """Wait until every IR fetch has finished (a superseded fetch is cancelled, not awaited)."""
    for _ in range(3000):
        if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
            break
        await pilot.pause(0.02)
    await pilot.pause()


async def test_opens_on_the_first_changing_pass_with_its_diff_and_explanation(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        first = next(p for p in session.passes if p.changed)
        assert app.current == first.index
        assert first.name in _text(app, "#heading")
        assert any(line.lstrip().startswith(("+", "-")) or " + " in line for line in _screen(app))
        assert (first.what or "")[:40] in _text(app, "#about")


async def test_unchanged_passes_are_hidden_until_toggled(session):
    unchanged = next(p.index for p in session.passes if not p.changed)
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        assert f"pass-{unchanged}" not in _listed(app)
        await pilot.press("u")
        await _settle(app, pilot)
        assert f"pass-{unchanged}" in _listed(app)
        assert len(_listed(app)) == len(session.passes)


async def test_n_and_p_walk_the_passes_that_changed_the_ir(session):
    changed = [p.index for p in session.passes if p.changed]
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("n", "n")
        await _settle(app, pilot)
        assert app.current == changed[2]
        assert session.passes[changed[2]].name in _text(app, "#heading")
        await pilot.press("p")
        await _settle(app, pilot)
        assert app.current == changed[1]


async def test_diff_lines_carry_the_python_line_they_came_from(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        app.select(_index(session, "tl.ProducerConsumerWarpSpecialized"))
        await _settle(app, pilot)
        screen = "\n".join(_screen(app))
        assert "py21" in screen  # T.copy(A[...], A_shared) is line 21 of examples/gemm.py


async def test_side_by_side_and_full_ir_toggles(session):
    app = TraceApp(session)
    layout_inference = _index(session, "tl.LayoutInference")
    async with app.run_test(size=SIZE) as pilot:
        app.select(layout_inference)
        await _settle(app, pilot)
        await pilot.press("v")
        await _settle(app, pilot)
        assert app.query_one(IRView).mode == "split"
        assert "side by side" in _text(app, "#heading")
        assert all("│" in line for line in _screen(app)[:5])
        await pilot.press("i")
        await _settle(app, pilot)
        view = app.query_one(IRView)
        assert view.mode == "listing"
        assert view.row_count == len(session.ir(layout_inference).text.splitlines())
        assert "full IR" in _text(app, "#heading")


async def test_slash_filters_passes_by_name(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("slash", *"layout", "enter")
        await _settle(app, pilot)
        assert _listed(app) == [f"pass-{_index(session, 'tl.LayoutInference')}"]


async def test_find_scrolls_to_the_match_in_the_ir(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        app.select(_index(session, "tl.LowerTileOp"))
        await _settle(app, pilot)
        await pilot.press("i")
        await _settle(app, pilot)
        await pilot.press("f", *"mbarrier", "enter")
        await _settle(app, pilot)
        assert any("mbarrier" in line for line in _screen(app))


async def test_c_shows_the_generated_cuda(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("c")
        await _settle(app, pilot)
        assert app.current == CUDA
        assert "generated CUDA" in _text(app, "#heading")
        lines = session.cuda.splitlines()
        assert app.query_one(IRView).row_count == len(lines)
        assert lines[0].strip() in _screen(app)[0]


async def test_pass_list_fills_in_line_counts(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        index = _index(session, "tl.LowerTileOp")
        prompt = str(app.query_one(PassList).get_option(f"pass-{index}").prompt)
        diff = session.diff(index)
        assert f"+{diff.added} −{diff.removed}" in prompt


async def test_enter_after_a_filter_opens_the_pass_it_found(session):
    app = TraceApp(session)
    layout_inference = _index(session, "tl.LayoutInference")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        assert app.current != layout_inference
        await pilot.press("slash", *"layoutinf", "enter")
        await _settle(app, pilot)
        assert app.current == layout_inference
        assert "tl.LayoutInference" in _text(app, "#heading")
        assert app.focused is app.query_one(PassList)


async def test_side_by_side_hides_the_pass_list_and_scrolls_sideways(session):
    app = TraceApp(session)
    async with app.run_test(size=SIZE) as pilot:
        app.select(_index(session, "tl.LayoutInference"))
        await _settle(app, pilot)
        await pilot.press("v")
        await _settle(app, pilot)
        view = app.query_one(IRView)
        assert not app.query_one("#left").display
        assert view.size.width == SIZE[0]
        assert all(line.index("│") >= 75 for line in _screen(app)[:5])  # a half of the whole width each
        before = _screen(app)
        await pilot.press(*["right"] * 12)
        await pilot.pause()
        assert view.scroll_offset.x > 0
        assert _screen(app) != before
        await pilot.press("v")
        await _settle(app, pilot)
        assert app.query_one("#left").display


async def test_k_lists_the_kernels_and_opens_the_one_picked(analyzer, session, gemm_analysis, gemm):
    other = TraceSession(analyzer, gemm_analysis.path, gemm)
    asked: list[str] = []

    def open_kernel(name: str) -> TraceSession:
        asked.append(name)
        if name == "broken":
            raise NoTrace("line 3: it does not compile")
        return other

    app = TraceApp(session, ["matmul", "broken", "other"], open_kernel)
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app, pilot)
        await pilot.press("k")
        await pilot.pause()
        picker = app.screen
        assert isinstance(picker, KernelPicker)
        listed = [str(o.prompt) for o in picker.query_one(OptionList).options]
        assert listed == ["● matmul", "  broken", "  other"]
        await pilot.press("down", "enter")
        await _settle(app, pilot)
        assert asked == ["broken"] and app.session is session
        await pilot.press("k", "down", "down", "enter")
        await _settle(app, pilot)
        assert asked == ["broken", "other"] and app.session is other
        assert app.current == next(p.index for p in other.passes if p.changed)
