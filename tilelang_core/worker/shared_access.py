"""Bank conflicts of every shared-memory access in the lowered IR, evaluated lane by lane. Runs in the worker.

The module read is the last one before ``MergeSharedMemoryAllocations``: layouts are inferred and
applied, swizzles, vectorisation, ``ldmatrix``/``stmatrix`` and ``cp.async`` are in place and buffers
are flat, but each shared buffer still has its own name. Every load, store and matrix instruction on a
shared buffer has its address evaluated for every thread of the block (numpy over the thread axis),
with enclosing loops at their first iteration except inner ones small enough to walk whole, and the
enclosing conditions deciding which lanes take part. The warp's request is then split into phases
and banks by :mod:`tilescope.core.perf.bank_conflicts`. TMA and ``wgmma`` read shared memory through the
async engines, not the load/store unit, and so have no bank conflicts to report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from tilescope.core.codes import diagnostic
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Access, Buffer, Diagnostic, SharedAccess, SharedInstruction, SharedOp, Span
from tilescope.core.perf.bank_conflicts import BANK_BYTES, BANKS, phase_degrees
from tilescope.core.worker.shared_sites import (
    INSTANCE_BUDGET,
    WARP,
    Env,
    Site,
    ThreadAxes,
    Unknown,
    Walker,
    per_thread,
    var_key,
)
from tvm import tirx


@dataclass
class _Tally:
    requests: int = 0
    wavefronts: int = 0
    ideal: int = 0
    ways: int = 1
    lane_banks: list[int] | None = None
    worst: tuple[np.ndarray, np.ndarray] | None = None
    """Start bytes and active lanes of the worst request, for trying fixes on it."""


def _instances(loops: tuple, env: Env) -> tuple[list[dict[int, int]], int | None]:
    """Loop-counter assignments to evaluate, innermost loops walked whole within the budget; and the trip count."""
    trips: int | None = 1
    walked: list[tuple[Any, int, int]] = []
    budget = INSTANCE_BUDGET
    fixed: dict[int, int] = {}
    for var, start, extent in reversed(loops):
        try:
            first = int(np.asarray(env.value(start)).reshape(-1)[0])
        except Unknown:
            first = 0
        count = int(extent) if isinstance(extent, tirx.IntImm) else None
        trips = trips * count if trips is not None and count is not None else None
        if count is not None and count <= budget:
            walked.append((var, first, count))
            budget //= count
        else:
            fixed[var_key(var)] = first
            budget = 1
    assignments = [dict(fixed)]
    for var, first, count in walked:
        assignments = [{**a, var_key(var): first + i} for a in assignments for i in range(count)]
    return assignments, trips


def _measure(site: Site, axes: ThreadAxes) -> _Tally | None:
    threads = axes.threads
    env = Env(threads)
    axes.fill(env)
    for var, value in site.binds:
        env.binds[var_key(var)] = value
    try:
        assignments, _trips = _instances(site.loops, env)
    except Unknown:
        return None
    tally = _Tally()
    for assignment in assignments:
        env.values.update(assignment)
        try:
            chunks = site.addresses(env)
            active = np.ones(threads, dtype=bool)
            for cond in site.conditions:
                try:
                    active &= per_thread(np.asarray(env.value(cond), dtype=np.int64), threads)[:, 0] != 0
                except Unknown:
                    continue  # a condition on data: every lane is counted
        except Unknown:
            return None
        warps = -(-threads // WARP)
        lanes_on = np.zeros(warps * WARP, dtype=bool)
        lanes_on[:threads] = active
        lanes_on = lanes_on.reshape(warps, WARP)
        for chunk in range(chunks.shape[1]):
            start = np.zeros(warps * WARP, dtype=np.int64)
            start[:threads] = chunks[:, chunk]
            _tally_requests(tally, start.reshape(warps, WARP), lanes_on, site)
    return tally if tally.requests else None


def warp_costs(
    start: np.ndarray, active: np.ndarray, unit: int, phases: list[list[int]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Wavefronts, ideal wavefronts and worst phase degree of each of a batch of warp requests.

    ``start[w, lane]`` is the first byte lane ``lane`` of request ``w`` touches (it moves ``unit``
    bytes); ``active[w, lane]`` whether it takes part. A lane that does not is given the word of the
    phase's first active lane, which adds nothing; a phase without active lanes costs nothing.
    """
    words_per_lane = max(unit // BANK_BYTES, 1)
    count = start.shape[0]
    wavefronts = np.zeros(count, dtype=np.int64)
    ideal = np.zeros(count, dtype=np.int64)
    worst = np.ones(count, dtype=np.int64)
    for phase in phases:
        lanes = np.asarray([lane for lane in phase if lane < start.shape[1]], dtype=np.int64)
        if lanes.size == 0:
            continue
        on = active[:, lanes]
        taking = on.any(axis=1)
        first_on = np.argmax(on, axis=1)
        first = start[:, lanes] // BANK_BYTES
        first = np.where(on, first, first[np.arange(count), first_on][:, None])
        words = (first[:, :, None] + np.arange(words_per_lane)[None, None, :]).reshape(count, -1)
        degree = np.where(taking, phase_degrees(words), 0)
        wavefronts += degree
        ideal += taking
        worst = np.maximum(worst, degree)
    return wavefronts, ideal, worst


def request_cost(start: np.ndarray, active: np.ndarray, unit: int, phases: list[list[int]]) -> tuple[int, int, int]:
    """``(wavefronts, ideal wavefronts, worst phase degree)`` of one warp request (see :func:`warp_costs`)."""
    wavefronts, ideal, worst = warp_costs(start[None, :], active[None, :], unit, phases)
    return int(wavefronts[0]), int(ideal[0]), int(worst[0])


def _tally_requests(tally: _Tally, start: np.ndarray, active: np.ndarray, site: Site) -> None:
    """Add a batch of warp requests (one per row; rows without an active lane are no request)."""
    taking = active.any(axis=1)
    if not taking.any():
        return
    start, active = start[taking], active[taking]
    wavefronts, ideal, worst = warp_costs(start, active, site.unit, site.phases(site.unit))
    heaviest = int(np.argmax(worst))
    if tally.worst is None or int(worst[heaviest]) > tally.ways:
        tally.worst = (start[heaviest].copy(), active[heaviest].copy())
    tally.requests += len(start)
    tally.wavefronts += int(wavefronts.sum())
    tally.ideal += int(ideal.sum())
    tally.ways = max(tally.ways, int(worst.max()))
    if tally.lane_banks is None:
        tally.lane_banks = [int(b // BANK_BYTES % BANKS) if a else -1 for b, a in zip(start[0], active[0], strict=True)]


def _tile_line(buffer: str, op: SharedOp, tile_ops: list[Access]) -> tuple[int | None, str | None]:
    """The tile operation that made an access: the first that writes (for a store) or reads (a load) the buffer."""
    for access in tile_ops:
        names = access.writes if op == "store" else access.reads
        if buffer in names and access.line is not None:
            return access.line, access.op
    return None, None


@dataclass
class _Group:
    tally: _Tally
    per_block: int
    tile_op: str | None
    site: Site


def _trips(site: Site, threads: int) -> tuple[int, int]:
    try:
        assignments, trips = _instances(site.loops, Env(threads))
    except Unknown:
        return 1, 1
    return len(assignments), trips or len(assignments)


def _groups(
    module: Any, path: str, tile_ops: list[Access]
) -> dict[tuple[str, int | None, SharedOp, SharedInstruction], _Group]:
    walked = []
    for func in module.functions.values():
        if isinstance(func, tirx.PrimFunc) and func.attrs is not None and "tirx.is_global_func" in func.attrs:
            walker = Walker(path)  # one per device kernel: each has its own threads
            walker.walk(func.body)
            walked.extend((site, walker) for site in walker.sites)
    grouped: dict[tuple[str, int | None, SharedOp, SharedInstruction], _Group] = {}
    for site, walker in walked:
        tally = _measure(site, walker.axes)
        if tally is None:
            continue
        line, tile_op = _tile_line(site.buffer, site.op, tile_ops)
        line = line or site.line
        walked, trips = _trips(site, walker.axes.threads)
        per_block = round(tally.requests * trips / max(walked, 1))  # the walked passes' requests, scaled to every pass
        key = (site.buffer, line, site.op, site.instruction)
        group = grouped.get(key)
        if group is None:
            grouped[key] = _Group(tally, per_block, tile_op, site)
            continue
        old = group.tally
        if tally.ways > old.ways:
            old.worst, group.site = tally.worst, site
        old.requests += tally.requests
        old.wavefronts += tally.wavefronts
        old.ideal += tally.ideal
        old.ways = max(old.ways, tally.ways)
        group.per_block += per_block
    return grouped


def shared_accesses(module: Any | None, path: str, tile_ops: list[Access]) -> list[tuple[SharedAccess, _Group]]:
    """Every shared-memory access of the kernel's device function, one per buffer, line, op and instruction."""
    if module is None:
        return []
    found = []
    for (buffer, line, op, instruction), group in _groups(module, path, tile_ops).items():
        tally = group.tally
        record = SharedAccess(
            buffer=buffer,
            line=line,
            op=op,
            ways=tally.ways,
            wavefronts=round(tally.wavefronts / tally.requests, 2),
            ideal_wavefronts=round(tally.ideal / tally.requests, 2),
            instruction=instruction,
            tile_op=group.tile_op,
            requests_per_block=group.per_block,
            lane_banks=tally.lane_banks or [],
        )
        found.append((record, group))
    return sorted(found, key=lambda a: (a[0].line or 0, a[0].buffer, a[0].op))


WARN_WAYS = 4
"""A conflict degree from which a warning is given: below it the cost is usually hidden by other work."""


def padding_fix(group: _Group, shape: list[int], element: int) -> int | None:
    """The fewest elements of padding on the last dimension that make the worst request conflict-free.

    The worst request's addresses are unravelled over the buffer's logical shape and laid out again
    with a longer last row; the first padding (in 4-byte steps) whose request costs its ideal wins.
    """
    if group.tally.worst is None or len(shape) < 2 or any(d <= 0 for d in shape):
        return None
    start, active = group.tally.worst
    site = group.site
    elements = start // element
    size = math.prod(shape)
    stage, inner = np.divmod(elements, size)
    coords = np.unravel_index(np.clip(inner, 0, size - 1), shape)
    step = max(BANK_BYTES // element, 1)
    for pad in range(step, 8 * step + 1, step):
        padded = [*list(shape[:-1]), shape[-1] + pad]
        moved = (stage * math.prod(padded) + np.ravel_multi_index(coords, padded)) * element
        _wavefronts, _ideal, worst = request_cost(moved, active, site.unit, site.phases(site.unit))
        if worst == 1:
            return pad
    return None


def conflict_diagnostic(
    record: SharedAccess, group: _Group, buffer: Buffer | None, linear: bool, kernel: str
) -> Diagnostic | None:
    """A warning for an access of ``WARN_WAYS`` ways or more, with the padding that removes it where one does."""
    if record.ways < WARN_WAYS or record.line is None:
        return None
    what = {"lds": "loads", "sts": "stores", "cp.async": "cp.async stores"}.get(record.instruction, record.instruction)
    conflict: dict[str, object] = {
        "ways": record.ways,
        "what": what,
        "buffer": record.buffer,
        "wavefronts": record.wavefronts,
        "ideal": record.ideal_wavefronts,
    }
    if record.tile_op is not None:
        conflict["op"] = "T.Parallel loop" if record.tile_op == "parallel" else f"T.{record.tile_op}"
    attributed = record.tile_op is not None
    span = Span(record.line)
    if buffer is not None and linear and all(isinstance(d, int) for d in buffer.shape):
        element = max((dtype_bits(buffer.dtype) or 8) // 8, 1)
        shape = [int(d) for d in buffer.shape]
        pad = padding_fix(group, shape, element)
        if pad is not None:
            padded = ", ".join(str(d) for d in shape[:-1]) + f", {shape[-1]} + {pad}"
            form = None if attributed else "unattributed"
            return diagnostic("bank-conflict", span, form=form, kernel=kernel, padded=padded, fields=conflict)
    form = "swizzle" if attributed else "unattributed_swizzle"
    return diagnostic("bank-conflict", span, form=form, kernel=kernel, fields=conflict)
