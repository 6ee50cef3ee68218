"""The hazard check of one lowered kernel, in the worker: interpret a few blocks, report at the line.

It reuses the lowering ``tilescope check`` already ran: the module right after
``tl.VerifyBufferInit`` is what the interpreter executes, and the module after
``tl.LayoutInference`` gives each parallel loop's thread mapping. Inputs are seeded random tensors
at the kernel's own shapes; every global parameter counts as initialised.
"""

from __future__ import annotations

import time
from typing import Any

from tilescope.core.display import dims_text
from tilescope.core.interpret.hazards import barriers
from tilescope.core.interpret.hazards.diagnose import diagnostics
from tilescope.core.interpret.hazards.front import FRONT_END, front_end_module, tile_lines
from tilescope.core.interpret.hazards.plan import Plan
from tilescope.core.interpret.hazards.steered import steering_inputs
from tilescope.core.interpret.hazards.threads import ThreadMap, loop_layouts
from tilescope.core.interpret.hazards.tilelang_check import suspicions
from tilescope.core.interpret.hazards.tracker import Tracker
from tilescope.core.model import Diagnostic, HazardCheck

_INPUT_BYTES = 1 << 30
"""Larger inputs than this are not made: the check says so instead of running."""


def inputs(kernel: Any, seed: int = 0) -> list[Any] | str:
    """Seeded tensors for every parameter, or why they cannot be made."""
    import torch
    from tilelang import tvm
    from tilescope.core.interpret.launch import random_tensor

    shapes, dtypes = [], []
    for name, shape, dtype in kernel.buffer_params():
        if not all(isinstance(d, tvm.tirx.IntImm) for d in shape):
            return f"the shape of {name} is symbolic ({', '.join(str(d) for d in shape)})"
        shapes.append([int(d.value) for d in shape])
        dtypes.append(dtype)
    total = sum(torch.tensor([], dtype=torch.float32).element_size() * max(1, _count(s)) for s in shapes)
    if total > _INPUT_BYTES:
        return f"its tensors would take {total / 2**30:.1f} GiB"
    if any(kind == "scalar" for kind, _, _ in kernel.params):
        return "it takes scalar parameters"
    gen = torch.Generator().manual_seed(seed)
    return [random_tensor(s, d, gen) for s, d in zip(shapes, dtypes, strict=True)]


def _count(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def check(
    lowered: Any, configs: dict[str, Any], path: str, kernel: str, line: int, budget_s: float
) -> tuple[list[Diagnostic], HazardCheck]:
    """The interpreter's findings and the barrier check's of the final IR (which sees races between statements
    the interpreter's lockstep hides), one diagnostic per code and pair of lines."""
    found, summary = _interpreted(lowered, configs, path, kernel, line, budget_s)
    names = [p.name for p in lowered.passes]
    return merged(found, barriers.check(lowered.modules, names, path, kernel)), summary


def merged(interpreted: list[Diagnostic], barrier: list[Diagnostic]) -> list[Diagnostic]:
    """The interpreter's diagnostics, then the barrier check's that name other lines or say more (an error
    where the interpreter only had a note)."""
    said = {
        (d.code, d.span.line, *sorted(r.span.line for r in d.related)) for d in interpreted if d.severity == "error"
    }
    out = list(interpreted)
    for d in barrier:
        key = (d.code, d.span.line, *sorted(r.span.line for r in d.related))
        if key not in said:
            out.append(d)
    return out


def _interpreted(
    lowered: Any, configs: dict[str, Any], path: str, kernel: str, line: int, budget_s: float
) -> tuple[list[Diagnostic], HazardCheck]:
    """The kernel's hazard diagnostics and what ran to find them. ``configs`` is the pass configuration the
    kernel was lowered with (``@tilelang.jit(pass_configs=...)`` over the PrimFunc's own): with TileLang's
    bounds guards off (``tl.disable_safe_memory_legalize``) an access past the end is the kernel's."""
    from tilescope.core.interpret.kernel import Kernel
    from tilescope.core.interpret.memory import NotInterpretable

    func = front_end_module(lowered)
    if func is None:
        return [], HazardCheck([], [], 0.0, f"TileLang's pipeline did not reach {FRONT_END}")
    found = suspicions(func, path) or []
    start = time.perf_counter()
    try:
        compiled = Kernel(func, path, configs, tile_lines(path, kernel))
    except NotInterpretable as err:
        return diagnostics([], [], found, path, kernel, "", err.line), HazardCheck([], [], 0.0, str(err))
    except Exception as err:  # what the translation does not expect (a symbolic grid) is not run either
        stopped = f"not interpretable: {type(err).__name__}: {err}"
        return diagnostics([], [], found, path, kernel, "", 0), HazardCheck([], [], 0.0, stopped)
    tensors = inputs(compiled)
    if isinstance(tensors, str):
        stopped = f"not interpreted: {tensors}"
        return diagnostics([], [], found, path, kernel, "", 0), HazardCheck(compiled.grid, [], 0.0, stopped)
    tracker = Tracker(ThreadMap(loop_layouts(lowered.layout_module, path)), compiled.writes)
    plan = Plan(budget_s)
    try:
        run = compiled(*tensors, tracker=tracker, plan=plan)
    except NotInterpretable as err:
        seconds = time.perf_counter() - start
        return diagnostics([], [], found, path, kernel, "", err.line), HazardCheck(compiled.grid, [], seconds, str(err))
    except Exception as err:  # a kernel assertion or division by zero ends the check, not the build
        seconds = time.perf_counter() - start
        return [], HazardCheck(compiled.grid, plan.blocks_run(), seconds, f"stopped: {type(err).__name__}: {err}")
    ran = plan.blocks_run()
    summary = HazardCheck(compiled.grid, ran, round(time.perf_counter() - start, 3), run.stopped)
    blocks = ", ".join(str(tuple(b)) for b in ran) or "none"
    grid = dims_text(compiled.grid) or "1"
    ran_words = f"blocks {blocks} of the {grid} grid"
    steering = steering_inputs(func)
    return diagnostics(run.findings, tracker.hazards(), found, path, kernel, ran_words, 0, steering), summary
