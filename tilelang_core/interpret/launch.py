"""``tilescope run`` in the worker: build a file's kernel, make its inputs, interpret it, report.

Inputs come from the signature (seeded random values in each tensor's dtype) or from a user
function; outputs are the parameters ``tilelang.jit``'s ``out_idx`` names, else those the kernel
writes. Statistics, findings and the optional comparison with a torch reference make a
``RunReport``. User code runs here only, in the supervised worker.
"""

from __future__ import annotations

import importlib
import math
import os
import sys
import time
from dataclasses import replace
from typing import Any

import torch
from tilescope.core import errors
from tilescope.core.compiler.discovery import instantiations
from tilescope.core.interpret.kernel import Kernel, compile_kernel
from tilescope.core.interpret.memory import NotInterpretable
from tilescope.core.interpret.tuned import Chooser, build
from tilescope.core.model import Comparison, OutputStats, RunReport
from tilescope.core.protocol import CONFIG_ARG
from tilescope.core.worker.loader import load_module
from tilescope.core.worker.prim_func import jit_options

TORCH_DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
    "float8_e4m3fn": torch.float8_e4m3fn,
    "float8_e5m2": torch.float8_e5m2,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_TOLERANCE = {torch.float16: (1e-2, 1e-2), torch.bfloat16: (2e-2, 2e-2), torch.float32: (1e-4, 1e-4)}


def _user_function(spec: str, directory: str) -> Any:
    module_name, sep, name = spec.partition(":")
    if not sep:
        raise ValueError(f"expected module:function, got {spec!r}")
    if directory not in sys.path:
        sys.path.insert(0, directory)
    return getattr(importlib.import_module(module_name), name)


def random_tensor(shape: list[int], dtype: str, gen: torch.Generator) -> torch.Tensor:
    """Seeded inputs: normal floats; integers in [0, 16) (bytes in [0, 256), for packed weights)."""
    tdtype = TORCH_DTYPES.get(dtype)
    if tdtype is None:
        raise NotInterpretable(f"not interpretable: no input can be made for dtype {dtype}")
    if tdtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(tdtype)
    if tdtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool()
    high = 256 if tdtype == torch.uint8 else 16
    return torch.randint(0, high, shape, generator=gen).to(tdtype)


def _empty(shape: list[int], dtype: str) -> torch.Tensor:
    tdtype = TORCH_DTYPES[dtype]
    out = torch.empty(shape, dtype=tdtype)
    return out.fill_(float("nan")) if tdtype.is_floating_point else out.zero_()


def _stats(name: str, t: torch.Tensor, unwritten: int) -> OutputStats:
    values = t.double() if t.dtype != torch.bool else t.to(torch.float64)
    finite = torch.isfinite(values)
    count = int(finite.sum())
    chosen = values[finite]
    return OutputStats(
        name=name,
        shape=list(t.shape),
        dtype=str(t.dtype).removeprefix("torch."),
        finite=count,
        nan=int(torch.isnan(values).sum()),
        inf=int(torch.isinf(values).sum()),
        minimum=float(chosen.min()) if count else None,
        maximum=float(chosen.max()) if count else None,
        mean=float(chosen.mean()) if count else None,
        unwritten=unwritten,
    )


def _compare(name: str, got: torch.Tensor, expected: torch.Tensor) -> Comparison:
    atol, rtol = _TOLERANCE.get(got.dtype, (1e-6, 1e-6) if got.dtype == torch.float64 else (0.0, 0.0))
    g, e = got.double(), expected.to(torch.float64).reshape(got.shape)
    error = (g - e).abs()
    wrong = ~((error <= atol + rtol * e.abs()) | (torch.isnan(g) & torch.isnan(e)) | (g == e))
    first = [int(i) for i in torch.nonzero(wrong)[0]] if wrong.any() else None
    finite = error[torch.isfinite(error)]
    worst = float(finite.max()) if finite.numel() else (math.inf if error.numel() else 0.0)
    return Comparison(name, int(wrong.sum()), int(wrong.numel()), worst, first, atol, rtol)


def _outputs(namespace: dict[str, Any], name: str, prim_func: Any, kernel: Kernel) -> set[str]:
    params = [p[0] for p in kernel.buffer_params()]
    attrs = prim_func.attrs
    out_idx = list(attrs["tilelang_out_idx"]) if attrs is not None and "tilelang_out_idx" in attrs else None
    if out_idx is None:
        out_idx = getattr(namespace.get(name), "out_idx", None)
    if out_idx is None:
        return {p for p in params if p in kernel.writes}
    indices = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    return {params[int(i)] for i in indices}


def run_file(
    path: str,
    source: str,
    *,
    kernel: str | None = None,
    args: dict[str, Any] | None = None,
    inputs: str | None = None,
    compare: str | None = None,
    seed: int = 0,
    choose: Chooser | None = None,
) -> RunReport:
    """Interpret one kernel of a file once; every failure is in the report, with its line. For an
    ``@autotune`` kernel ``choose`` gives the config the compiler tier analyses (default: the first)."""
    choose = choose or _first
    found = instantiations(source, path)
    if kernel is not None:
        found = [i for i in found if i.kernel.name == kernel]
    if not found:
        which = f"no kernel named '{kernel}'" if kernel else "no TileLang kernel"
        return RunReport(kernel or "", args or {}, [], [], 0.0, error=f"{which} in {path}", line=1)
    inst = found[0]
    if args:
        known = {p.name for p in inst.kernel.params} | {CONFIG_ARG}
        given = {k: v for k, v in args.items() if k in known}
        inst = replace(inst, args={**inst.args, **given}, missing=[m for m in inst.missing if m not in given])
    name, line = inst.kernel.name, inst.kernel.span.line
    base = RunReport(name, dict(inst.args), [], [], 0.0)
    if inst.missing:
        return replace(base, error=f"kernel '{name}' needs values for {', '.join(inst.missing)} (--arg K=V)", line=line)
    try:
        namespace = load_module(source, path)
        built = build(namespace, inst, choose)
        if isinstance(built, str):
            return replace(base, error=built, line=line)
        namespace, inst, prim_func = built.namespace, built.inst, built.prim_func
        base = replace(base, args=dict(inst.args), config=built.config)
    except Exception as err:
        d = errors.build_error(err, path, name, line)
        return replace(base, error=d.message, line=d.span.line)
    try:
        configs, _, _ = jit_options(namespace, inst, prim_func)
        compiled, threads = _compiled(prim_func, path, name, configs)
    except NotInterpretable as err:
        return replace(base, error=str(err), line=err.line or line)
    except Exception as err:
        return replace(base, error=f"TileLang's front end failed: {errors.first_message(err)}", line=line)
    report = replace(base, grid=compiled.grid, threads=compiled.threads)
    if compare is None and callable(namespace.get("ref_program")):
        report = replace(report, reference="ref_program")
    return _launch(report, namespace, prim_func, compiled, path, inputs, compare, seed, threads)


def _first(_inst: Any) -> None:
    """No compiler tier to ask: the call's own values, else the search space's first config."""


def _compiled(prim_func: Any, path: str, name: str, configs: dict[str, Any]) -> tuple[Kernel, Any]:
    """The interpreter's kernel and the thread map of its parallel loops, from one real lowering
    with the pass configuration ``tilelang.compile`` would apply (``configs``: the decorator's over the
    PrimFunc's; bounds guards off changes what the kernel does) — the front-end module the interpreter
    runs, and the loop layouts of ``tl.LayoutInference``; where the whole lowering fails, the front end
    alone, without thread names."""
    from tilescope.core.interpret.hazards.front import front_end_module, tile_lines
    from tilescope.core.interpret.hazards.threads import ThreadMap, loop_layouts
    from tilescope.core.worker.lowering import lower

    lowered = lower(prim_func, "sm_90", configs)
    func = front_end_module(lowered)
    if func is None:
        return compile_kernel(prim_func, path), ThreadMap({})
    return Kernel(func, path, configs, tile_lines(path, name)), ThreadMap(loop_layouts(lowered.layout_module, path))


def _launch(
    report: RunReport,
    namespace: dict[str, Any],
    prim_func: Any,
    compiled: Kernel,
    path: str,
    inputs: str | None,
    compare: str | None,
    seed: int,
    threads: Any = None,
) -> RunReport:
    from tilescope.core.interpret.hazards.tracker import Tracker

    params = compiled.buffer_params()
    directory = os.path.dirname(os.path.abspath(path))
    shapes = [[int(d) for d in shape] for _, shape, _ in params]
    try:
        if inputs:
            given = list(_user_function(inputs, directory)(**report.args))
            outputs = {n for n, _, _ in params[len(given) :]} or _outputs(namespace, report.kernel, prim_func, compiled)
        else:
            outputs = _outputs(namespace, report.kernel, prim_func, compiled)
            gen = torch.Generator().manual_seed(seed)
            given = [random_tensor(s, d, gen) for (n, _, d), s in zip(params, shapes, strict=True) if n not in outputs]
    except Exception as err:
        return replace(report, error=f"making the inputs failed: {type(err).__name__}: {err}")
    feed = iter(given)
    tensors = [
        (_empty(s, d) if n in outputs and len(given) < len(params) else next(feed))
        for (n, _, d), s in zip(params, shapes, strict=True)
    ]
    originals = [t.clone() for t in tensors]
    start = time.perf_counter()
    tracker = Tracker(threads, compiled.writes, keep_writers=True) if threads is not None else None
    try:
        run = compiled(*tensors, outputs=outputs, tracker=tracker)
    except NotInterpretable as err:
        return replace(report, error=str(err), line=err.line or None)
    except Exception as err:
        return replace(report, error=f"{type(err).__name__}: {err}")
    seconds = time.perf_counter() - start
    stats = [
        _stats(n, t, run.unwritten.get(n, 0)) for (n, _, _), t in zip(params, tensors, strict=True) if n in outputs
    ]
    hazards = tracker.hazards() if tracker is not None else []
    report = replace(report, seconds=seconds, outputs=stats, findings=run.findings, hazards=hazards)
    if not compare and report.reference is None:
        return report
    reference = _user_function(compare, directory) if compare else namespace["ref_program"]
    try:
        expected = reference(*[o for (n, _, _), o in zip(params, originals, strict=True) if n not in outputs])
    except Exception as err:
        return replace(report, error=f"the reference failed: {type(err).__name__}: {err}")
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    got = [(n, t) for (n, _, _), t in zip(params, tensors, strict=True) if n in outputs]
    comparisons = [_compare(n, t, e) for (n, t), e in zip(got, expected, strict=False)]
    culprits = []
    for c, (_, t), e in zip(comparisons, got, expected, strict=False):
        if c.first_wrong is not None:
            culprits.append(_culprit(c, t, e, tracker))
    return replace(report, comparisons=comparisons, reference=compare or "ref_program", culprits=culprits)


def _culprit(c: Comparison, got: torch.Tensor, expected: Any, tracker: Any) -> str:
    """``C[3, 5] is 1.25, expected 3.5: written by thread 7 (i=3, j=5) of block (0, 1) at line 30``."""
    index = tuple(c.first_wrong or [])
    value = got[index].item()
    want = expected.reshape(got.shape)[index].item()
    where = ", ".join(str(i) for i in index)
    writer = tracker.writer_of(c.name, list(index)) if tracker is not None else None
    who = f": written by {writer}" if writer else ": nothing wrote it" if tracker is not None else ""
    return f"{c.name}[{where}] is {value:.6g}, expected {want:.6g}{who}"
