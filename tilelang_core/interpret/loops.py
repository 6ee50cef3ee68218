"""Loops of the interpreted PrimFunc at run time: serial, unrolled and pipelined loops in order (a bound
that differs across lanes runs to the longest, finished lanes masked), ``T.Parallel`` and vectorised
loops as one more lane axis (all iterations at once, which is what their independence allows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from tilescope.core.interpret.context import Frame, Run
from tilescope.core.interpret.memory import NotInterpretable


def serial_loop(k: int, lo: Callable[[Frame], Any], extent: Callable[[Frame], Any], body: Run) -> Run:
    """A loop run in order, its variable in slot ``k``; a plan's ``tick`` counts each iteration."""

    def serial(f: Frame) -> None:
        start, count = lo(f), extent(f)
        if isinstance(start, np.ndarray) or isinstance(count, np.ndarray):
            return _serial_lanes(f, k, start, count, body)
        plan = f.plan
        for i in range(int(start), int(start) + int(count)):
            f.values[k] = i
            if plan is not None:
                plan.tick()
            body(f)
        return None

    return serial


def _serial_lanes(f: Frame, k: int, start: Any, count: Any, body: Run) -> None:
    """A serial loop whose bounds differ across lanes: run to the longest, masking finished lanes."""
    saved = f.mask
    for step in range(int(np.max(count)) if np.size(count) else 0):
        live = step < count
        f.mask = live if saved is None else saved & live
        f.values[k] = start + step
        body(f)
    f.mask = saved


def parallel_loop(
    k: int, lo: Callable[[Frame], Any], extent: Callable[[Frame], Any], body: Run, dtype: np.dtype, name: str, line: int
) -> Run:
    """A ``T.Parallel`` or vectorised loop as a new lane axis, named ``name`` at ``line`` in the frame's loops."""

    def parallel(f: Frame) -> None:
        start, count = lo(f), extent(f)
        if isinstance(count, np.ndarray):
            raise NotInterpretable("not interpretable: a T.Parallel extent that differs across lanes")
        count = int(count)
        if count <= 0:
            return
        saved = f.lanes
        f.values[k] = (np.arange(count, dtype=dtype) + start).reshape((count,) + (1,) * saved)
        f.lanes = saved + 1
        f.loops.append((name, start, count, line))
        try:
            body(f)
        finally:
            f.lanes = saved
            f.loops.pop()

    return parallel
