"""The site's pictures of the apps are taken by tests, from the real app on the bundled GEMM, so that they show
what the app draws today. ``TILESCOPE_TRACE_SCREENSHOT=examples/screens/trace-layout-inference.svg`` writes
the picture the trace page shows."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from textual.worker import WorkerState
from tilescope.visualizer.trace_app import TraceApp
from tilescope.visualizer.trace_session import TraceSession

from tests.conftest import EXAMPLES


async def test_the_trace_viewer_on_layout_inference(analyzer, tmp_path: Path) -> None:
    analysis = analyzer.analyze(str(EXAMPLES / "gemm.py"))
    kernel = analysis.kernel("matmul")
    assert kernel is not None
    session = TraceSession(analyzer, analysis.path, kernel)
    wanted = next(p.index for p in session.passes if p.name == "tl.LayoutInference")
    app = TraceApp(session)
    async with app.run_test(size=(150, 42)) as pilot:
        for _ in range(len(session.passes)):
            if app.current == wanted:
                break
            await pilot.press("n")
        for _ in range(3000):
            if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
                break
            await pilot.pause(0.02)
        await pilot.pause()
        assert app.current == wanted
        picture = Path(app.save_screenshot(filename="trace.svg", path=str(tmp_path)))
    drawn = picture.read_text()
    assert drawn.startswith("<svg") and "LayoutInference" in drawn
    if target := os.environ.get("TILESCOPE_TRACE_SCREENSHOT"):
        shutil.copyfile(picture, target)
