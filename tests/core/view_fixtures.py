"""Hand-built models whose editor views the VS Code extension's unit tests draw.

``python -m tests.core.view_fixtures`` rewrites ``vscode-extension/test/fixtures/views.json``;
``test_layout_view.py`` fails while the checked-in file differs from what the core computes now.
"""

from __future__ import annotations

import json
from pathlib import Path

from tilescope.core.ide.ir_diff import unified
from tilescope.core.ide.layout_view import choose, layout_buffers
from tilescope.core.ide.trace_view import PassDiff, trace_view
from tilescope.core.model import Buffer, IRText, KernelModel, Layout, PassRecord, to_json

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


def fixture() -> dict[str, object]:
    kernel = model()
    return {
        "plotLayout": [to_json(choose(kernel, name)) for name in [None, *layout_buffers(kernel)]],
        "tracePasses": to_json(trace_view(kernel)),
        "passIR": to_json(PassDiff(kernel.kernel, 2, unified(BEFORE, AFTER))),
    }


def fixture_json() -> str:
    return json.dumps(fixture(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    FIXTURE.write_text(fixture_json(), encoding="utf-8")
    print(f"wrote {FIXTURE}")
