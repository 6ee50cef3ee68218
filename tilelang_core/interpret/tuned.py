"""Which configuration of an ``@autotune`` kernel ``run`` interprets: the one ``check`` analyses.

TileLang's autotuner would compile and time every config on a GPU; Tilescope never runs it. A run
builds one config instead, chosen as the compiler tier chose the one it analysed (so the run and the
model describe the same kernel): ``config=N`` where the user names one (``--config N``), else the
call site's own tunable values where it passes some (TileLang then skips tuning too), else the
first config that fits the target. Both of TileLang's styles: the ``@autotune`` decorator and
``AutoTuner.from_kernel(kernel=fn, configs=...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Autotune
from tilescope.core.protocol import CONFIG_ARG
from tilescope.core.worker import autotune
from tilescope.core.worker.prim_func import build_prim_func

_BY = {
    "directive": "as asked",
    "first-fit": "the first that fits, the one check analyses",
    "first": "the first of the search space",
}


Chooser = Callable[[Instantiation], Autotune | None]
"""The compiler tier's choice for an instantiation: its model's ``autotune`` (the worker's analysis)."""


@dataclass(frozen=True)
class Built:
    """The kernel's PrimFunc, and the namespace and instantiation it was built from (an autotuned kernel's
    factory and chosen config's values in them); ``config`` says which config in words (``None``: not
    autotuned)."""

    prim_func: Any
    namespace: dict[str, Any]
    inst: Instantiation
    config: str | None


def build(namespace: dict[str, Any], inst: Instantiation, choose: Chooser) -> Built | str:
    """Build the kernel to run, an autotuned one with the config ``check`` analyses; or why no config can
    be built (a ``config`` that does not exist). ``choose`` is asked only for an autotuned kernel. Each
    kernel is built once: the API style shows itself by the build stopping at the tuner's construction."""
    name = inst.kernel.name
    choice = inst.args.get(CONFIG_ARG)
    args = {k: v for k, v in inst.args.items() if k != CONFIG_ARG}
    plain = replace(inst, args=args)
    obj: Any = namespace.get(name)
    if obj is not None and autotune.is_tuned(obj):
        factory, space = obj.jit_impl, autotune.search_space(obj, args)
    else:
        autotune.requested().clear()
        try:
            prim_func = build_prim_func(namespace, plain)
        except autotune.AutotunerBlocked:
            if not autotune.requested():
                raise
            fn, configs = autotune.requested()[-1]
            factory, space = autotune.config_only(fn), [dict(c) for c in configs]
        else:
            if choice is not None:
                return f"kernel '{name}' is not autotuned: it has no config {choice}"
            return Built(prim_func, namespace, plain, None)
    valid = isinstance(choice, int) and not isinstance(choice, bool) and 0 <= choice < len(space)
    if choice is not None and not valid:
        return f"kernel '{name}' has configs 0 to {len(space) - 1}, not {choice!r}"
    tune = choose(inst)
    given = sorted(k for k in args if any(k in c for c in space))
    if tune is not None:
        index, by = tune.chosen, tune.chosen_by
    elif valid:
        index, by = choice, "directive"
    else:
        index, by = (None, "call") if given else (0, "first")
    tuned_namespace = {**namespace, name: factory}
    if index is None:
        text = f"the call passes {', '.join(given)}, so TileLang skips tuning"
        return Built(build_prim_func(tuned_namespace, plain), tuned_namespace, plain, text)
    values = {k: v for k, v in space[index].items() if k != "pass_configs"}
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    text = f"config {index} of {len(space)} ({shown}): {_BY[by]}"
    missing = [m for m in inst.missing if m not in values]
    chosen = replace(inst, args={**args, **values}, missing=missing)
    return Built(build_prim_func(tuned_namespace, chosen), tuned_namespace, chosen, text)
