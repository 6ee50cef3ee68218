"""The schedule view of an Ascend kernel: Cube and Vector rows side by side, each set flag an arrow to the waits it
releases, the memory plan per level; and the CLI's text drawn from the same rows."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tilescope.core.ide import NoSchedule, schedule_lens, schedule_text, schedule_view
from tilescope.core.model import AscendFlag, ScheduleStep

from tests.core.view_fixtures import ascend_model, model


def _rows(kind: str | None = None) -> list[tuple[str, str, int | None]]:
    view = schedule_view(ascend_model())
    return [(r.lane, r.text, r.line) for r in view.rows if kind is None or r.kind == kind]


def test_statements_sit_in_their_cores_lane_at_their_line():
    assert _rows("op") == [
        ("cube", "copy X → x_l1", 77),
        ("cube", "copy W → w_l1", 78),
        ("cube", "gemm(x_l1, w_l1, res)", 79),
        ("cube", "copy res → temp", 81),
        ("vector", "copy temp → C", 82),
    ]


def test_loops_head_their_rows_with_stages_and_multi_buffered_buffers():
    view = schedule_view(ascend_model())
    loops = [(r.row, r.depth, r.text, r.line) for r in view.rows if r.kind == "loop"]
    assert loops == [
        (3, 0, "for w in 2 · multi-buffered temp", 74),
        (4, 1, "for kt in 2 · 2 stages · multi-buffered x_l1, w_l1", 76),
    ]
    assert [r.depth for r in view.rows[5:12]] == [2] * 7  # the kt loop's body, inside both loops


def test_a_cube_flag_to_the_vector_cores_is_an_arrow_across_for_each_vector_core():
    view = schedule_view(ascend_model())
    across = {(a.source, a.target): a for a in view.arrows if a.across}
    first, second = across[(15, 17)], across[(16, 17)]
    assert (view.rows[15].text, view.rows[16].text, view.rows[17].text) == (
        "arrive FIX flag 1",
        "arrive FIX flag 17",
        "wait MTE3 flag 1",
    )
    assert (first.vector_core, second.vector_core) == (0, 1)  # flag 17 is flag 1 of the second Vector core
    assert first.label == "FIX→MTE3 #1" and first.when == "next"
    assert first.text == "Cube (AIC) arrive FIX flag 1 → Vector (AIV) wait MTE3 flag 1 (AIV 0)"


def test_the_vector_cores_hand_the_buffer_back_in_the_next_iteration_and_after_the_loop():
    view = schedule_view(ascend_model())
    back = [(a.target, a.when, a.vector_core) for a in view.arrows if a.source == 19]
    assert back == [
        (12, "next iteration", 1),
        (13, "next iteration", 0),
        (22, "after the loop", 0),
        (23, "after the loop", 1),
    ]
    first = [(a.target, a.when) for a in view.arrows if a.source == 2]  # the credit given before the loop
    assert first == [(12, "next"), (13, "next")]


def test_a_pipe_flag_of_one_core_is_an_arrow_along_its_lane():
    view = schedule_view(ascend_model())
    along = [(a.source, a.target, a.when, a.label) for a in view.arrows if not a.across]
    slot = "(kt + w * 2) % 2"
    assert along == [
        (0, 5, "next", "MTE1→MTE2 #0"),  # the two slots' credit before the loop
        (1, 5, "next", "MTE1→MTE2 #1"),
        (8, 9, "next", f"MTE2→MTE1 #{slot}"),  # the copies in, then the gemm
        (11, 5, "next iteration", f"MTE1→MTE2 #{slot}"),  # the gemm frees the slot for the next copy
        (11, 20, "after the loop", f"MTE1→MTE2 #{slot}"),
        (11, 21, "after the loop", f"MTE1→MTE2 #{slot}"),
    ]


def test_a_flag_between_all_ai_cores_has_no_partner_drawn():
    plan = ascend_model().ascend
    assert plan is not None
    barrier = AscendFlag("cross-set", "cube", "FIX", "", "3", mode=0)
    wait = replace(barrier, kind="cross-wait")
    steps = [ScheduleStep(0, "cube", "cross-set", [], 90, 0, None, flag=barrier)]
    steps.append(ScheduleStep(1, "cube", "cross-wait", [], 91, 0, None, flag=wait))
    view = schedule_view(replace(ascend_model(), ascend=replace(plan, schedule=steps, loops=[])))
    assert [r.text for r in view.rows] == ["arrive FIX flag 3 (all cores)", "wait FIX flag 3 (all cores)"]
    assert view.arrows == []


def test_the_memory_plan_is_per_level_with_each_buffers_place():
    view = schedule_view(ascend_model())
    assert [(m.level, m.text, m.buffers, m.fits) for m in view.levels] == [
        ("L1", "256 KB of 512 KB", ["x_l1", "w_l1"], True),
        ("L0C", "256 KB of 256 KB", ["res"], True),
        ("UB", "128 KB of 248 KB", ["temp"], True),
    ]
    assert [(b.name, b.placement) for b in view.placed] == [
        ("res", "own allocation, 256 KB"),
        ("x_l1", "at buf_dyn_l1+0, 2 × 64 KB"),
        ("w_l1", "at buf_dyn_l1+128 KB, 2 × 64 KB"),
        ("temp", "own allocation, 128 KB"),
    ]
    assert view.lens == "Schedule · Cube + Vector · 17 flags"
    assert view.flags_text == "flags in the AscendC: 17 (Cube 14, Vector 3)"


def test_the_text_is_drawn_from_the_same_rows():
    text = schedule_text(ascend_model()).splitlines()
    assert text[0] == "kernel gemm  target ascend  mix kernel"
    assert "  address plan: res L0C own allocation, 256 KB; x_l1 L1 at buf_dyn_l1+0, 2 × 64 KB;" in text[4]
    assert "  ┌ L76 for kt in 2 · 2 stages · multi-buffered x_l1, w_l1" in text
    assert "    L79 gemm(x_l1, w_l1, res)" in text
    assert "  · arrive FIX flag 1" + " " * 29 + "──────▶" in text
    assert " " * 63 + "L82 copy temp → C" in text
    assert text[-1] == "flags in the AscendC: 17 (Cube 14, Vector 3)"


def test_scalar_control_is_drawn_only_when_asked():
    assert not any(r.lane == "both" and r.kind != "loop" for r in schedule_view(ascend_model()).rows)
    scalars = schedule_view(ascend_model(), scalars=True)
    assert [(r.lane, r.kind, r.text) for r in scalars.rows if r.kind == "control"] == [("both", "control", "scalar")]


def test_a_kernel_for_another_target_has_no_schedule():
    gpu = model()
    assert schedule_lens(gpu) is None
    with pytest.raises(NoSchedule, match="kernel 'fixture' has no Ascend schedule \\(target sm_90\\)"):
        schedule_view(gpu)
    assert schedule_text(gpu) == "kernel fixture: no Ascend schedule (target sm_90)"
