"""Which configuration of an ``@autotune`` kernel ``run`` interprets: the one ``check`` analyses.

TileLang's autotuner would compile and time every config on a GPU; Tilescope never runs it. A run
builds one config instead, chosen as the compiler tier chose the one it analysed (so the run and the
model describe the same kernel): ``config=N`` where the user names one (``--config N``), else the
call site's own tunable values where it passes some (TileLang then skips tuning too), else the
first config that fits the target. Both of TileLang's styles: the ``@autotune`` decorator and
``AutoTuner.from_kernel(kernel=fn, configs=...)``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Autotune
from tilescope.core.protocol import CONFIG_ARG
from tilescope.core.worker import autotune
from tilescope.core.worker.loader import build_prim_func

_BY = {
    "directive": "as asked",
    "first-fit": "the first that fits, the one check analyses",
    "first": "the first of the search space",
}


Chooser = Callable[[Instantiation], Autotune | None]
"""The compiler tier's choice for an instantiation: its model's ``autotune`` (the worker's analysis)."""


def configured(
    namespace: dict[str, Any], inst: Instantiation, choose: Chooser
) -> tuple[dict[str, Any], Instantiation, str | None] | str:
    """The namespace and instantiation that build the config to run, and which config it is in words
    (``None``: not autotuned); or why no config can be built (a ``config`` that does not exist).
    ``choose`` is asked only for an autotuned kernel."""
    name = inst.kernel.name
    choice = inst.args.get(CONFIG_ARG)
    args = {k: v for k, v in inst.args.items() if k != CONFIG_ARG}
    plain = replace(inst, args=args)
    found = _tuner(namespace, plain)
    if found is None:
        if choice is not None:
            return f"kernel '{name}' is not autotuned: it has no config {choice}"
        return namespace, plain, None
    factory, space = found
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
        return tuned_namespace, plain, f"the call passes {', '.join(given)}, so TileLang skips tuning"
    values = {k: v for k, v in space[index].items() if k != "pass_configs"}
    shown = ", ".join(f"{k}={v}" for k, v in values.items())
    text = f"config {index} of {len(space)} ({shown}): {_BY[by]}"
    missing = [m for m in inst.missing if m not in values]
    return tuned_namespace, replace(inst, args={**args, **values}, missing=missing), text


def _tuner(namespace: dict[str, Any], inst: Instantiation) -> tuple[Callable[..., Any], list[dict[str, Any]]] | None:
    """The factory that builds one config and the search space, for either autotuner style; ``None``
    when the kernel is not autotuned."""
    obj: Any = namespace.get(inst.kernel.name)
    if obj is not None and autotune.is_tuned(obj):
        return obj.jit_impl, autotune.search_space(obj, inst.args)
    autotune.requested().clear()
    with contextlib.suppress(autotune.AutotunerBlocked):  # the API style stops at the tuner's construction
        build_prim_func(namespace, inst)
    if not autotune.requested():
        return None
    fn, configs = autotune.requested()[-1]
    return autotune.config_only(fn), [dict(c) for c in configs]
