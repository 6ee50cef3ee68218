"""The one layout view: its fold, colours and buffer order, and the fixture the extension's tests draw."""

from __future__ import annotations

import json

import numpy as np
from tilescope.core import layout_eval
from tilescope.core.ide import palette
from tilescope.core.ide.layout_text import thread_map_text
from tilescope.core.ide.layout_view import choose, layout_buffers, layout_view, plot_order
from tilescope.core.model import to_json
from tilescope.core.perf import bank_conflicts

from tests.core.view_fixtures import FIXTURE, ROW, STAGED, TRANSPOSED, fixture_json, model


def test_a_staged_shared_buffer_draws_its_first_stage_and_conflicts_on_the_same_grid():
    view = layout_view(STAGED, model().buffer("S_shared"))
    assert (view.rows, view.cols, view.stages) == (16, 32, 3)
    assert view.fold == "first of 3 stages drawn"
    first = layout_eval.shared_map(STAGED).offset[0]
    assert view.labels[2][9] == [str(first[2, 9])]
    for conflict in view.conflicts:
        panel = view.panel(conflict.panel)
        assert panel is not None and len(panel.values) == 16 and len(panel.values[0]) == 32
        assert conflict.worst == max(max(row) for row in panel.values)
    slots = view.panel("slot")
    assert slots is not None
    assert slots.values == ((first * 16 // 8) % 128 // 16).tolist()


def test_a_one_dimensional_fragment_wraps_in_rows_of_sixteen_everywhere():
    view = layout_view(ROW, None)
    assert (view.rows, view.cols) == (4, 16)
    threads = view.panel("thread")
    assert threads is not None and threads.values[1][:4] == [8, 8, 9, 9]
    assert thread_map_text(ROW, 4) == " 0  0  1  1\n 8  8  9  9\n16 16 17 17\n24 24 25 25"


def test_colours_are_one_table_per_panel_from_the_palette():
    view = layout_view(TRANSPOSED, None)
    threads, registers = view.panels
    assert threads.id == "thread" and threads.colours == [palette.thread_colour(t) for t in range(64)]
    assert threads.values[3][5] == 5 * 8 + 3
    assert [e.label for e in threads.legend] == ["warp 0 (T0–31)", "warp 1 (T32–63)"]
    assert registers.colours == [palette.register_colour(0, 1)]
    shared = layout_view(STAGED, None)
    degree = shared.panel("conflict:column")
    assert degree is not None and degree.colours[1] == palette.degree_colour(1) != degree.colours[8]


def test_conflicts_match_the_bank_model_on_the_first_stage():
    view = layout_view(STAGED, model().buffer("S_shared"))
    reports = bank_conflicts.analyze(layout_eval.shared_map(STAGED), "float16")
    assert [(c.pattern, c.worst, c.wavefronts) for c in view.conflicts] == [
        (r.pattern, r.max_degree, r.wavefronts) for r in reports
    ]
    column = view.panel("conflict:column")
    assert column is not None and np.array_equal(np.array(column.values), reports[-1].degree)


def test_buffers_are_offered_fragments_first_then_dynamic_then_static_shared():
    assert plot_order([("a", "shared"), ("b", "global"), ("c", "shared.dyn"), ("d", "local.fragment")]) == [
        "d",
        "c",
        "a",
    ]
    kernel = model()
    assert layout_buffers(kernel) == ["r_frag", "t_frag", "S_shared"]
    assert choose(kernel).buffer == "r_frag"
    assert choose(kernel, "S_shared").buffers == ["r_frag", "t_frag", "S_shared"]


def test_views_are_plain_json():
    answer = to_json(choose(model(), "S_shared"))
    assert json.loads(json.dumps(answer)) == answer


def test_the_extension_fixture_is_what_the_core_computes_now():
    assert FIXTURE.read_text(encoding="utf-8") == fixture_json(), "run: python -m tests.core.view_fixtures"
