"""Analyse one file with the real compiler: load, build, lower, extract. Runs in the worker.

Each kernel is analysed on its own, so one broken kernel leaves the others' models intact.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, replace
from typing import Any

from tilescope.core import autotune, compiler_warnings, environment, errors, extract, launch_records, ptxas
from tilescope.core.compat import spans
from tilescope.core.discovery import Instantiation
from tilescope.core.loader import build_prim_func, jit_options, load_module
from tilescope.core.lowering import Lowered, lower
from tilescope.core.model import Buffer, Diagnostic, FileAnalysis, KernelModel, Span
from tilescope.core.static import StaticKernel, analyze_source
from tilescope.core.targets import decorator_target, shared_memory_budget
from tvm import tirx


@dataclass
class KernelRun:
    """What the worker keeps of one kernel's lowering, for IR printed on demand."""

    model: KernelModel
    lowered: Lowered | None


def analyze_file(
    path: str,
    source: str,
    found: list[Instantiation],
    *,
    target: str = "sm_90",
    args: dict[str, Any] | None = None,
    with_ptxas: bool = False,
) -> tuple[FileAnalysis, dict[str, KernelRun]]:
    """Load the file once and analyse each instantiation the caller computed (the parent's discovery).

    The caller has already reported syntax errors, a bad target and a file without kernels; what is
    left here is what needs the user's code: loading the module, building and lowering.
    """
    loaded = _load(source, path)
    if loaded[0] is None:
        return FileAnalysis(path=path, target=target, kernels=[], discovered=[], diagnostics=[loaded[1]]), {}
    namespace = loaded[0]

    runs: dict[str, KernelRun] = {}
    static = {} if spans.STAMPED else {k.ref.name: k for k in analyze_source(source, path, target=target).kernels}
    for inst in found:
        if args:
            known = {p.name for p in inst.kernel.params} | {autotune.CONFIG_ARG}
            overrides = {k: v for k, v in args.items() if k in known}
            inst = replace(
                inst,
                args={**inst.args, **overrides},
                missing=[m for m in inst.missing if m not in overrides],
            )
        kernel_target, kernel_static = inst.target or target, static.get(inst.kernel.name)

        def analyze(ns: dict[str, Any], i: Instantiation, t: str = kernel_target, k: Any = kernel_static) -> KernelRun:
            return _analyze_kernel(ns, i, path, t, with_ptxas, k)

        runs[inst.kernel.name] = autotune.analyze_kernel(namespace, inst, analyze)
    analysis = FileAnalysis(
        path=path, target=target, kernels=[r.model for r in runs.values()], discovered=[], diagnostics=[]
    )
    return analysis, runs


_failed: dict[tuple[str, str], Diagnostic] = {}


def _load(source: str, path: str) -> tuple[dict[str, Any], None] | tuple[None, Diagnostic]:
    """The file's namespace, or why it could not load; a ``sys.exit()`` at import ends the load, not the worker.

    Kernels of a file arrive one request each; like a successful load (``loader``), a failed one
    is kept for the last file, so the file's other kernels report it without executing it again.
    """
    key = (path, source)
    if key in _failed:
        return None, _failed[key]
    _failed.clear()
    exited: SystemExit | None = None
    with compiler_warnings.captured_stderr() as printed:
        try:
            return load_module(source, path), None
        except SystemExit as err:  # a probe such as ``if not torch.cuda.is_available(): sys.exit(1)``
            exited = err
        except Exception as err:
            failure = errors.load_error(err, path)
    if exited is not None:
        failure = environment.exited(exited, printed[0], path, None, 1)
    _failed[key] = failure
    return None, failure


def _empty(name: str, args: dict[str, Any], target: str, diagnostics: list[Diagnostic]) -> KernelModel:
    return KernelModel(
        kernel=name,
        args=args,
        target=target,
        buffers=[],
        launch=None,
        layouts=[],
        pipelines=[],
        warp_specialized=False,
        shared_bytes=0,
        passes=[],
        diagnostics=diagnostics,
    )


def _shared_overflow(shared: int, target: str, buffers: list[Buffer], kernel: str, line: int) -> Diagnostic | None:
    budget = shared_memory_budget(target)
    if budget is None or shared <= budget:
        return None
    first = next((b.line for b in buffers if b.scope.startswith("shared") and b.line), line)
    return Diagnostic(
        severity="error",
        message=f"Kernel '{kernel}' needs {shared} bytes of shared memory per block, over the {budget} bytes "
        f"{target} allows (pipeline stages multiply every shared tile)",
        span=Span(line=first),
        code="shared-memory-overflow",
        kernel=kernel,
    )


def _bound_args(obj: Any, inst: Instantiation) -> dict[str, Any]:
    """Every argument the kernel was built with, defaults included, as JSON-friendly values."""
    function = getattr(obj, "signature", None) or obj
    try:
        signature = function if isinstance(function, inspect.Signature) else inspect.signature(function)
    except (TypeError, ValueError):
        return dict(inst.args)
    names = list(signature.parameters)
    values = {k: v for k, v in inst.args.items() if k not in names}  # T.const names come first
    for param in signature.parameters.values():
        if param.name in inst.args:
            values[param.name] = inst.args[param.name]
        elif param.default is not inspect.Parameter.empty:
            values[param.name] = param.default
    return {k: _json_value(v) for k, v in values.items()}


def _not_a_kernel(name: str, built: Any, span: Span) -> Diagnostic:
    what = "nothing" if built is None else f"a {type(built).__name__}"
    return Diagnostic(
        severity="information",
        message=f"'{name}' returned {what}, not a T.prim_func, so it is not analysed as a kernel "
        "(a factory of factories, or a helper): analyse the kernel it makes instead",
        span=span,
        code="not-a-kernel",
        kernel=name,
    )


def _json_value(value: Any) -> Any:
    return value if isinstance(value, int | float | str | bool) or value is None else str(value)


def _analyze_kernel(
    namespace: dict[str, Any],
    inst: Instantiation,
    path: str,
    requested: str,
    with_ptxas: bool,
    static: StaticKernel | None,
) -> KernelRun:
    name, line = inst.kernel.name, inst.kernel.span.line
    target = inst.target or requested
    if inst.missing:
        missing = ", ".join(inst.missing)
        diagnostic = Diagnostic(
            severity="warning",
            message=f"Kernel '{name}' needs values for {missing}: add '# tilescope: "
            + " ".join(f"{m}=..." for m in inst.missing)
            + "' above the def, or call it in this file",
            span=inst.kernel.span,
            code="missing-args",
            kernel=name,
        )
        return KernelRun(_empty(name, dict(inst.args), target, [diagnostic]), None)
    args = _bound_args(namespace[name], inst)
    exited: SystemExit | None = None
    with compiler_warnings.captured_stderr() as printed:
        try:
            prim_func = build_prim_func(namespace, inst)
        except SystemExit as err:
            prim_func, exited = None, err
        except Exception as err:
            prim_func, failure = None, errors.build_error(err, path, name, line)
        if prim_func is not None and not isinstance(prim_func, tirx.PrimFunc):
            prim_func, failure = None, _not_a_kernel(name, prim_func, inst.kernel.span)
        if prim_func is not None:
            configs, jit_target, out_idx = jit_options(namespace, inst, prim_func)
            target = inst.target or decorator_target(jit_target, requested)
            start = time.perf_counter()
            lowered = lower(prim_func, target, configs)
            lower_ms = (time.perf_counter() - start) * 1000
    warnings = compiler_warnings.parse(printed[0], path, name)
    if exited is not None:
        failure = environment.exited(exited, printed[0], path, name, line)
    if prim_func is None:
        return KernelRun(_empty(name, args, target, [failure, *warnings]), None)

    device_mod = lowered.artifact.device_mod if lowered.artifact is not None else None
    launches = launch_records.launches(prim_func, device_mod, lowered.layout_module, path)
    buffers, accesses, first, pipelines = spans.with_static_lines(
        static,
        extract.buffers(prim_func, path),
        extract.accesses(prim_func, path),
        launches[0] if launches else None,
        extract.pipelines(prim_func, path),
    )
    launches = [first, *launches[1:]] if first is not None else launches
    diagnostics: list[Diagnostic] = list(warnings)
    if lowered.error is not None:
        diagnostics.append(errors.lowering_error(lowered.error, lowered.failed_pass, name, line, buffers, accesses))
    shared = extract.shared_bytes(device_mod)
    overflow = _shared_overflow(shared, target, buffers, name, line)
    if overflow is not None:
        diagnostics.append(overflow)
    source = lowered.artifact.kernel_source if lowered.artifact is not None else None
    resources = None
    if with_ptxas and source and target.startswith("sm_"):
        resources, ptx_diagnostics = ptxas.resource_usage(source, target, name, line)
        diagnostics.extend(ptx_diagnostics)
    model = KernelModel(
        kernel=name,
        args=args,
        target=target,
        buffers=buffers,
        launch=launches[0] if launches else None,
        launches=launches,
        arg_sources=dict(inst.sources),
        pass_configs={k: _json_value(v) for k, v in configs.items()},
        out_idx=[out_idx] if isinstance(out_idx, int) else (list(out_idx) if out_idx is not None else None),
        layouts=extract.layouts(lowered.layout_module),
        pipelines=pipelines,
        warp_specialized=extract.warp_specialized(lowered.layout_module),
        shared_bytes=shared,
        passes=lowered.passes,
        accesses=accesses,
        device_source=source,
        resources=resources,
        diagnostics=diagnostics,
        lower_ms=round(lower_ms, 2),
    )
    return KernelRun(model, lowered)
