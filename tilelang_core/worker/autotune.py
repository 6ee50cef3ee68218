"""``@autotune`` kernels in the worker: read the search space, lower configs, never run the autotuner.

TileLang's ``AutoTuneImpl.__call__`` compiles every config and benchmarks it on a GPU. Tilescope
instead takes the search space (a list of dicts, or a callable TileLang would call with the kernel's
arguments), and builds the wrapped ``@tilelang.jit`` function with one config at a time, the way
the autotuner's ``jit_elaborate`` does. Which config: ``config=N`` (directive or argument); else the
call site's own tunable values when it passes any (TileLang then skips tuning too); else the first
config that fits. ``config=all`` lowers every config so the model can say how many fit.
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.fit import fit, summary
from tilescope.core.model import Autotune, Diagnostic, KernelModel, Span, TuneConfig, from_dry_run
from tilescope.core.protocol import CONFIG_ARG

MAX_FIRST_FIT_TRIES = 8
"""Configs lowered while looking for the first that fits, before giving up on the rest."""
_RESERVED = {"pass_configs"}


class AutotunerBlocked(RuntimeError):
    """Raised when user code asks for TileLang's autotuner: analysis never compiles-and-benchmarks."""


class _Check(Protocol):
    """A hazard check still to run (``cuda_kernel.HazardStep``, not imported: the interpreter it runs reads
    this module to pick a tuned kernel's config)."""

    def applied(self, model: KernelModel) -> KernelModel: ...


class _Run(Protocol):
    model: KernelModel

    @property
    def hazards(self) -> _Check | None:
        """The model's hazard check when it is still to run (``deferred``)."""
        ...


R = TypeVar("R", bound=_Run)

_requested: list[tuple[Callable[..., Any], Any]] = []
"""``AutoTuner(fn, configs)`` constructions seen while building the current kernel (the API style)."""


def guard() -> None:
    """Make starting the autotuner an error in this process, remembering what it was asked to tune.

    ``AutoTuner.from_kernel(kernel=fn, configs=...)`` stops at construction, before it resolves a
    target or prepares inputs; the decorator's ``AutoTuneImpl.__call__`` never starts.
    """
    from tilelang.autotuner import tuner

    def construct(_self: Any, fn: Callable[..., Any], configs: Any) -> None:
        _requested.append((fn, configs))
        raise AutotunerBlocked("Tilescope never runs the autotuner (it would compile and benchmark every config)")

    def call(*_args: Any, **_kwargs: Any) -> Any:
        raise AutotunerBlocked("Tilescope never runs the autotuner (it would compile and benchmark every config)")

    tuner.AutoTuner.__init__ = construct  # type: ignore[method-assign]  # patching TileLang's tuner on purpose: see guard()
    tuner.AutoTuneImpl.__call__ = call


def is_tuned(obj: Any) -> bool:
    from tilelang.autotuner.tuner import AutoTuneImpl

    return isinstance(obj, AutoTuneImpl)


def search_space(tuned: Any, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The configs, calling a configs function with the kernel's arguments as TileLang would."""
    configs: Any = tuned.configs
    if callable(configs):
        try:
            params = inspect.signature(configs).parameters
        except (TypeError, ValueError):
            params = {}
        takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
        configs = configs(**{k: v for k, v in args.items() if takes_all or k in params})
    return [dict(c) for c in configs]


def _plain(value: Any) -> Any:
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return str(value)


def _decorator_line(path: str, def_line: int) -> int:
    """The ``@autotune`` line above the def (decorators may span several lines)."""
    lines = linecache.getlines(path)
    for number in range(def_line - 1, max(def_line - 40, 0), -1):
        text = lines[number - 1] if number - 1 < len(lines) else ""
        if text.lstrip().startswith("@") and "autotune" in text:
            return number
        if text and not text[0].isspace() and not text.startswith(("@", ")")):
            break
    return def_line


def _row(index: int, values: dict[str, Any], model: KernelModel | None) -> TuneConfig:
    if model is None:
        return TuneConfig(index, _plain(values), "not-lowered")
    status, reason, line = fit(model)
    if not model.passes:
        return TuneConfig(index, _plain(values), status, reason, line)
    threads = model.launch.threads_after_ws if model.launch else None
    return TuneConfig(index, _plain(values), status, reason, line, model.shared_bytes, threads)


def analyze_kernel(
    namespace: dict[str, Any],
    inst: Instantiation,
    analyze: Callable[[dict[str, Any], Instantiation], R],
    deferred: Callable[[dict[str, Any], Instantiation], R] | None = None,
) -> R:
    """Analyse one kernel; an autotuned one (decorator or ``AutoTuner.from_kernel``) over its configs.

    ``deferred``: an analysis that may leave its hazard check to the caller (the model is sent first without
    it), used where one analysis is made: a kernel that is not tuned, a tuned one whose config is named (a
    directive, the call) or whose space holds one config. Where configs are tried until one fits, each is
    analysed whole by ``analyze``, since a config's hazards decide whether it fits."""
    name = inst.kernel.name
    obj: Any = namespace.get(name)
    choice = inst.args.get(CONFIG_ARG)
    args = {k: v for k, v in inst.args.items() if k != CONFIG_ARG}
    if is_tuned(obj):
        plain = {**namespace, name: obj.jit_impl}
        return _over_space(plain, inst, args, choice, lambda: search_space(obj, args), analyze, deferred)
    _requested.clear()
    run = (deferred or analyze)(namespace, replace(inst, args=args))
    if _requested:
        fn, configs = _requested[-1]
        plain = {**namespace, name: config_only(fn)}
        return _over_space(plain, inst, args, choice, lambda: [dict(c) for c in configs], analyze, deferred)
    if choice is None:
        return run
    note = diagnostic("autotune-config", inst.kernel.span, kernel=name, choice=choice)
    return _with(run, diagnostics=[note])


def requested() -> list[tuple[Callable[..., Any], Any]]:
    """The ``AutoTuner(fn, configs)`` constructions seen since it was last cleared (the API style)."""
    return _requested


def config_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` called with a config only, as ``AutoTuner`` calls it: the factory's own arguments are bound."""
    signature = inspect.signature(fn)

    def elaborate(**values: Any) -> Any:
        return fn(**{k: v for k, v in values.items() if k in signature.parameters})

    elaborate.__signature__ = signature
    return elaborate


def _over_space(
    plain: dict[str, Any],
    inst: Instantiation,
    args: dict[str, Any],
    choice: Any,
    read_space: Callable[[], list[dict[str, Any]]],
    analyze: Callable[[dict[str, Any], Instantiation], R],
    deferred: Callable[[dict[str, Any], Instantiation], R] | None = None,
) -> R:
    name = inst.kernel.name
    line = _decorator_line(_path(plain), inst.kernel.span.line)
    once = deferred or analyze
    """The analysis where only one is made: its hazard check may be left to the caller."""
    try:
        space = read_space()
    except Exception as err:
        run = once(plain, replace(inst, args=args))
        error = f"{type(err).__name__}: {err}"
        note = diagnostic("autotune-config", Span(line), form="unreadable", kernel=name, error=error)
        return _with(run, diagnostics=[note])
    if not space:
        return once(plain, replace(inst, args=args))
    models: dict[int, KernelModel] = {}
    runs: dict[int, R] = {}
    notes: list[Diagnostic] = []

    def lower(index: int, alone: bool = False) -> R:
        values = {k: v for k, v in space[index].items() if k not in _RESERVED}
        missing = [m for m in inst.missing if m not in values]
        with _pass_configs(plain[name], space[index].get("pass_configs")):
            run = (once if alone else analyze)(plain, replace(inst, args={**args, **values}, missing=missing))
        runs[index], models[index] = run, run.model
        return run

    tunable = {k for config in space for k in config} - _RESERVED
    given = [k for k in tunable if k in args and _passed(inst.sources.get(k))]
    chosen: int | None
    if isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(space):
        chosen, chosen_by, run = choice, "directive", lower(choice, alone=True)
    elif given and choice is None:
        chosen, chosen_by, run = None, "call", once(plain, replace(inst, args=args))
    else:
        if choice is not None and choice != "all":
            # An error, not the code's usual warning: the config asked for does not exist, so what is
            # analysed instead (the first that fits) is not what the user named.
            notes.append(
                diagnostic(
                    "autotune-config",
                    Span(line),
                    form="unknown",
                    severity="error",
                    kernel=name,
                    choice=choice,
                    last=len(space) - 1,
                )
            )
        chosen_by = "first-fit"
        tries = len(space) if choice == "all" else min(len(space), MAX_FIRST_FIT_TRIES)
        chosen = None
        for index in range(tries):
            model = lower(index, alone=tries == 1).model  # one config: chosen whatever its check finds
            if any(d.code == "missing-args" for d in model.diagnostics):
                break  # every config misses the same values
            status = fit(model)[0]
            if status in ("fits", "spills") and chosen is None:
                chosen = index
                if choice != "all":
                    break
        chosen = 0 if chosen is None else chosen
        run = runs[chosen]
    rows = [_row(i, space[i], models.get(i)) for i in range(len(space))]
    text = summary([r.status for r in rows])
    if chosen_by == "call":
        text = f"{len(rows)} configs; the call passes {', '.join(sorted(given))}, so TileLang skips tuning"
    whole = _with(run, diagnostics=notes, autotune=Autotune(line, rows, chosen, chosen_by, text))
    step = run.hazards
    if step is None or chosen is None:
        return whole
    bare, config = models[chosen], space[chosen]

    def refit(model: KernelModel) -> KernelModel:
        """The chosen config's row once its hazard check has run: its errors count in whether it fits."""
        checked = [*rows[:chosen], _row(chosen, config, step.applied(bare)), *rows[chosen + 1 :]]
        return replace(model, autotune=Autotune(line, checked, chosen, chosen_by, summary([r.status for r in checked])))

    return replace(whole, after=refit)  # type: ignore[type-var]  # KernelRun is a dataclass; the bound is lost


def _passed(source: str | None) -> bool:
    """Whether a tunable value is one the program passes (so TileLang tunes nothing): written in a directive
    or the call, or seen passed by a recorded run or a dry run (``convolution.compile(..., **config)``)."""
    return source in ("directive", "call", "recorded") or from_dry_run(source)


@contextmanager
def _pass_configs(jit: Any, per_config: dict[str, Any] | None) -> Iterator[None]:
    """A config's own ``pass_configs`` over the jit decorator's while it builds, as the autotuner does."""
    if not per_config or not hasattr(jit, "pass_configs"):
        yield
        return
    original = jit.pass_configs
    jit.pass_configs = {**(original or {}), **per_config}
    try:
        yield
    finally:
        jit.pass_configs = original


def _path(namespace: dict[str, Any]) -> str:
    return str(namespace.get("__file__", ""))


def _with(run: R, diagnostics: list[Diagnostic], autotune: Autotune | None = None) -> R:
    model = replace(run.model, diagnostics=[*diagnostics, *run.model.diagnostics], autotune=autotune)
    return replace(run, model=model)  # type: ignore[type-var]  # KernelRun is a dataclass; the bound is lost in the generic
