"""Analyse one file with the real compiler: load, build, lower, extract. Runs in the worker.

Each kernel is analysed on its own, so one broken kernel leaves the others' models intact: its
instantiation is checked (every argument known, a recorded one still valid), then it is built and
lowered (``kernel_build``), and its model read from the lowering (``cuda_kernel``, ``ascend_kernel``).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tilescope.core import environment, errors
from tilescope.core.codes import diagnostic
from tilescope.core.compat import spans
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Diagnostic, FileAnalysis, KernelModel, Span
from tilescope.core.protocol import CONFIG_ARG
from tilescope.core.static import StaticKernel, analyze_source
from tilescope.core.targets import is_ascend
from tilescope.core.worker import (
    ascend_dialect,
    ascend_kernel,
    autotune,
    compiler_warnings,
    cuda_kernel,
    device_profile,
    kernel_build,
    record_rebuild,
)
from tilescope.core.worker.loader import load_module
from tilescope.core.worker.lowering import Lowered


@dataclass
class KernelRun:
    """What the worker keeps of one kernel's lowering, for IR printed on demand."""

    model: KernelModel
    lowered: Lowered | None
    hazards: cuda_kernel.HazardStep | None = None
    """The model's hazard check, when it is still to run (``finished``)."""
    after: Callable[[KernelModel], KernelModel] | None = None
    """What else changes once the check has run (an autotuned kernel's chosen row, ``autotune``)."""

    def finished(self) -> KernelRun:
        """The run with its hazard check done."""
        if self.hazards is None:
            return self
        model = self.hazards.applied(self.model)
        return KernelRun(self.after(model) if self.after is not None else model, self.lowered)


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
    on_partial: Callable[[FileAnalysis], None] | None = None,
) -> tuple[FileAnalysis, dict[str, KernelRun]]:
    """Load the file once and analyse each instantiation the caller computed (the parent's discovery).

    The caller has already reported syntax errors, a bad target and a file without kernels; what is
    left here is what needs the user's code: loading the module, building and lowering. ``on_phase``
    hears each step as it ends (``loaded`` or ``load-failed``, ``built``, ``lowered``, ``extracted``,
    ``modelled``, ``checked``), so the caller can say where an analysis stopped at its deadline, and time each
    step. ``on_partial`` hears the analysis so far each time a kernel's model is whole but for its hazard
    check, before that check runs.
    """
    phase = on_phase or _no_phase
    recorded = next((i.device for i in found if i.device), None)  # the device a record saw, if any
    namespace, said = _load(source, path, target, recorded)
    phase("loaded" if namespace is not None else "load-failed")
    notes = [said] if said is not None else []
    if namespace is None:
        # Each kernel still appears (not lowered); why is the file's diagnostic.
        kernels = [_empty(i.kernel.name, dict(i.args), i.target or target, []) for i in found]
        return FileAnalysis(path=path, target=target, kernels=kernels, discovered=[], diagnostics=notes), {}

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
            return _analyze_kernel(ns, i, path, t, with_ptxas, k, hazards_s, phase, source).finished()

        def deferred(ns: dict[str, Any], i: Instantiation, t: str = kernel_target, k: Any = kernel_static) -> KernelRun:
            return _analyze_kernel(ns, i, path, t, with_ptxas, k, hazards_s, phase, source)

        try:
            run = autotune.analyze_kernel(namespace, inst, analyze, deferred)
            if run.hazards is not None and on_partial is not None:
                models = [*(r.model for r in runs.values()), run.model]
                on_partial(FileAnalysis(path=path, target=target, kernels=models, discovered=[], diagnostics=notes))
            runs[inst.kernel.name] = run.finished()
        except Exception as err:  # a fault of Tilescope's own: the kernel still appears, with what went wrong
            runs[inst.kernel.name] = KernelRun(
                _empty(inst.kernel.name, {}, kernel_target, [_internal(inst, err)]), None
            )
    analysis = FileAnalysis(
        path=path, target=target, kernels=[r.model for r in runs.values()], discovered=[], diagnostics=notes
    )
    return analysis, runs


def _no_phase(_name: str) -> None:
    """Nobody listens to the steps of this analysis."""


_failed: dict[tuple[str, str], Diagnostic] = {}


def _load(
    source: str, path: str, target: str, recorded: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, Diagnostic | None]:
    """The file's namespace (with a note when the load's device queries were answered from a profile), or
    why it could not load; a ``sys.exit()`` at import ends the load, not the worker.

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
            failure = ascend_dialect.dialect_error(err, path) or errors.load_error(err, path)
            if failure.code != "needs-gpu":
                _failed[key] = failure
                return None, failure
        # A library that asks for the device when imported (its name, or whether there is one): answered as
        # the dry run's fake device answers it, from the recorded device or the target's part.
        answered = device_profile.retried(target, recorded, lambda: load_module(source, path))
        if answered is not None:
            namespace, profile = answered
            queries, described = profile.queries(), profile.describe()
            return namespace, diagnostic(
                "device-profile", Span(line=1), form="load", queries=queries, profile=described
            )
    if exited is not None:
        failure = environment.exited(exited, printed[0], path, None, 1)
    _failed[key] = failure
    return None, failure


def _empty(name: str, args: dict[str, Any], target: str, diagnostics: list[Diagnostic]) -> KernelModel:
    return KernelModel.unanalysed(name, args, target, diagnostics)


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
    name, target = inst.kernel.name, inst.target or requested
    refused = _unbuildable(inst)
    if refused is not None:
        return KernelRun(_empty(name, dict(inst.args), target, [refused]), None)
    try:
        inst = replace(inst, args={k: record_rebuild.decode(v, namespace, path) for k, v in inst.args.items()})
    except Exception as err:  # a recorded class or enum that the file no longer has
        return KernelRun(_empty(name, dict(inst.args), target, [_stale_record(inst, err)]), None)
    built = kernel_build.build(namespace, inst, path, requested, source, phase)
    if built.prim_func is None:
        assert built.failure is not None
        return KernelRun(_empty(name, built.args, built.target, [built.failure, *built.warnings]), None)
    if is_ascend(built.target):
        return KernelRun(ascend_kernel.model(built, inst, path, source, static), built.lowered)
    model, hazards = cuda_kernel.model(built, inst, path, static, with_ptxas, hazards_s, phase)
    return KernelRun(model, built.lowered, hazards)


def _unbuildable(inst: Instantiation) -> Diagnostic | None:
    """Why ``inst`` is not built at all: arguments nobody gave, or a recorded instance the record could not
    keep whole (building with defaults would be another kernel)."""
    if inst.missing:
        values = {"names": ", ".join(inst.missing), "directive": " ".join(f"{m}=..." for m in inst.missing)}
        if inst.dry_run:
            values["dry_run"] = inst.dry_run
        form = "dry_run" if inst.dry_run else None
        return diagnostic("missing-args", inst.kernel.span, form=form, kernel=inst.kernel.name, fields=values)
    if inst.unrecorded:
        return _unrecorded(inst)
    return None
