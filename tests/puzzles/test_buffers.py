"""The grader's own buffers: poisoned bodies, seeded guards sized to the tensor, exact stray-write
counts and offsets, and the view the kernel's process maps from the same file."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch
from tilescope.puzzles.buffers import GUARD_MAX, GUARD_MIN, Workspace, guard_bytes, open_lent


@pytest.fixture
def ws() -> Iterator[Workspace]:
    w = Workspace()
    yield w
    w.close()


def test_guards_are_sized_to_the_tensor_within_bounds() -> None:
    assert guard_bytes(20) == GUARD_MIN
    assert guard_bytes(4 << 20) == 4 << 20
    assert guard_bytes(1 << 30) == GUARD_MAX
    assert guard_bytes(GUARD_MIN + 1) % 256 == 0


def test_a_fresh_output_is_unwritten_and_clean(ws: Workspace) -> None:
    buf = ws.buffer("Y", (5, 7), torch.float32, seed=3)
    buf.poison_body()
    assert buf.body.shape == (5, 7) and buf.unwritten().all() and buf.check().ok


def test_a_computed_nan_is_not_mistaken_for_unwritten(ws: Workspace) -> None:
    buf = ws.buffer("Y", (4,), torch.float32, seed=0)
    buf.poison_body()
    buf.body[:] = torch.zeros(4) / 0.0
    assert not buf.unwritten().any()


def test_integer_outputs_are_poisoned_too(ws: Workspace) -> None:
    buf = ws.buffer("Y", (8,), torch.int32, seed=0)
    buf.poison_body()
    assert buf.unwritten().all()
    buf.body.fill_(0)
    assert not buf.unwritten().any()


def _as_kernel_sees_it(buf_spec: dict, dtype: torch.dtype) -> torch.Tensor:
    _, whole, _ = open_lent(buf_spec, "cpu")
    return whole.view(dtype)


def test_writes_far_past_the_end_are_counted_exactly(ws: Workspace) -> None:
    buf = ws.buffer("C", (1000,), torch.float32, seed=1)
    buf.poison_body()
    flat = _as_kernel_sees_it(buf.spec.to_json(), torch.float32)  # another mapping of the same file
    start = buf.guard // 4
    flat[start : start + 1000] = 1.0
    flat[start + 1000 + 2560 : start + 1000 + 2560 + 2047] = 0.5  # 10 KB past the end, 2047 of them
    report = buf.check()
    assert (report.after, report.first_after, report.before) == (2047, 2560, 0)
    assert report.band == buf.guard // 4 >= 16384
    assert not buf.unwritten().any()


def test_writes_before_the_start_name_the_nearest(ws: Workspace) -> None:
    buf = ws.buffer("C", (16,), torch.float16, seed=2)
    flat = _as_kernel_sees_it(buf.spec.to_json(), torch.float16)
    start = buf.guard // 2
    flat[start - 2] = 1.0
    flat[start - 900] = 1.0
    report = buf.check()
    assert (report.before, report.first_before, report.after) == (2, 2, 0)


def test_inputs_round_trip_through_the_file(ws: Workspace) -> None:
    x = torch.randn(33, 17)
    buf = ws.buffer("A", (33, 17), torch.float32, seed=4)
    buf.fill(x)
    _, _, body = open_lent(buf.spec.to_json(), "cpu")
    assert torch.equal(body, x)
