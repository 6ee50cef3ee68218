"""What the visualizer costs: layout images, pass switching in the viewer, exports, graphs.

    python benchmarks/bench_visualizer.py [--repeat 5] [--tilelang]

- Layouts: every inferred layout of every example drawn to PNG (median of ``--repeat``), its size,
  and the GEMM's 128×128 accumulator also as SVG. ``--tilelang`` also times TileLang's own
  ``plot_layout`` on that accumulator (it takes minutes).
- Pass switching: the viewer driven headless on flash attention, every changing pass selected in
  turn, first visit (diff computed) and revisit; then the same with every IR scaled to ~5,000
  lines (the real IR repeated), the size the goal is stated for (≤ 50 ms). "switch" is select →
  diff ready and handed to the IR pane (diffing included on a first visit), "draw" renders the
  pane's visible lines; "whole frame" adds Textual repainting the screen in the headless pilot.
- Exports: ``--export html`` / ``patch`` of each example (fetching every IR through the worker).
- Graph: the flash-attention dataflow built and rendered with ``dot``.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tilescope.core.compiler.service import Analyzer  # noqa: E402
from tilescope.core.model import IRText, dumps  # noqa: E402

EXAMPLES = ["gemm.py", "softmax.py", "flash_attention.py", "dequant_gemm.py", "elementwise_add.py"]
SCALED_LINES = 5000


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def bench_layouts(analyzer: Analyzer, repeat: int, out: Path) -> None:
    started = time.perf_counter()
    from tilescope.core.ide.layout_view import layout_view
    from tilescope.visualizer.layout_plot import save

    print(f"\n== layouts (matplotlib import {time.perf_counter() - started:.2f} s, once per process)")
    print("   view: the core's LayoutView (what plotLayout sends, JSON KiB); png: drawing it, file KiB")
    print(
        f"{'kernel':<16}{'buffer':<18}{'kind':<10}{'tile':<14}{'view ms':>9}{'JSON':>6}"
        f"{'png ms':>8}{'cpu ms':>8}{'KiB':>6}"
    )
    for name in EXAMPLES:
        kernel = analyzer.analyze(str(ROOT / "examples" / name)).kernel()
        if kernel is None:
            continue
        for layout in kernel.layouts:
            views, walls, cpus = [], [], []
            for _ in range(repeat):
                t = time.perf_counter()
                view = layout_view(layout, kernel.buffer(layout.buffer))
                views.append(time.perf_counter() - t)
                wall, cpu = time.perf_counter(), time.process_time()
                path = save(view, out / f"{kernel.kernel}-{layout.buffer}.png")
                walls.append(time.perf_counter() - wall)
                cpus.append(time.process_time() - cpu)
            tile = "×".join(str(x) for x in layout.input_shape)
            print(
                f"{kernel.kernel:<16}{layout.buffer:<18}{layout.kind:<10}{tile:<14}"
                f"{_median(views) * 1000:>9.1f}{len(dumps(view)) // 1024:>6}"
                f"{_median(walls) * 1000:>8.0f}{_median(cpus) * 1000:>8.0f}{path.stat().st_size // 1024:>6}"
            )
        if kernel.kernel == "matmul":
            layout = kernel.layout("C_local")
            t = time.perf_counter()
            svg = save(layout_view(layout, kernel.buffer("C_local")), out / "C_local.svg")
            print(f"  C_local as SVG: {(time.perf_counter() - t) * 1000:.0f} ms, {svg.stat().st_size // 1024} KiB")


def bench_tilelang_plot(out: Path) -> None:
    import importlib.util

    import tilelang
    from tilelang import tvm
    from tilelang.tools.plot_layout import plot_layout
    from tvm.tirx.stmt_functor import post_order_visit

    spec = importlib.util.spec_from_file_location("gemm", ROOT / "examples" / "gemm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = {}

    @tvm.instrument.pass_instrument
    class Capture:
        def run_after_pass(self, mod, info):
            if info.name == "tl.LayoutInference":

                def visit(node):
                    if isinstance(node, tvm.tirx.SBlock) and "layout_map" in node.annotations:
                        for buf, obj in node.annotations["layout_map"].items():
                            found.setdefault(buf.name, obj)

                for _, func in mod.functions.items():
                    post_order_visit(func.body, visit)

    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90"})
    with target, tvm.transform.PassContext(instruments=[Capture()]):
        tilelang.lower(module.matmul(1024, 1024, 1024), target=target)
    t = time.perf_counter()
    plot_layout(found["C_local"], save_directory=str(out / "tilelang"), name="C_local", formats="png")
    took = time.perf_counter() - t
    png = out / "tilelang" / "C_local.png"
    print(f"  TileLang plot_layout(C_local, png): {took:.1f} s, {png.stat().st_size / 2**20:.1f} MiB")


def _scaled(ir: IRText, times: int) -> IRText:
    """The IR repeated ``times`` over (each copy's names suffixed), with its source lines."""
    lines = ir.text.splitlines()
    out, sources = [], []
    for k in range(times):
        out += [line.replace("main", f"main_{k}") for line in lines]
        sources += list(ir.source_lines) + [None] * (len(lines) - len(ir.source_lines))
    return IRText("\n".join(out), sources)


async def _switch_times(session, label: str) -> None:
    """Select every changing pass in turn; time the switch, the drawing of the IR pane, the full frame."""
    from textual.worker import WorkerState
    from tilescope.visualizer.ir_view import IRView
    from tilescope.visualizer.trace_app import TraceApp

    app = TraceApp(session)
    changed = [p.index for p in session.passes if p.changed]
    shown: dict[int, float] = {}
    show_pass = app.show_pass

    def stamped(index, *rest) -> None:
        show_pass(index, *rest)
        shown[index] = time.perf_counter()

    app.show_pass = stamped
    async with app.run_test(size=(160, 48)) as pilot:
        while any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers):
            await asyncio.sleep(0.01)
        view = app.query_one(IRView)
        for visit in ("first", "again"):
            switch, draw, frame, biggest = [], [], [], 0
            if visit == "first":
                session.forget_diffs()
            for index in changed[1:]:
                shown.pop(index, None)
                started = time.perf_counter()
                app.select(index)
                while index not in shown:
                    await asyncio.sleep(0.0002)
                switch.append((shown[index] - started) * 1000)
                t = time.perf_counter()
                strips = [view.render_line(y) for y in range(view.size.height)]
                draw.append((time.perf_counter() - t) * 1000)
                assert strips and view.row_count > 0
                await pilot.pause()
                frame.append((time.perf_counter() - started) * 1000)
                biggest = max(biggest, len(session.ir(index).text.splitlines()))
            total = [a + b for a, b in zip(switch, draw, strict=True)]
            print(
                f"  {label:<28}{visit:<6} IR ≤ {biggest:>4} lines: switch+draw median {_median(total):5.1f} ms "
                f"(max {max(total):5.1f}; switch {_median(switch):.1f}, draw {_median(draw):.1f}); "
                f"whole frame {_median(frame):.0f} ms"
            )


def bench_switch(analyzer: Analyzer) -> None:
    from tilescope.visualizer.trace_session import TraceSession

    print("\n== pass switching in the viewer (select → diff drawn)")
    result = analyzer.analyze(str(ROOT / "examples" / "flash_attention.py"))
    kernel = result.kernel()
    session = TraceSession(analyzer, result.path, kernel)
    for p in session.passes:
        session.ir(p.index)
    session.ir(-1)
    asyncio.run(_switch_times(session, "flash_attention (real IR)"))

    longest = max(len(session.ir(p.index).text.splitlines()) for p in session.passes)
    times = -(-SCALED_LINES // longest)

    class ScaledSession(TraceSession):
        """The same passes, every IR repeated to ~5,000 lines."""

        scaled: ClassVar[dict[int, IRText]] = {}

        def ir(self, index: int) -> IRText:
            if index not in self.scaled:
                self.scaled[index] = _scaled(super().ir(index), times)
            return self.scaled[index]

    scaled = ScaledSession(analyzer, result.path, kernel)
    for p in scaled.passes:
        scaled.ir(p.index)
    scaled.ir(-1)
    asyncio.run(_switch_times(scaled, f"flash_attention IR ×{times}"))


def bench_exports(analyzer: Analyzer, out: Path) -> None:
    from tilescope.visualizer.trace_export import to_html, to_patch
    from tilescope.visualizer.trace_session import TraceSession

    print("\n== exports (fresh session: every IR fetched from the warm worker)")
    for name in EXAMPLES:
        result = analyzer.analyze(str(ROOT / "examples" / name))
        kernel = result.kernel()
        if kernel is None:
            continue
        for fmt, export in (("html", to_html), ("patch", to_patch)):
            session = TraceSession(analyzer, result.path, kernel)
            t = time.perf_counter()
            text = export(session)
            took = time.perf_counter() - t
            (out / f"{kernel.kernel}.{fmt}").write_text(text)
            print(f"  {kernel.kernel:<16}{fmt:<6}{took * 1000:>8.0f} ms {len(text.encode()) / 1024:>8.0f} KiB")


def bench_graph(analyzer: Analyzer, out: Path) -> None:
    from tilescope.visualizer.dataflow import build_graph
    from tilescope.visualizer.graph_cmd import write

    print("\n== graph")
    kernel = analyzer.analyze(str(ROOT / "examples" / "flash_attention.py")).kernel()
    t = time.perf_counter()
    graph = build_graph(kernel)
    built = time.perf_counter() - t
    dot = shutil.which("dot")
    t = time.perf_counter()
    _, message = write(graph, out / "flash_attention.svg", dot)
    print(f"  build {built * 1000:.1f} ms; render {(time.perf_counter() - t) * 1000:.0f} ms: {message}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tilelang", action="store_true", help="also time TileLang's plot_layout (minutes)")
    parser.add_argument(
        "--only", choices=["layouts", "switch", "exports", "graph"], action="append", help="run only these parts"
    )
    args = parser.parse_args()
    parts = set(args.only or ["layouts", "switch", "exports", "graph"])
    with tempfile.TemporaryDirectory() as tmp, Analyzer(timeout_s=300) as analyzer:
        out = Path(tmp)
        t = time.perf_counter()
        for name in EXAMPLES:
            analyzer.analyze(str(ROOT / "examples" / name))
        print(f"analysed {len(EXAMPLES)} examples in {time.perf_counter() - t:.1f} s (cold worker)")
        if "layouts" in parts:
            bench_layouts(analyzer, args.repeat, out)
        if args.tilelang:
            bench_tilelang_plot(out)
        if "switch" in parts:
            bench_switch(analyzer)
        if "exports" in parts:
            bench_exports(analyzer, out)
        if "graph" in parts:
            bench_graph(analyzer, out)


if __name__ == "__main__":
    main()
