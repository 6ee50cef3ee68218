"""A CUDA kernel's model, read from its lowering in the worker: buffers, launches, layouts, pipelines,
passes, the generated code and what ptxas says of it, shared-memory bank conflicts, occupancy, the
roofline bound, and the interpreter's hazard check.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tilescope.core import errors
from tilescope.core.codes import diagnostic
from tilescope.core.compat import spans
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import (
    Access,
    Buffer,
    Diagnostic,
    HazardCheck,
    KernelModel,
    Launch,
    Layout,
    Occupancy,
    Resources,
    Roofline,
    SharedAccess,
    Span,
)
from tilescope.core.perf import occupancy
from tilescope.core.static import StaticKernel
from tilescope.core.targets import shared_memory_budget
from tilescope.core.worker import extract, launch_records, ptxas, roofline, shared_access, shared_sites
from tilescope.core.worker.kernel_build import Built, pass_names
from tilescope.core.worker.lowering import Lowered


@dataclass(frozen=True)
class HazardStep:
    """A model's hazard check, not yet run: the interpreter is the slowest step of most analyses, so the
    rest of the model can be sent first (an editor shows the lowering's findings while it runs)."""

    run: Callable[[], tuple[list[Diagnostic], HazardCheck]]
    """Runs the check once; asked again, gives the same findings."""
    tail: int
    """How many of the model's diagnostics come after the hazard check's (ptxas's, bank conflicts')."""

    def applied(self, model: KernelModel) -> KernelModel:
        """``model`` with the check run, its findings where the whole model has them."""
        found, check = self.run()
        at = len(model.diagnostics) - self.tail
        return replace(
            model, diagnostics=[*model.diagnostics[:at], *found, *model.diagnostics[at:]], hazard_check=check
        )


def model(
    built: Built,
    inst: Instantiation,
    path: str,
    static: StaticKernel | None,
    with_ptxas: bool,
    hazards_s: float,
    phase: Any,
) -> tuple[KernelModel, HazardStep | None]:
    """The model of a kernel built and lowered for a CUDA (or another non-Ascend) target, and its hazard
    check still to run when it has one (``HazardStep.applied``); ``phase`` hears ``extracted``, ``modelled`` (ptxas,
    bank conflicts, occupancy and roofline done) and, once the hazard check has run, ``checked``."""
    name, line, target, lowered = inst.kernel.name, inst.kernel.span.line, built.target, built.lowered
    assert lowered is not None
    device_mod = lowered.artifact.device_mod if lowered.artifact is not None else None
    launches = launch_records.launches(built.prim_func, device_mod, lowered.layout_module, path)
    buffers, accesses, first, pipelines = spans.with_static_lines(
        static,
        extract.buffers(built.prim_func, path),
        extract.accesses(built.prim_func, path),
        launches[0] if launches else None,
        extract.pipelines(built.prim_func, path),
    )
    launches = [first, *launches[1:]] if first is not None else launches
    diagnostics: list[Diagnostic] = list(built.warnings)
    if lowered.error is not None:
        diagnostics.append(_lowering_failure(lowered, built, name, line, buffers, accesses))
    shared = extract.shared_bytes(device_mod)
    overflow = _shared_overflow(shared, target, buffers, name, line)
    if overflow is not None:
        diagnostics.append(overflow)
    phase("extracted")
    before_tail = len(diagnostics)
    code = lowered.artifact.kernel_source if lowered.artifact is not None else None
    resources = None
    if with_ptxas and code and target.startswith("sm_"):
        resources, ptx_diagnostics = ptxas.resource_usage(code, target, name, line)
        diagnostics.extend(ptx_diagnostics)
    layouts = extract.layouts(lowered.layout_module)
    accessed, bank_diagnostics = _shared_accesses(lowered, path, accesses, buffers, layouts, target, name)
    diagnostics.extend(bank_diagnostics)
    phase("modelled")
    step = None
    if hazards_s > 0 and lowered.error is None:

        def check(lowered: Lowered = lowered) -> tuple[list[Diagnostic], HazardCheck]:
            found = _hazards(lowered, built.configs, path, name, line, hazards_s)
            phase("checked")
            return found

        step = HazardStep(functools.cache(check), len(diagnostics) - before_tail)
    whole = KernelModel(
        kernel=name,
        args=built.args,
        target=target,
        buffers=buffers,
        launch=launches[0] if launches else None,
        launches=launches,
        arg_sources=dict(inst.sources),
        pass_configs=built.pass_configs(),
        out_idx=built.out_indices(),
        layouts=layouts,
        pipelines=pipelines,
        warp_specialized=extract.warp_specialized(lowered.layout_module),
        shared_bytes=shared,
        passes=lowered.passes,
        accesses=accesses,
        device_source=code,
        resources=resources,
        diagnostics=diagnostics,
        lower_ms=round(built.lower_ms, 2),
        shared_accesses=accessed,
        occupancy=_occupancy(target, launches, resources, shared),
        roofline=_roofline(target, lowered, buffers, accessed),
    )
    return whole, step


def _lowering_failure(
    lowered: Lowered, built: Built, name: str, line: int, buffers: list[Buffer], accesses: list[Access]
) -> Diagnostic:
    assert lowered.error is not None
    failure = errors.lowering_error(lowered.error, lowered.failed_pass, name, line, buffers, accesses)
    if built.profile is None:
        return failure
    # Built for a device it only assumed: on the user's own GPU it may build.
    return replace(
        failure,
        severity="warning",
        message=f"{failure.message} (built for {built.profile.describe()}, which the kernel asked about; "
        "give --target for the GPU it runs on, or record a run there)",
    )


def _shared_overflow(shared: int, target: str, buffers: list[Buffer], kernel: str, line: int) -> Diagnostic | None:
    budget = shared_memory_budget(target)
    if budget is None or shared <= budget:
        return None
    first = next((b.line for b in buffers if b.scope.startswith("shared") and b.line), line)
    return diagnostic(
        "shared-memory-overflow", Span(line=first), kernel=kernel, bytes=shared, budget=budget, target=target
    )


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


def _occupancy(target: str, launches: list[Launch], resources: Resources | None, shared: int) -> Occupancy | None:
    if not target.startswith("sm_"):
        return None
    threads = launches[0].threads_after_ws if launches else 0
    registers = resources.registers if resources is not None else None
    return occupancy.occupancy(target, threads, registers, shared)


def _roofline(target: str, lowered: Lowered, buffers: list[Buffer], accessed: list[SharedAccess]) -> Roofline | None:
    if not target.startswith("sm_"):
        return None
    module = shared_sites.module_before_merge(lowered.modules, pass_names(lowered))
    return roofline.from_ir(module, buffers, accessed, _operand_dtype(buffers))


def _operand_dtype(buffers: list[Buffer]) -> str:
    """The dtype of the first shared tile (the gemm operands' usually), else of the first parameter."""
    shared = next((b.dtype for b in buffers if b.scope.startswith("shared")), None)
    return shared or next((b.dtype for b in buffers if b.is_param), "float16")


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
    module = shared_sites.module_before_merge(lowered.modules, pass_names(lowered))
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
