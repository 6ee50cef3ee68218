"""Analyse one file with the real compiler: load, build, lower, extract. Runs in the worker.

Each kernel is analysed on its own, so one broken kernel leaves the others' models intact.
"""

from __future__ import annotations

import inspect
import re
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tilescope.core import environment, errors
from tilescope.core.codes import diagnostic
from tilescope.core.compat import spans
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import (
    Access,
    Buffer,
    Diagnostic,
    FileAnalysis,
    HazardCheck,
    KernelModel,
    Layout,
    SharedAccess,
    Span,
)
from tilescope.core.perf import occupancy
from tilescope.core.protocol import CONFIG_ARG
from tilescope.core.static import StaticKernel, analyze_source
from tilescope.core.targets import ASCEND_TARGET, decorator_target, is_ascend, shared_memory_budget
from tilescope.core.worker import (
    ascend,
    autotune,
    compiler_warnings,
    device_profile,
    extract,
    launch_records,
    ptxas,
    record_rebuild,
    roofline,
    shared_access,
    shared_sites,
)
from tilescope.core.worker.loader import build_prim_func, compile_options, jit_options, load_module
from tilescope.core.worker.lowering import Lowered, lower
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
    hazards_s: float = 0.0,
    on_phase: Callable[[str], None] | None = None,
) -> tuple[FileAnalysis, dict[str, KernelRun]]:
    """Load the file once and analyse each instantiation the caller computed (the parent's discovery).

    The caller has already reported syntax errors, a bad target and a file without kernels; what is
    left here is what needs the user's code: loading the module, building and lowering. ``on_phase``
    hears each step as it ends (``loaded`` or ``load-failed``, ``built``, ``lowered``, ``extracted``, ``checked``), so
    the caller can say where an analysis stopped at its deadline, and time each step.
    """
    phase = on_phase or _no_phase
    loaded = _load(source, path)
    phase("loaded" if loaded[0] is not None else "load-failed")
    if loaded[0] is None:
        # Each kernel still appears (not lowered); why is the file's diagnostic.
        kernels = [_empty(i.kernel.name, dict(i.args), i.target or target, []) for i in found]
        return FileAnalysis(path=path, target=target, kernels=kernels, discovered=[], diagnostics=[loaded[1]]), {}
    namespace = loaded[0]

    runs: dict[str, KernelRun] = {}
    static = {} if spans.STAMPED else {k.ref.name: k for k in analyze_source(source, path, target=target).kernels}
    for inst in found:
        if args:
            known = {p.name for p in inst.kernel.params} | {CONFIG_ARG}
            overrides = {k: v for k, v in args.items() if k in known}
            inst = replace(
                inst,
                args={**inst.args, **overrides},
                missing=[m for m in inst.missing if m not in overrides],
                unrecorded={k: why for k, why in inst.unrecorded.items() if k not in overrides},
            )
        kernel_target, kernel_static = inst.target or target, static.get(inst.kernel.name)

        def analyze(ns: dict[str, Any], i: Instantiation, t: str = kernel_target, k: Any = kernel_static) -> KernelRun:
            return _analyze_kernel(ns, i, path, t, with_ptxas, k, hazards_s, phase, source)

        try:
            runs[inst.kernel.name] = autotune.analyze_kernel(namespace, inst, analyze)
        except Exception as err:  # a fault of Tilescope's own: the kernel still appears, with what went wrong
            runs[inst.kernel.name] = KernelRun(
                _empty(inst.kernel.name, {}, kernel_target, [_internal(inst, err)]), None
            )
    analysis = FileAnalysis(
        path=path, target=target, kernels=[r.model for r in runs.values()], discovered=[], diagnostics=[]
    )
    return analysis, runs


def _no_phase(_name: str) -> None:
    """Nobody listens to the steps of this analysis."""


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
            failure = _ascend_dialect(err, path) or errors.load_error(err, path)
    if exited is not None:
        failure = environment.exited(exited, printed[0], path, None, 1)
    _failed[key] = failure
    return None, failure


def _empty(name: str, args: dict[str, Any], target: str, diagnostics: list[Diagnostic]) -> KernelModel:
    return KernelModel.unanalysed(name, args, target, diagnostics)


def _shared_overflow(shared: int, target: str, buffers: list[Buffer], kernel: str, line: int) -> Diagnostic | None:
    budget = shared_memory_budget(target)
    if budget is None or shared <= budget:
        return None
    first = next((b.line for b in buffers if b.scope.startswith("shared") and b.line), line)
    return diagnostic(
        "shared-memory-overflow", Span(line=first), kernel=kernel, bytes=shared, budget=budget, target=target
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
    return diagnostic("not-a-kernel", span, kernel=name, name=name, what=what)


def _build_for_profile(
    namespace: dict[str, Any], inst: Instantiation, target: str, failure: Diagnostic
) -> tuple[Any, device_profile.Profile | None, Diagnostic]:
    """The build again with its device queries answered from a profile; the first failure if that fails too."""
    profile = device_profile.profile(target, inst.device)
    if profile is None:
        return None, None, failure
    try:
        with device_profile.answering(profile):
            return build_prim_func(namespace, inst), profile, failure
    except Exception:
        return None, None, failure


def _profile_note(name: str, profile: device_profile.Profile, span: Span) -> Diagnostic:
    asked = ", ".join(profile.asked) or "the device"
    return diagnostic("device-profile", span, kernel=name, queries=asked, profile=profile.describe())


def _internal(inst: Instantiation, err: Exception) -> Diagnostic:
    return diagnostic(
        "internal-error",
        inst.kernel.span,
        kernel=inst.kernel.name,
        error=f"{type(err).__name__}: {err}",
        detail=traceback.format_exc()[-4000:],
    )


def _unrecorded(inst: Instantiation) -> Diagnostic:
    """The recorded instance had arguments the record could not keep: building with defaults would be
    another kernel, so it is not built."""
    reasons = "; ".join(f"'{k}' was {why}" for k, why in inst.unrecorded.items())
    names = " ".join(f"{k}=..." for k in inst.unrecorded)
    return diagnostic("record-incomplete", inst.kernel.span, kernel=inst.kernel.name, reasons=reasons, names=names)


def _stale_record(inst: Instantiation, err: Exception) -> Diagnostic:
    error = f"{type(err).__name__}: {err}"
    return diagnostic("record-incomplete", inst.kernel.span, form="stale", kernel=inst.kernel.name, error=error)


def _json_value(value: Any) -> Any:
    return value if isinstance(value, int | float | str | bool) or value is None else str(value)


def _analyze_kernel(
    namespace: dict[str, Any],
    inst: Instantiation,
    path: str,
    requested: str,
    with_ptxas: bool,
    static: StaticKernel | None,
    hazards_s: float = 0.0,
    phase: Callable[[str], None] = _no_phase,
    source: str = "",
) -> KernelRun:
    name, line = inst.kernel.name, inst.kernel.span.line
    target = inst.target or requested
    if inst.missing:
        values = {"names": ", ".join(inst.missing), "directive": " ".join(f"{m}=..." for m in inst.missing)}
        if inst.dry_run:
            values["dry_run"] = inst.dry_run
        form = "dry_run" if inst.dry_run else None
        warning = diagnostic("missing-args", inst.kernel.span, form=form, kernel=name, fields=values)
        return KernelRun(_empty(name, dict(inst.args), target, [warning]), None)
    if inst.unrecorded:
        return KernelRun(_empty(name, dict(inst.args), target, [_unrecorded(inst)]), None)
    try:
        inst = replace(inst, args={k: record_rebuild.decode(v, namespace, path) for k, v in inst.args.items()})
    except Exception as err:  # a recorded class or enum that the file no longer has
        return KernelRun(_empty(name, dict(inst.args), target, [_stale_record(inst, err)]), None)
    args = _bound_args(namespace[name], inst)
    exited: SystemExit | None = None
    with compiler_warnings.captured_stderr() as printed:
        profile = None
        try:
            prim_func = build_prim_func(namespace, inst)
        except SystemExit as err:
            prim_func, exited = None, err
        except Exception as err:
            prim_func = None
            failure = (
                _ascend_dialect(err, path, line)
                or _ascend_rejected(err, name, line, source, inst)
                or errors.build_error(err, path, name, line)
            )
            if failure.code == "needs-gpu":
                built_for = inst.target or decorator_target(getattr(namespace[name], "target", None), requested)
                prim_func, profile, failure = _build_for_profile(namespace, inst, built_for, failure)
        if prim_func is not None and not isinstance(prim_func, tirx.PrimFunc):
            prim_func, failure = None, _not_a_kernel(name, prim_func, inst.kernel.span)
        if prim_func is not None:
            phase("built")
            configs, jit_target, out_idx = jit_options(namespace, inst, prim_func)
            if inst.kernel.style == "factory":
                compiled, compile_target = compile_options(namespace, source, path, name)
                configs.update(compiled)
                jit_target = jit_target or compile_target
            target = inst.target or decorator_target(jit_target, requested)
            if jit_target is None and _uses_ascend(namespace, name):
                target = ASCEND_TARGET  # the Ascend dialect's kernels lower for Ascend alone
            start = time.perf_counter()
            lowered = lower(prim_func, target, configs)
            lower_ms = (time.perf_counter() - start) * 1000
            phase("lowered")
    warnings = compiler_warnings.parse(printed[0], path, name)
    if exited is not None:
        failure = environment.exited(exited, printed[0], path, name, line)
    if prim_func is None:
        return KernelRun(_empty(name, args, target, [failure, *warnings]), None)

    if profile is not None:
        warnings.insert(0, _profile_note(name, profile, inst.kernel.span))
    device_mod = lowered.artifact.device_mod if lowered.artifact is not None else None
    if is_ascend(target):
        return _ascend_kernel(prim_func, inst, path, source, static, lowered, configs, out_idx, args, warnings)
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
        failure = errors.lowering_error(lowered.error, lowered.failed_pass, name, line, buffers, accesses)
        if profile is not None:  # built for a device it only assumed: on the user's own GPU it may build
            failure = replace(
                failure,
                severity="warning",
                message=f"{failure.message} (built for {profile.describe()}, which the kernel asked about; "
                "give --target for the GPU it runs on, or record a run there)",
            )
        diagnostics.append(failure)
    shared = extract.shared_bytes(device_mod)
    overflow = _shared_overflow(shared, target, buffers, name, line)
    if overflow is not None:
        diagnostics.append(overflow)
    phase("extracted")
    hazard_check = None
    if hazards_s > 0 and lowered.error is None:
        found, hazard_check = _hazards(lowered, configs, path, name, line, hazards_s)
        diagnostics.extend(found)
        phase("checked")
    code = lowered.artifact.kernel_source if lowered.artifact is not None else None
    resources = None
    if with_ptxas and code and target.startswith("sm_"):
        resources, ptx_diagnostics = ptxas.resource_usage(code, target, name, line)
        diagnostics.extend(ptx_diagnostics)
    layouts = extract.layouts(lowered.layout_module)
    launch = launches[0] if launches else None
    accessed, bank_diagnostics = _shared_accesses(lowered, path, accesses, buffers, layouts, target, name)
    diagnostics.extend(bank_diagnostics)
    threads = launch.threads_after_ws if launch is not None else 0
    registers = resources.registers if resources is not None else None
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
        layouts=layouts,
        pipelines=pipelines,
        warp_specialized=extract.warp_specialized(lowered.layout_module),
        shared_bytes=shared,
        passes=lowered.passes,
        accesses=accesses,
        device_source=code,
        resources=resources,
        diagnostics=diagnostics,
        lower_ms=round(lower_ms, 2),
        hazard_check=hazard_check,
        shared_accesses=accessed,
        occupancy=occupancy.occupancy(target, threads, registers, shared) if target.startswith("sm_") else None,
        roofline=roofline.from_ir(
            shared_sites.module_before_merge(lowered.modules, _names(lowered)),
            buffers,
            accessed,
            _operand_dtype(buffers),
        )
        if target.startswith("sm_")
        else None,
    )
    return KernelRun(model, lowered)


def _hazards(
    lowered: Lowered, configs: dict[str, Any], path: str, name: str, line: int, budget_s: float
) -> tuple[list[Diagnostic], HazardCheck]:
    """The interpreter's hazard check of the code TileLang runs with the kernel's own ``configs``; a failure
    of the check itself never fails the analysis."""
    try:
        from tilescope.core.interpret.hazards.check import check

        return check(lowered, configs, path, name, line, budget_s)
    except Exception as err:  # the interpreter's needs (torch, ml_dtypes) may be missing in this interpreter
        return [], HazardCheck([], [], 0.0, f"not interpreted: {type(err).__name__}: {err}")


def _operand_dtype(buffers: list[Buffer]) -> str:
    """The dtype of the first shared tile (the gemm operands' usually), else of the first parameter."""
    shared = next((b.dtype for b in buffers if b.scope.startswith("shared")), None)
    return shared or next((b.dtype for b in buffers if b.is_param), "float16")


def _names(lowered: Lowered) -> list[str]:
    return [p.name for p in lowered.passes]


def _shared_accesses(
    lowered: Lowered,
    path: str,
    accesses: list[Access],
    buffers: list[Buffer],
    layouts: list[Layout],
    target: str,
    kernel: str,
) -> tuple[list[SharedAccess], list[Diagnostic]]:
    """Bank conflicts of the lowered kernel's shared accesses (CUDA only), and a warning where they cost."""
    if not target.startswith("sm_"):
        return [], []
    module = shared_sites.module_before_merge(lowered.modules, _names(lowered))
    found = shared_access.shared_accesses(module, path, accesses)
    by_name = {b.name: b for b in buffers}
    swizzles = {layout.buffer: layout.swizzle for layout in layouts if layout.kind == "layout"}
    diagnostics = []
    for record, group in found:
        linear = swizzles.get(record.buffer) in (None, "none")
        diagnostic = shared_access.conflict_diagnostic(record, group, by_name.get(record.buffer), linear, kernel)
        if diagnostic is not None:
            diagnostics.append(diagnostic)
    return [record for record, _ in found], diagnostics


def _tilelang_version() -> str:
    import tilelang

    return str(getattr(tilelang, "__version__", "?")).split("+")[0]


def _ascend_has(name: str) -> bool:
    try:
        import tilelang.ascend.language as dialect
    except ImportError:
        return False
    return hasattr(dialect, name)


def _ascend_dialect(err: BaseException, path: str, line: int = 1) -> Diagnostic | None:
    return errors.ascend_dialect(err, path, _ascend_has, _tilelang_version(), line)


def _ascend_rejected(
    err: BaseException,
    name: str,
    line: int,
    source: str,
    inst: Instantiation,
    buffers: list[Buffer] | None = None,
    accesses: list[Access] | None = None,
) -> Diagnostic | None:
    """A semantic check of the Ascend backend, at the line of the statement it names (``T.Parallel loop 'ti'``),
    or of the ``T.copy`` between the two dtypes it names (``T.copy() from dtype 'bfloat16' to dtype 'float32'``)."""
    subjects = errors.semantic_subject(err)
    at = _copy_line(subjects, buffers or [], accesses or []) or _named_line(subjects, source, inst) or line
    return errors.ascend_rejected(err, name, at, _tilelang_version())


def _copy_line(subjects: list[str], buffers: list[Buffer], accesses: list[Access]) -> int | None:
    """The first copy whose source and destination have the two dtypes a casting check names."""
    if len(subjects) < 2:
        return None
    dtypes = {b.name: b.dtype for b in buffers}
    for access in accesses:
        if access.op not in ("copy", "ascend_copy", "dual_copy") or access.line is None:
            continue
        read = {dtypes.get(n) for n in access.reads}
        written = {dtypes.get(n) for n in access.writes}
        if subjects[0] in read and subjects[1] in written:
            return access.line
    return None


def _named_line(names: list[str], source: str, inst: Instantiation) -> int | None:
    """The first line of the kernel's definition that binds one of ``names`` (``for ti in ...``, ``ti = ...``)."""
    lines = source.splitlines()
    start = inst.kernel.span.line
    end = inst.kernel.span.end_line or len(lines)
    for name in names:
        binds = re.compile(rf"\bfor\s+(?:[\w\s,]*\b)?{re.escape(name)}\b|\b{re.escape(name)}\s*=[^=]")
        for number in range(start, min(end, len(lines)) + 1):
            if binds.search(lines[number - 1]):
                return number
    return None


def _uses_ascend(namespace: dict[str, Any], name: str) -> bool:
    """Whether the kernel's module writes TileLang's Ascend dialect (``import tilelang.ascend.language as T``)."""
    obj = namespace.get(name)
    scopes = [namespace, getattr(getattr(obj, "func", None), "__globals__", None) or {}]
    return any(
        isinstance(value, types.ModuleType) and value.__name__.startswith("tilelang.ascend")
        for scope in scopes
        for value in scope.values()
    )


def _ascend_kernel(
    prim_func: Any,
    inst: Instantiation,
    path: str,
    source: str,
    static: StaticKernel | None,
    lowered: Lowered,
    configs: dict[str, Any],
    out_idx: Any,
    args: dict[str, Any],
    warnings: list[Diagnostic],
) -> KernelRun:
    """An Ascend kernel's model: buffers at their levels, the memory plan, the schedule and flags of TileLang's
    Ascend pipeline, and the AscendC it generated."""
    name, line = inst.kernel.name, inst.kernel.span.line
    buffers, accesses, _, pipelines = spans.with_static_lines(
        static,
        extract.buffers(prim_func, path),
        extract.accesses(prim_func, path),
        None,
        extract.pipelines(prim_func, path),
    )
    diagnostics: list[Diagnostic] = list(warnings)
    if lowered.error is not None:
        failure = _ascend_rejected(lowered.error, name, line, source, inst, buffers, accesses) or errors.lowering_error(
            lowered.error, lowered.failed_pass, name, line, buffers, accesses
        )
        diagnostics.append(failure)
    device_mod = lowered.artifact.device_mod if lowered.artifact is not None else None
    auto = bool(configs.get("tl.enable_auto_schedule", True))
    plan, found = ascend.model(
        prim_func, lowered.modules, _names(lowered), device_mod, buffers, path, source, name, auto
    )
    diagnostics.extend(found)
    model = KernelModel(
        kernel=name,
        args=args,
        target=ASCEND_TARGET,
        buffers=buffers,
        launch=None,
        layouts=_ascend_layouts(lowered),
        pipelines=pipelines,
        warp_specialized=False,
        shared_bytes=sum((b.bytes or 0) * b.slots for b in plan.buffers if b.level == "UB"),
        passes=lowered.passes,
        accesses=accesses,
        device_source=lowered.artifact.kernel_source if lowered.artifact is not None else None,
        diagnostics=diagnostics,
        lower_ms=round(lowered.total_ms, 2),
        arg_sources=dict(inst.sources),
        pass_configs={k: _json_value(v) for k, v in configs.items()},
        out_idx=[out_idx] if isinstance(out_idx, int) else (list(out_idx) if out_idx is not None else None),
        ascend=plan,
    )
    return KernelRun(model, lowered)


def _ascend_layouts(lowered: Lowered) -> list[Layout]:
    """The fractal (nZ) layouts ``tl.AscendLayoutInference`` chose; none when they cannot be read."""
    try:
        return ascend.fractal_layouts(lowered.layout_module, extract.layouts(lowered.layout_module))
    except Exception:  # a layout object of a release this reader does not know: the rest of the model stands
        return []
