"""An Ascend kernel's model, read from its lowering in the worker: buffers at their levels, the memory
plan, the schedule and flags of TileLang's Ascend pipeline (``worker.ascend``), the fractal layouts,
and the AscendC it generated.
"""

from __future__ import annotations

from tilescope.core import errors
from tilescope.core.compat import spans
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Diagnostic, KernelModel, Layout
from tilescope.core.static import StaticKernel
from tilescope.core.targets import ASCEND_TARGET
from tilescope.core.worker import ascend, ascend_dialect, extract
from tilescope.core.worker.kernel_build import Built, pass_names
from tilescope.core.worker.lowering import Lowered


def model(built: Built, inst: Instantiation, path: str, source: str, static: StaticKernel | None) -> KernelModel:
    """An Ascend kernel's model: buffers at their levels, the memory plan, the schedule and flags of TileLang's
    Ascend pipeline, and the AscendC it generated."""
    name, line, lowered = inst.kernel.name, inst.kernel.span.line, built.lowered
    assert lowered is not None
    buffers, accesses, _, pipelines = spans.with_static_lines(
        static,
        extract.buffers(built.prim_func, path),
        extract.accesses(built.prim_func, path),
        None,
        extract.pipelines(built.prim_func, path),
    )
    diagnostics: list[Diagnostic] = list(built.warnings)
    if lowered.error is not None:
        failure = ascend_dialect.rejected(
            lowered.error, name, line, source, inst, buffers, accesses
        ) or errors.lowering_error(lowered.error, lowered.failed_pass, name, line, buffers, accesses)
        diagnostics.append(failure)
    device_mod = lowered.artifact.device_mod if lowered.artifact is not None else None
    auto = bool(built.configs.get("tl.enable_auto_schedule", True))
    plan, found = ascend.model(
        built.prim_func, lowered.modules, pass_names(lowered), device_mod, buffers, path, source, name, auto
    )
    diagnostics.extend(found)
    return KernelModel(
        kernel=name,
        args=built.args,
        target=ASCEND_TARGET,
        buffers=buffers,
        launch=None,
        layouts=_layouts(lowered),
        pipelines=pipelines,
        warp_specialized=False,
        shared_bytes=sum((b.bytes or 0) * b.slots for b in plan.buffers if b.level == "UB"),
        passes=lowered.passes,
        accesses=accesses,
        device_source=lowered.artifact.kernel_source if lowered.artifact is not None else None,
        diagnostics=diagnostics,
        lower_ms=round(lowered.total_ms, 2),
        arg_sources=dict(inst.sources),
        pass_configs=built.pass_configs(),
        out_idx=built.out_indices(),
        ascend=plan,
    )


def _layouts(lowered: Lowered) -> list[Layout]:
    """The fractal (nZ) layouts ``tl.AscendLayoutInference`` chose; none when they cannot be read."""
    try:
        return ascend.fractal_layouts(lowered.layout_module)
    except Exception:  # a layout object of a release this reader does not know: the rest of the model stands
        return []
