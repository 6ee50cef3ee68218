"""The lines the record hook writes: one per kernel instance (a ``@tilelang.jit`` build or a factory's
``T.prim_func``), per compile of a factory's PrimFunc, and the context each names (the test building
it, the fake device, the device seen, the program's files imported). Part of the record hook, copied
beside it (``tilescope_hook_lines``): it must import nothing of Tilescope.

Lines go to the file named by ``TILESCOPE_RECORD``, appended whole, so several processes (test workers)
can share it.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import json
import os
import sys
import threading
from typing import Any

try:
    # Written beside the hook at run time, so the checker cannot resolve them.
    import tilescope_hook_arguments as arguments  # pyright: ignore[reportMissingImports]
    import tilescope_hook_program as program  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside ``sitecustomize``
    from tilescope.core.record import hook_arguments as arguments
    from tilescope.core.record import hook_program as program

OUT = os.environ.get("TILESCOPE_RECORD", "")
state = threading.local()
"""``in_jit``: inside a ``JITImpl`` call, where a ``T.prim_func`` is the jit's own, not a factory's;
``consts``: the ``T.const`` values TileLang bound for the build in progress (``template_get_tir``)."""
fake: Any = None
if os.environ.get("TILESCOPE_FAKE_DEVICE"):  # the dry run, and record on a machine without a GPU
    import tilescope_fake_device as fake  # pyright: ignore[reportMissingImports]  # put on the path by record.py

_DEVICE_FIELDS = (
    "name",
    "major",
    "minor",
    "multi_processor_count",
    "total_memory",
    "shared_memory_per_block",
    "shared_memory_per_block_optin",
    "regs_per_multiprocessor",
    "max_threads_per_multi_processor",
    "warp_size",
    "L2_cache_size",
)


def write(record: dict[str, Any]) -> None:
    if not OUT:
        return
    line = json.dumps({"pid": os.getpid(), **record}, default=str) + "\n"
    fd = os.open(OUT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _device() -> dict[str, Any] | None:
    """The GPU the program builds for, as ``torch.cuda.get_device_properties`` sees it (a device profile);
    none under the fake device (its answers are the profile the run was given, not a device seen)."""
    cuda = getattr(sys.modules.get("torch"), "cuda", None)
    if fake is not None:
        return None
    with contextlib.suppress(Exception):
        if cuda is not None and cuda.is_available():
            props = cuda.get_device_properties(cuda.current_device())
            return {k: getattr(props, k) for k in _DEVICE_FIELDS if isinstance(getattr(props, k, None), int | str)}
    return None


def _run_context() -> dict[str, Any]:
    """The test building the instance (pytest's node id) and the fake device answering for the GPU, where
    there are; and the program's files imported since the last line, which a dry run's cache is keyed by."""
    context: dict[str, Any] = {}
    test = os.environ.get("PYTEST_CURRENT_TEST")
    if test:
        context["test"] = test.rsplit(" (", 1)[0]
    if fake is not None:
        context["fake_device"] = fake.short_name()
    return {**context, **imports()}


def imports() -> dict[str, list[str]]:
    """``{"imports": [...]}``: the program's files imported since the last line, where there are any."""
    imported = program.program_files()
    return {"imports": imported} if imported else {}


def record_jit(
    impl: Any, args: tuple[Any, ...], kwargs: dict[str, Any], prim_func: Any, error: str | None = None
) -> None:
    """The instance line of a ``@tilelang.jit`` build: arguments, ``T.const`` values read from the tensors
    passed, ``pass_configs``, ``target``, ``out_idx``; ``error`` where the call raised."""
    jit_func = impl.func
    func = getattr(jit_func, "orig_func", jit_func)
    file, line = program.where(func)
    names: list[str] = []
    with contextlib.suppress(TypeError, ValueError):
        names = list(inspect.signature(func).parameters)
    given = {**dict(zip(names, args, strict=False)), **kwargs}  # T.const values may come as keywords too
    values, tensors, unrecorded = arguments.arguments(given)
    configs = {str(getattr(k, "value", k)): arguments.plain(v) for k, v in (impl.pass_configs or {}).items()}
    out_idx = impl.out_idx
    bound = getattr(state, "consts", None)  # TileLang's own reading, where its template said (eager)
    state.consts = None
    if bound is None:
        bound = arguments.consts(func, prim_func) if prim_func is not None else {}
    write(
        {
            "event": "instance",
            "file": file,
            "line": line,
            "kernel": getattr(func, "__name__", None),
            "style": "jit",
            "args": values,
            "consts": bound,
            "tensors": tensors,
            "unrecorded": unrecorded,
            "pass_configs": configs,
            "target": arguments.plain(impl.target) if impl.target is not None else None,
            "out_idx": [out_idx] if isinstance(out_idx, int) else (list(out_idx) if out_idx else None),
            "error": error,
            "device": _device(),
            "called_at": program.called_at(sys._getframe(2)),
            "outer": _outer(func, sys._getframe(2)),
            **_run_context(),
        }
    )


def _outer(func: Any, frame: Any) -> dict[str, Any] | None:
    """A ``@tilelang.jit`` defined inside a function (``def per_token_cast(M, N): @tilelang.jit def _build():
    ...; return _build()``): that function, the factory a program calls, with the arguments of this call."""
    qualname = getattr(func, "__qualname__", "")
    if ".<locals>." not in qualname:
        return None
    name = qualname.split(".<locals>.")[0].rsplit(".", 1)[-1]
    while frame is not None and frame.f_code.co_name != name:
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    values, _, unrecorded = arguments.arguments({n: frame.f_locals.get(n) for n in names})
    return {"kernel": name, "line": code.co_firstlineno, "args": values, "unrecorded": unrecorded}


_built: dict[int, int] = {}
"""``id`` of each PrimFunc a factory built, to the number of its instance line (``compiled`` names it)."""
_instances = itertools.count(1)


def record_factory() -> int | None:
    """``T.prim_func`` applied inside a function: that function is a factory; record its arguments.

    The line's number in this process (``seq``), or ``None`` when nothing was recorded."""
    frame = sys._getframe(2)
    code = frame.f_code
    if code.co_name == "<module>" or getattr(state, "in_jit", False) or program.in_tilelang(code.co_filename):
        return None
    count = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:count]
    values, tensors, unrecorded = arguments.arguments({n: frame.f_locals.get(n) for n in names})
    seq = next(_instances)
    write(
        {
            "event": "instance",
            "seq": seq,
            "file": os.path.abspath(code.co_filename),
            "line": code.co_firstlineno,
            "kernel": code.co_name,
            "style": "factory",
            "args": values,
            "consts": {},
            "tensors": tensors,
            "unrecorded": unrecorded,
            "pass_configs": {},
            "target": None,
            "out_idx": None,
            "called_at": program.called_at(frame.f_back),
            **_run_context(),
        }
    )
    return seq


def built_by(prim_func: Any, seq: int) -> None:
    """``prim_func`` is what the factory of instance line ``seq`` built (a later compile of it names the line)."""
    _built[id(prim_func)] = seq


def compiled(prim_func: Any, target: Any, pass_configs: Any) -> None:
    """A stand-in ``tilelang.compile`` of a factory's PrimFunc: the target and ``pass_configs`` it was
    compiled with, for the instance line it names (``seq``); they are part of the build."""
    seq = _built.get(id(prim_func))
    if seq is None:
        return
    configs = {str(getattr(k, "value", k)): arguments.plain(v) for k, v in dict(pass_configs or {}).items()}
    write({"event": "compile", "seq": seq, "target": arguments.plain(target), "pass_configs": configs})
