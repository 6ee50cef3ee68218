"""Build one kernel at the file's sizes and run it on the GPU: timing in the worker, one launch under ncu.

The kernel is built as the puzzles' grader builds a learner's (``tilelang.compile(prim_func,
target="cuda")`` with the kernel's own pass configs), called with every parameter as a tensor of its
shape and dtype (random floats, small integers) except the outputs a ``T.empty`` or ``out_idx`` has
it allocate itself, and timed by :mod:`tilescope.core.worker.gpu_timing`. Run as
``python -m tilescope.core.worker.gpu_run BATCH.json`` it launches each kernel of a batch twice and exits: the
process Nsight Compute profiles (the second, warm launch of each).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Timing, from_json
from tilescope.core.protocol import PROFILE_LAUNCHES
from tilescope.core.worker import autotune

_INT_HIGH = 2


def instantiate(inst: Instantiation, args: dict[str, Any] | None) -> Instantiation:
    """``inst`` with the caller's ``--arg`` values for the parameters it has."""
    if not args:
        return inst
    known = {p.name for p in inst.kernel.params}
    overrides = {k: v for k, v in args.items() if k in known}
    return replace(inst, args={**inst.args, **overrides}, missing=[m for m in inst.missing if m not in overrides])


def build(request: Mapping[str, Any]) -> tuple[Any, list[Any]]:
    """The compiled kernel and its argument tensors, on the GPU."""
    import tilelang
    import torch
    from tilescope.core.worker.loader import load_module
    from tilescope.core.worker.prim_func import build_prim_func, jit_options

    inst = instantiate(from_json(Instantiation, request["instantiation"]), request.get("args"))
    if inst.missing:
        raise ValueError(f"kernel '{inst.kernel.name}' needs values for {', '.join(inst.missing)}")
    namespace = load_module(request["source"], request["path"])
    tuned = namespace.get(inst.kernel.name)
    # The config the caller chose (its values in ``args``), never a search.
    if tuned is not None and autotune.is_tuned(tuned):
        namespace = {**namespace, inst.kernel.name: tuned.jit_impl}
    prim_func = build_prim_func(namespace, inst)
    configs, _target, _out_idx = jit_options(namespace, inst, prim_func)
    kernel = tilelang.compile(prim_func, target="cuda", pass_configs=configs or None)
    tensors = []
    generator = torch.Generator(device="cuda").manual_seed(0)
    for param in prim_func.params:
        buf = prim_func.buffer_map.get(param)
        if buf is None:
            raise ValueError(f"parameter {param} is not a tensor: profile needs every parameter as a tensor")
        shape = [int(d) for d in buf.shape]
        dtype = getattr(torch, str(buf.dtype)) if hasattr(torch, str(buf.dtype)) else torch.float16
        if dtype.is_floating_point:
            tensors.append(torch.randn(shape, device="cuda", generator=generator).to(dtype))
        else:
            tensors.append(torch.randint(0, _INT_HIGH, shape, device="cuda", generator=generator).to(dtype))
    return kernel, _inputs(kernel, tensors)


def _inputs(kernel: Any, tensors: list[Any]) -> list[Any]:
    """The tensors to pass: without the outputs the compiled kernel allocates itself (its ``out_idx``)."""
    out_idx = getattr(kernel, "out_idx", None)
    if out_idx is None:
        return tensors
    outputs = {i % len(tensors) for i in ([out_idx] if isinstance(out_idx, int) else out_idx)}
    return [t for i, t in enumerate(tensors) if i not in outputs]


def profile(request: Mapping[str, Any]) -> Timing:
    """Time the kernel: median of ``runs`` launches after ``warmup``, each after an L2 flush."""
    import torch
    from tilescope.core.worker.gpu_timing import time_cuda_runs

    kernel, tensors = build(request)
    warmup, runs = int(request.get("warmup", 3)), int(request.get("runs", 20))
    times = time_cuda_runs(lambda: kernel(*tensors), warmup=warmup, runs=runs)
    props = torch.cuda.get_device_properties(0)
    return Timing(
        gpu=torch.cuda.get_device_name(0),
        arch=f"sm_{props.major}{props.minor}",
        time_us=round(statistics.median(times), 3),
        times_us=[round(t, 3) for t in times],
        warmup=warmup,
    )


def main(argv: list[str]) -> int:
    """Launch each kernel of the batch in ``argv[0]`` twice (Nsight Compute measures the second).

    The batch is ``{"requests": [...], "manifest": PATH}``; the manifest lists, in order, the
    requests whose kernels launched, so the launches ncu saw can be matched to them.
    """
    import torch

    autotune.guard()
    with open(argv[0]) as handle:
        batch = json.load(handle)
    launched = []
    for index, request in enumerate(batch["requests"]):
        try:
            kernel, tensors = build(request)
            for _ in range(PROFILE_LAUNCHES):
                kernel(*tensors)
            torch.cuda.synchronize()
        except Exception as err:  # one kernel that cannot run leaves the others measured
            print(f"request {index}: {type(err).__name__}: {err}", file=sys.stderr)
            continue
        launched.append(index)
        del kernel, tensors
    with open(batch["manifest"], "w") as handle:
        json.dump(launched, handle)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
