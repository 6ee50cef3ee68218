"""Build one kernel of a loaded file and lower it with every pass recorded, in the worker.

What the build printed becomes diagnostics (``compiler_warnings``); a build that asks for a GPU this
machine lacks is built again with its device queries answered from a profile, and says so. The
result, ``Built``, is what the model of a CUDA or an Ascend kernel is read from.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilescope.core import environment, errors
from tilescope.core.codes import diagnostic
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Diagnostic, Span
from tilescope.core.targets import ASCEND_TARGET, decorator_target
from tilescope.core.worker import ascend_dialect, compiler_warnings, device_profile
from tilescope.core.worker.lowering import Lowered, lower
from tilescope.core.worker.prim_func import build_prim_func, compile_options, jit_options
from tvm import tirx


@dataclass
class Built:
    """One kernel built and lowered, or why not (``prim_func`` is ``None`` and ``failure`` says why)."""

    args: dict[str, Any]
    """Every argument it was built with, defaults included, as JSON-friendly values."""
    target: str
    prim_func: Any = None
    failure: Diagnostic | None = None
    warnings: list[Diagnostic] = field(default_factory=list[Diagnostic])
    """What the build printed, as diagnostics, and the profile it was built for where it assumed one."""
    profile: device_profile.Profile | None = None
    """The device profile that answered the build's device queries, where this machine had no GPU for it."""
    lowered: Lowered | None = None
    configs: dict[str, Any] = field(default_factory=dict[str, Any])
    out_idx: Any = None
    lower_ms: float = 0.0

    def pass_configs(self) -> dict[str, Any]:
        return {k: json_value(v) for k, v in self.configs.items()}

    def out_indices(self) -> list[int] | None:
        if self.out_idx is None:
            return None
        return [self.out_idx] if isinstance(self.out_idx, int) else list(self.out_idx)


def build(
    namespace: dict[str, Any],
    inst: Instantiation,
    path: str,
    requested: str,
    source: str,
    phase: Callable[[str], None],
) -> Built:
    """Build ``inst`` from the file's ``namespace`` and lower it for its target; ``phase`` hears ``built``
    and ``lowered``. A ``sys.exit()`` in the factory fails this kernel, not the worker."""
    name, line = inst.kernel.name, inst.kernel.span.line
    built = Built(_bound_args(namespace[name], inst), inst.target or requested)
    exited: SystemExit | None = None
    with compiler_warnings.captured_stderr() as printed:
        try:
            built.prim_func = build_prim_func(namespace, inst)
        except SystemExit as err:  # a probe such as ``if not torch.cuda.is_available(): sys.exit(1)``
            exited = err
        except Exception as err:
            built.failure = (
                ascend_dialect.dialect_error(err, path, line)
                or ascend_dialect.rejected(err, name, line, source, inst)
                or errors.build_error(err, path, name, line)
            )
        if exited is not None or (built.failure is not None and built.failure.code == "needs-gpu"):
            built_for = inst.target or decorator_target(getattr(namespace[name], "target", None), requested)
            built.prim_func, built.profile = _build_for_profile(namespace, inst, built_for)
            if built.prim_func is not None:
                exited, built.failure = None, None
        if built.prim_func is not None and not isinstance(built.prim_func, tirx.PrimFunc):
            built.prim_func, built.failure = None, _not_a_kernel(name, built.prim_func, inst.kernel.span)
        if built.prim_func is not None:
            phase("built")
            _lower(built, namespace, inst, path, requested, source)
            phase("lowered")
    built.warnings = compiler_warnings.parse(printed[0], path, name)
    if exited is not None:
        built.failure = environment.exited(exited, printed[0], path, name, line)
    if built.prim_func is not None and built.profile is not None:
        built.warnings.insert(0, _profile_note(name, built.profile, inst.kernel.span))
    return built


def _lower(
    built: Built, namespace: dict[str, Any], inst: Instantiation, path: str, requested: str, source: str
) -> None:
    """Lower the built kernel with the pass configs and target its decorator (or its factory's
    ``tilelang.compile``) gives; a kernel in the Ascend dialect lowers for Ascend alone."""
    name = inst.kernel.name
    configs, jit_target, out_idx = jit_options(namespace, inst, built.prim_func)
    if inst.kernel.style == "factory":
        compiled, compile_target = compile_options(namespace, source, path, name)
        configs.update(compiled)
        jit_target = jit_target or compile_target
    built.target = inst.target or decorator_target(jit_target, requested)
    if jit_target is None and ascend_dialect.uses_ascend(namespace, name):
        built.target = ASCEND_TARGET
    start = time.perf_counter()
    built.lowered = lower(built.prim_func, built.target, configs)
    built.lower_ms = (time.perf_counter() - start) * 1000
    built.configs, built.out_idx = configs, out_idx


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
    return {k: json_value(v) for k, v in values.items()}


def _not_a_kernel(name: str, built: Any, span: Span) -> Diagnostic:
    what = "nothing" if built is None else f"a {type(built).__name__}"
    return diagnostic("not-a-kernel", span, kernel=name, name=name, what=what)


def _build_for_profile(
    namespace: dict[str, Any], inst: Instantiation, target: str
) -> tuple[Any, device_profile.Profile | None]:
    """The build again with its device queries answered from a profile; nothing if that fails too."""
    answered = device_profile.retried(target, inst.device, lambda: build_prim_func(namespace, inst))
    return answered if answered is not None else (None, None)


def _profile_note(name: str, profile: device_profile.Profile, span: Span) -> Diagnostic:
    return diagnostic("device-profile", span, kernel=name, queries=profile.queries(), profile=profile.describe())


def json_value(value: Any) -> Any:
    return value if isinstance(value, int | float | str | bool) or value is None else str(value)


def pass_names(lowered: Lowered) -> list[str]:
    return [p.name for p in lowered.passes]
