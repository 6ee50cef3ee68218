"""The kernels of a file and the concrete arguments to build them with, for the compiler tier.

The rules (which definitions are kernels, and where each argument comes from: a
``# tilescope: K=V ...`` directive above the def, then what ``tilescope record`` saw the program
build (``.tilescope/instances.json``), then a call in the same file, also through the tensors it
passes and a ``main()`` whose callers, defaults, locals or ``argparse`` defaults supply the values,
then defaults) live once, in the static tier (``tilescope.core.static.discover`` and
``bindings``). This module asks it and keeps what the
worker can pass to a factory: concrete values only. Where those leave a kernel short, a trusted
caller's dry run (``dry_run.py``) supplies the values the program itself built it with; nothing
here executes user code otherwise.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilescope.core.errors import surrogate_error, syntax_error
from tilescope.core.model import DRY_RUN, Diagnostic, KernelRef
from tilescope.core.record.dry_run_result import DryRun
from tilescope.core.record.record_values import is_encoded
from tilescope.core.record.recorder import recorded_instance
from tilescope.core.static import StaticFile, analyze_source

_CONCRETE = (int, float, str, bool, tuple)


def _passed(value: Any) -> Any:
    """A list of sizes goes to the factory as the list the file wrote."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Instantiation:
    """How to build one kernel: the values to pass and where each came from."""

    kernel: KernelRef
    args: dict[str, Any]
    """Values to pass to the factory: directive and call-site values (``T.const`` names included)."""
    sources: dict[str, str]
    """For each resolved parameter, ``directive``, ``recorded``, ``call`` or ``default``."""
    missing: list[str]
    target: str | None = None
    """A ``target=`` given by the kernel's directive."""
    unrecorded: dict[str, str] = field(default_factory=dict)
    """Arguments the recorded instance was built with that the record could not keep, and why."""
    device: dict[str, Any] | None = None
    """The properties of the GPU the recorded run had (``device_profile``), when it had one."""
    dry_run: str | None = None
    """Why a dry run gave no values for the ``missing`` ones (it ran and did not build the kernel)."""


def syntax_diagnostic(source: str, path: str = "<string>") -> Diagnostic | None:
    """The first syntax error of the whole file: the compiler tier needs a file Python can import."""
    surrogate = surrogate_error(source)
    if surrogate is not None:
        return surrogate
    try:
        ast.parse(source, filename=path)
    except SyntaxError as err:
        return syntax_error(err)
    return None


def discover(source: str, path: str = "<string>") -> list[KernelRef]:
    """The kernels a file defines; a file that does not parse defines none (the caller reports why)."""
    return [inst.kernel for inst in instantiations(source, path)]


def instantiations(
    source: str,
    path: str = "<string>",
    dry_run: Callable[[], DryRun | None] | None = None,
    static: StaticFile | None = None,
) -> list[Instantiation]:
    """Each kernel with the arguments to build it, in file order; none for a file that does not parse.

    ``dry_run`` (trusted callers only) is asked, once, when the static sources leave a kernel without
    every value: a kernel the dry run built takes all its values from it, but a directive's or a record's.
    ``static``: the static tier's analysis of this very text, where the caller holds it (the language
    server, whose documents are analysed as they change), so it is not computed a second time.
    """
    if syntax_diagnostic(source, path) is not None:
        return []
    if static is None or static.path != path:
        static = analyze_source(source, path)
    found = []
    ran: list[DryRun | None] = []
    for kernel in static.kernels:
        bindings = [b for b in kernel.bindings if isinstance(b.value, _CONCRETE)]
        given = {b.name: (_passed(b.value), b.origin) for b in bindings if b.origin == "call"}
        known = {p.name for p in kernel.ref.params}
        entry = recorded_instance(path, kernel.ref.name) or {}
        recorded = {**(entry.get("args") or {}), **(entry.get("consts") or {})}
        given.update({k: (v, "recorded") for k, v in recorded.items() if k in known and is_encoded(v)})
        directive = {b.name: (_passed(b.value), b.origin) for b in bindings if b.origin == "directive"}
        run_only = {b.name for b in kernel.bindings if b.origin == "passed"}  # passed a value only a run knows
        required = [p.name for p in kernel.ref.params if p.default is None or p.name in run_only]
        unknown = [name for name in required if name not in {**given, **directive}]
        note = None
        if unknown and dry_run is not None and not entry:
            if not ran:
                ran.append(dry_run())
            run = ran[0]
            learned = run.instance(kernel.ref.name) if run is not None else None
            if run is not None and learned is not None:
                entry = learned
                origin = run.source(kernel.ref.name) or DRY_RUN
                values = {**(entry.get("args") or {}), **(entry.get("consts") or {})}
                given.update({k: (v, origin) for k, v in values.items() if k in known and is_encoded(v)})
            elif run is not None:
                note = run.why_not(kernel.ref.name)
        given.update(directive)
        unrecorded = {k: str(why) for k, why in (entry.get("unrecorded") or {}).items() if k not in directive}
        args = {name: value for name, (value, _) in given.items()}
        sources = {name: origin for name, (_, origin) in given.items()}
        missing = []
        for param in kernel.ref.params:
            if param.name in args:
                continue
            if param.default is None or (param.name in run_only and not entry):  # a run's call left it out
                missing.append(param.name)
            else:
                sources[param.name] = "default"
        target = kernel.target if kernel.target != static.target else None
        found.append(
            Instantiation(
                kernel.ref, args, sources, missing, target, unrecorded, entry.get("device"), note if missing else None
            )
        )
    return found
