"""Run TileLang's real lowering with a pass instrument that records every pass, in the worker.

The recorder keeps each pass's output module (cheap: TVM shares unchanged subtrees) and prints
nothing; IR text is produced on demand, which is what keeps analysis close to the cost of plain
lowering. The module right after ``tl.LayoutInference`` is kept apart: its ``layout_map``
annotations are overwritten by ``tl.LowerTileOp``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import tilelang
import tvm
from tilescope.core.model import PassRecord
from tilescope.core.targets import target_error

LAYOUT_PASS = "tl.LayoutInference"
ASCEND_LAYOUT_PASS = "tl.AscendLayoutInference"
LAYOUT_PASSES = (LAYOUT_PASS, ASCEND_LAYOUT_PASS)


def cuda_target(arch: str) -> Any:
    """A TVM target from a short name: ``sm_90``, ``sm_80``, ``gfx942`` (HIP), ``ascend`` or ``metal``."""
    problem = target_error(arch)
    if problem:
        raise ValueError(problem)
    if arch == "ascend":
        return tvm.target.Target("ascend")
    if arch.startswith("sm_"):
        return tvm.target.Target({"kind": "cuda", "arch": arch})
    if arch.startswith("gfx"):
        return tvm.target.Target({"kind": "hip", "mcpu": arch})
    return tvm.target.Target({"kind": arch})


@dataclass
class Lowered:
    passes: list[PassRecord]
    modules: list[Any]
    """``modules[i]`` is the IR after pass ``i``; ``initial`` is the IR before the first."""
    initial: Any
    layout_module: Any | None
    artifact: Any | None = None
    error: BaseException | None = None
    failed_pass: str | None = None
    total_ms: float = 0.0
    phases: list[str] = field(default_factory=list)


@tvm.instrument.pass_instrument
class _Recorder:
    """Records top-level passes only: tile-op lowering runs nested pass pipelines of its own."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.durations: list[float] = []
        self.modules: list[Any] = []
        self.initial: Any = None
        self.current: str | None = None
        self._starts: list[float] = []

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if self.initial is None:
            self.initial = mod
        if not self._starts:
            self.current = info.name
        self._starts.append(time.perf_counter())

    def run_after_pass(self, mod: Any, info: Any) -> None:
        start = self._starts.pop()
        if self._starts:
            return
        self.durations.append((time.perf_counter() - start) * 1000)
        self.names.append(info.name)
        self.modules.append(mod)
        self.current = None


def _phases(names: list[str]) -> list[str]:
    """Name the stage of TileLang's CUDA pipeline each pass belongs to, by its landmarks."""

    def first(name: str, after: int = 0) -> int:
        return next((i for i in range(after, len(names)) if names[i] == name), len(names))

    tile_start = first("tirx.BindTarget")
    device_start = first("tl.HoistNonRestrictParams", tile_start) + 1
    codegen_start = first("tirx.Filter", device_start)
    layout_at = min(first(name, tile_start) for name in LAYOUT_PASSES)
    phases = []
    for i in range(len(names)):
        if i < tile_start:
            phases.append("frontend")
        elif i < layout_at:
            phases.append("tile-planning")
        elif i < device_start:
            phases.append("tile-lowering")
        elif i < codegen_start:
            phases.append("device")
        else:
            phases.append("codegen")
    return phases


def _changed(before: Any, after: Any) -> bool:
    """Whether a pass changed the module. Some releases' IR holds objects without structural-equality
    metadata (``tl.ReducerInfo`` of ``T.alloc_reducer`` in 0.1.10): their printed text decides then."""
    if before is None:
        return True
    if before.same_as(after):
        return False
    try:
        return not tvm.ir.structural_equal(before, after)
    except Exception:
        try:
            return before.script() != after.script()
        except Exception:
            return True


def lower(prim_func: Any, arch: str, pass_configs: dict[str, Any] | None = None) -> Lowered:
    """Lower ``prim_func`` for ``arch`` and record every pass; a failure is returned, not raised.

    The pass context is the one ``tilelang.compile`` opens (``opt_level=3`` and the kernel's
    ``pass_configs``), so the build is the one TileLang makes.
    """
    target = cuda_target(arch)
    recorder = _Recorder()
    artifact = None
    error: BaseException | None = None
    failed = None
    start = time.perf_counter()
    try:
        with target, tvm.transform.PassContext(opt_level=3, config=pass_configs or {}, instruments=[recorder]):
            artifact = tilelang.lower(prim_func, target=target)
    except Exception as err:
        error = err
        failed = recorder.current
    total = (time.perf_counter() - start) * 1000
    changed = []
    previous = recorder.initial
    for mod in recorder.modules:
        changed.append(_changed(previous, mod))
        previous = mod
    phases = _phases(recorder.names)
    passes = [
        PassRecord(index=i, name=n, phase=phases[i], duration_ms=round(d, 3), changed=c)
        for i, (n, d, c) in enumerate(zip(recorder.names, recorder.durations, changed, strict=True))
    ]
    layout_index = next((i for i, n in enumerate(recorder.names) if n in LAYOUT_PASSES), None)
    return Lowered(
        passes=passes,
        modules=recorder.modules,
        initial=recorder.initial,
        layout_module=recorder.modules[layout_index] if layout_index is not None else None,
        artifact=artifact,
        error=error,
        failed_pass=failed,
        total_ms=total,
        phases=phases,
    )
