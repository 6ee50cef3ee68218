"""Layout images and terminal drawings: the pixels and text say who owns what."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from PIL import Image
from rich.console import Console
from tilescope.core.ide.layout_view import layout_view
from tilescope.core.ide.palette import thread_colour
from tilescope.core.model import Buffer, Layout
from tilescope.visualizer.layout_plot import draw_fragment, save
from tilescope.visualizer.layout_term import render

# An 8×8 fp32 tile on 64 threads, one element each, transposed: thread = 8 * column + row.
TRANSPOSED = Layout(
    buffer="T",
    kind="fragment",
    input_shape=[8, 8],
    output_shape=[1],
    input_vars=["i", "j"],
    index=["0"],
    thread="j * 8 + i",
    replicate=1,
    thread_extent=64,
    elements_per_thread=1,
)
# A row statistic held by all 4 threads of a quad: replicated 4 times.
REPLICATED = Layout(
    buffer="R",
    kind="fragment",
    input_shape=[8],
    output_shape=[1],
    input_vars=["i"],
    index=["0"],
    thread="i * 4 + rep",
    replicate_var="rep",
    replicate=4,
    thread_extent=32,
    elements_per_thread=1,
)


def _pixel(figure, ax, row: float, col: float) -> np.ndarray:
    canvas = figure.canvas
    canvas.draw()
    x, y = ax.transData.transform((col, row))
    rgba = np.asarray(canvas.buffer_rgba())
    return rgba[round(float(rgba.shape[0] - y)), round(float(x)), :3] / 255.0


def test_each_cell_is_painted_in_its_owning_threads_colour():
    view = layout_view(TRANSPOSED, None)
    figure = draw_fragment(view)
    FigureCanvasAgg(figure)
    ax = figure.axes[0]
    for r, c in [(0, 0), (3, 5), (7, 1)]:
        # sample near the cell's corner, clear of its label
        got = _pixel(figure, ax, r - 0.38, c - 0.38)
        assert np.allclose(got, to_rgb(thread_colour(c * 8 + r)), atol=0.02), (r, c)


def test_labels_name_thread_and_register_and_replicas():
    assert [row[:2] for row in layout_view(TRANSPOSED, None).labels[:2]] == [
        [["T0", "r0"], ["T8", "r0"]],
        [["T1", "r0"], ["T9", "r0"]],
    ]
    view = layout_view(REPLICATED, None)
    assert view.labels == [
        [["T0+3", "r0"], ["T4+3", "r0"], ["T8+3", "r0"]] + [[f"T{4 * c}+3", "r0"] for c in range(3, 8)]
    ]
    assert "each element on 4 threads" in view.title


def test_gemm_accumulator_image_is_small_fast_to_open_and_readable(gemm, tmp_path):
    layout = gemm.layout("C_local")
    path = save(layout_view(layout, gemm.buffer("C_local")), tmp_path / "c.png")
    assert path.stat().st_size < 2 * 1024 * 1024
    with Image.open(path) as image:
        width, height = image.size
    assert 800 <= width <= 2400 and 400 <= height <= 1600


@pytest.mark.parametrize("suffix", [".svg", ".pdf"])
def test_vector_formats_follow_the_suffix(gemm, tmp_path, suffix):
    path = save(layout_view(gemm.layout("A_shared"), gemm.buffer("A_shared")), tmp_path / f"a{suffix}")
    head = path.read_bytes()[:5]
    assert head.startswith(b"%PDF") if suffix == ".pdf" else b"<?xml" in path.read_bytes()[:100]


def test_shared_view_reports_the_swizzled_gemm_operands_conflict_free_for_ldmatrix(gemm):
    for name in ("A_shared", "B_shared"):
        view = layout_view(gemm.layout(name), gemm.buffer(name))
        by_pattern = {c.pattern: c for c in view.conflicts}
        assert by_pattern["ldmatrix"].worst == 1, name
        assert by_pattern["row-16B"].worst == 1, name


def test_terminal_drawing_lists_threads_and_conflicts(gemm):
    console = Console(width=100, record=True, color_system="truecolor")
    render(layout_view(gemm.layout("C_local"), gemm.buffer("C_local")), console)
    render(layout_view(gemm.layout("B_shared"), gemm.buffer("B_shared")), console)
    text = console.export_text()
    assert "128 threads × 128 registers" in text
    assert "T31" in text and "r5" in text
    assert "ldmatrix" in text and "1-way" in text
    assert all(len(line) <= 100 for line in text.splitlines())


def test_unswizzled_buffer_shows_its_conflicts():
    row_major = Layout(
        buffer="S",
        kind="layout",
        input_shape=[32, 64],
        output_shape=[2048],
        input_vars=["i", "j"],
        index=["i * 64 + j"],
    )
    view = layout_view(row_major, Buffer("S", [32, 64], "float16", "shared", 2 * 32 * 64, None))
    console = Console(width=100, record=True)
    render(view, console)
    assert "8-way" in console.export_text()
