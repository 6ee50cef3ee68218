"""Hand-built models whose editor views the VS Code extension's unit tests draw (a GPU kernel's layouts and
passes, an Ascend kernel's schedule).

``python -m tests.core.view_fixtures`` rewrites ``vscode-extension/test/fixtures/views.json``;
``test_layout_view.py`` fails while the checked-in file differs from what the core computes now.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from tilescope.core.ide.ir_diff import unified
from tilescope.core.ide.layout_view import choose, layout_buffers
from tilescope.core.ide.schedule_view import schedule_view
from tilescope.core.ide.trace_view import PassDiff, trace_view
from tilescope.core.model import (
    AscendBuffer,
    AscendCore,
    AscendFlag,
    AscendLoop,
    AscendModel,
    Buffer,
    CoreSection,
    FlagKind,
    IRText,
    KernelModel,
    Layout,
    MemoryLevel,
    PassRecord,
    ScheduleStep,
    to_json,
)

FIXTURE = Path(__file__).resolve().parents[2] / "vscode-extension" / "test" / "fixtures" / "views.json"

STAGED = Layout(
    buffer="S_shared",
    kind="layout",
    input_shape=[3, 16, 32],
    output_shape=[3, 8, 64],
    input_vars=["s", "i", "j"],
    index=["s", "i // 2", "i % 2 * 32 + (j // 8 + i // 2) % 4 * 8 + j % 8"],
    swizzle="custom",
)
ROW = Layout(
    buffer="r_frag",
    kind="fragment",
    input_shape=[64],
    output_shape=[2],
    input_vars=["i"],
    index=["i % 2"],
    thread="i // 2",
    replicate=1,
    thread_extent=32,
    elements_per_thread=2,
)
TRANSPOSED = Layout(
    buffer="t_frag",
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
BUFFERS = [
    Buffer("S_shared", [3, 16, 32], "float16", "shared.dyn", 3 * 16 * 32 * 2, 9),
    Buffer("r_frag", [64], "float32", "local.fragment", 256, 10),
    Buffer("t_frag", [8, 8], "float32", "local.fragment", 256, 11),
]
PASSES = [
    PassRecord(0, "pass_fn", "frontend", 0.25, False),
    PassRecord(1, "tl.LayoutInference", "layout", 3.5, True),
    PassRecord(2, "tl.NoSuchPass", "lower", 1.0, True),
]
BEFORE = IRText("a = 1\nfor i in range(4):\n    b[i] = a\n", [5, 6, 7])
AFTER = IRText("a = 1\nfor i in range(4):\n    b[i] = a * 2\n    c[i] = b[i]\n", [5, 6, 7, 8])


def model() -> KernelModel:
    return KernelModel(
        kernel="fixture",
        args={"M": 16},
        target="sm_90",
        buffers=BUFFERS,
        launch=None,
        layouts=[STAGED, ROW, TRANSPOSED],
        pipelines=[],
        warp_specialized=False,
        shared_bytes=3 * 16 * 32 * 2,
        passes=PASSES,
    )


def _op(core: AscendCore, op: str, operands: list[str], line: int | None, depth: int, loop: int | None) -> ScheduleStep:
    return ScheduleStep(0, core, op, operands, line, depth, None, loop_index=loop)


def _flag(
    core: AscendCore, kind: FlagKind, pipes: str, event: str, depth: int, loop: int | None, mode: int | None = None
) -> ScheduleStep:
    source, _, target = pipes.partition("→")
    flag = AscendFlag(kind, core, source, target, event, mode)
    return ScheduleStep(0, core, kind, [], None, depth, None, loop_index=loop, flag=flag)


SLOT = "(kt + w * 2) % 2"
"""The event of a double-buffered pipe flag: it rotates with the slot."""
SCHEDULE = [
    replace(step, index=index)
    for index, step in enumerate(
        [
            _flag("cube", "set", "MTE1→MTE2", "0", 0, None),
            _flag("cube", "set", "MTE1→MTE2", "1", 0, None),
            _flag("vector", "cross-set", "MTE3", "0", 0, None, 4),
            _op("scalar", "scalar", [], None, 1, 0),
            _flag("cube", "wait", "MTE1→MTE2", SLOT, 2, 1),
            _op("cube", "copy", ["X", "x_l1"], 77, 2, 1),
            _op("cube", "copy", ["W", "w_l1"], 78, 2, 1),
            _flag("cube", "set", "MTE2→MTE1", SLOT, 2, 1),
            _flag("cube", "wait", "MTE2→MTE1", SLOT, 2, 1),
            _op("cube", "gemm", ["x_l1", "w_l1", "res"], 79, 2, 1),
            _flag("cube", "set", "MTE1→MTE2", SLOT, 2, 1),
            _flag("cube", "cross-wait", "FIX", "16", 1, 0, 4),
            _flag("cube", "cross-wait", "FIX", "0", 1, 0, 4),
            _op("cube", "copy", ["res", "temp"], 81, 1, 0),
            _flag("cube", "cross-set", "FIX", "1", 1, 0, 4),
            _flag("cube", "cross-set", "FIX", "17", 1, 0, 4),
            _flag("vector", "cross-wait", "MTE3", "1", 1, 0, 4),
            _op("vector", "copy", ["temp", "C"], 82, 1, 0),
            _flag("vector", "cross-set", "MTE3", "0", 1, 0, 4),
            _flag("cube", "wait", "MTE1→MTE2", "0", 0, None),
            _flag("cube", "wait", "MTE1→MTE2", "1", 0, None),
            _flag("cube", "cross-wait", "FIX", "0", 0, None, 4),
            _flag("cube", "cross-wait", "FIX", "16", 0, None, 4),
        ]
    )
]
"""The corpus's mixed GEMM as TileLang schedules it (``example_gemm.py``): the Cube core moves and
multiplies double-buffered tiles, hands each finished tile to the Vector cores, which store it and hand
the Unified Buffer back."""
KIB = 1024


def _arena(name: str, line: int, offset: int) -> AscendBuffer:
    """A double-buffered fp8 operand placed in the dynamic L1 arena."""
    return AscendBuffer(
        name, "L1", [256, 256], "float8_e4m3fn", 64 * KIB, 2, line, False, "buf_dyn_l1", 256 * KIB, offset
    )


def ascend_model() -> KernelModel:
    flags = [step.flag for step in SCHEDULE if step.flag is not None]
    plan = AscendModel(
        kernel_kind="mix",
        buffers=[
            AscendBuffer("X", "GM", [512, 512], "float8_e4m3fn", 256 * KIB, 1, 58, is_param=True),
            AscendBuffer("res", "L0C", [256, 256], "float32", 256 * KIB, 1, 65),
            _arena("x_l1", 66, 0),
            _arena("w_l1", 67, 128 * KIB),
            AscendBuffer("temp", "UB", [128, 256], "float32", 128 * KIB, 1, 68),
        ],
        memory=[
            MemoryLevel("L1", 512 * KIB, 256 * KIB, ["x_l1", "w_l1"], True),
            MemoryLevel("L0C", 256 * KIB, 256 * KIB, ["res"], True),
            MemoryLevel("UB", 248 * KIB, 128 * KIB, ["temp"], True),
        ],
        schedule=SCHEDULE,
        loops=[AscendLoop("w", 2, None, ["temp"], 74, 0), AscendLoop("kt", 2, 2, ["x_l1", "w_l1"], 76, 1)],
        flags=flags,
        sections={"aic": CoreSection(["W", "X", "res"], 14), "aiv": CoreSection(["C", "temp"], 3)},
        simt_threads=[],
        scheduled=True,
    )
    return KernelModel("gemm", {"M_DIM": 512}, "ascend", [], None, [], [], False, 0, [], ascend=plan)


def fixture() -> dict[str, object]:
    kernel = model()
    return {
        "plotLayout": [to_json(choose(kernel, name)) for name in [None, *layout_buffers(kernel)]],
        "tracePasses": to_json(trace_view(kernel)),
        "passIR": to_json(PassDiff(kernel.kernel, 2, unified(BEFORE, AFTER))),
        "schedule": to_json(schedule_view(ascend_model())),
    }


def fixture_json() -> str:
    return json.dumps(fixture(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(fixture_json(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
