"""The hook ``tilescope record`` loads into the user's program: one JSON line per kernel instantiation.

It is copied next to a ``sitecustomize.py`` on ``PYTHONPATH``, so it must import nothing of
Tilescope (the program may run in an interpreter without it) and cost nothing until TileLang is
imported. ``_PATCHES`` is its one table: each TileLang (or torch) module it patches right after
the module is imported, and the patch (``hook_patches``): ``T.prim_func`` (a factory building a
kernel: its own arguments, read from the calling frame), ``JITImpl.get_tir`` (``@tilelang.jit``:
arguments, ``T.const`` values read from the tensors passed, ``pass_configs``, ``target``,
``out_idx``) and the autotuner's result (the config it chose). Argument values are stored in
``record_values``'s form (dataclasses, enums, dtypes, tuples, callables by name) or with why they
cannot be (``hook_arguments``). Lines go to the file named by ``TILESCOPE_RECORD`` (``hook_lines``),
appended whole, so several processes (test workers) can share it; the last line, written here, says
how the process ended. Its modules are copied beside it as ``tilescope_<name>``.

``TILESCOPE_FAKE_DEVICE`` (the dry run, ``dry_run.py``, and ``tilescope record`` on a machine
without a GPU) gives the program the fake device of ``fake_device.py``: shape-only tensors, device
queries answered from a profile; each line then names it, and the test building the instance
(pytest's node id). ``TILESCOPE_RECORD_CPU_TENSORS=1`` (the corpus ground truth) makes the GPU
tensors on the CPU instead. With ``TILESCOPE_RECORD_STAND_IN=1`` as well, compiles return stand-ins
(``dry_run_standin.py``) so the run goes on to its later kernels. Loaded as a pytest plugin too
(``PYTEST_PLUGINS``), it says which tests failed, why, and at which line of the program.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.abc
import importlib.util
import os
import re
import sys
import traceback
from collections.abc import Callable
from typing import Any

try:
    # Written beside this hook (as ``sitecustomize``) at run time, so the checker cannot resolve them.
    import tilescope_hook_lines as lines  # pyright: ignore[reportMissingImports]
    import tilescope_hook_patches as patches  # pyright: ignore[reportMissingImports]
    import tilescope_hook_program as program  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside ``sitecustomize``
    from tilescope.core.record import hook_lines as lines
    from tilescope.core.record import hook_patches as patches
    from tilescope.core.record import hook_program as program

_ended: list[str] = []

_PATCHES: dict[str, Callable[[Any], None]] = {
    "tilelang.language": patches.patch_language,
    "tilelang.ascend.language": patches.patch_language,  # the Ascend dialect re-exports the common prim_func
    "tilelang.jit": patches.both(
        patches.wrap_method("JITImpl", "get_tir", patches.jit_get_tir),
        patches.wrap_method("JITImpl", "_infer_jit_mode", patches.jit_infer_mode),
    ),
    "tilelang.autotuner.tuner": patches.wrap_method("AutoTuner", "run", patches.tuner_run),
    "tilelang.language.eager.builder": patches.wrap_method("TirTemplate", "get_tir", patches.template_get_tir),
}
_fake = lines.fake
if _fake is not None:  # the dry run, and record on a machine without a GPU
    _PATCHES["torch"] = _fake.patch_torch
    _PATCHES["tilelang.carver.arch.driver"] = _fake.patch_driver
    _PATCHES["tilelang.carver.arch.driver.cuda_driver"] = _fake.patch_driver
    _PATCHES["tilelang.backend.target"] = _fake.patch_target
    _PATCHES["tilelang.contrib.nvcc"] = _fake.patch_nvcc
    _PATCHES["triton.runtime.jit"] = _fake.patch_triton
elif os.environ.get("TILESCOPE_RECORD_CPU_TENSORS") == "1":
    _PATCHES["torch"] = patches.patch_torch
if os.environ.get("TILESCOPE_RECORD_STAND_IN") == "1":  # see that module
    import tilescope_dry_run_standin as _standin  # pyright: ignore[reportMissingImports]  # put on the path by record.py

    _PATCHES["tilelang.jit"] = patches.both(_PATCHES["tilelang.jit"], _standin.patch_compile)
    _PATCHES["tilelang.profiler"] = _standin.patch_profiler
    _PATCHES["torch"] = patches.both(_PATCHES.get("torch", patches.patch_torch), _standin.patch_torch)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Patches TileLang's modules right after they are imported; costs nothing otherwise."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in _PATCHES:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def patched(module: Any) -> None:
            exec_module(module)
            with contextlib.suppress(Exception):
                _PATCHES[name](module)

        loader.exec_module = patched
        return spec


_FATAL = re.compile(r"\bfatal\b|\bunsupported\b", re.IGNORECASE)
_ERROR = re.compile(r"\berror\b\s*[:\](]", re.IGNORECASE)


def cause(message: str) -> str:
    """The line of a (compiler's) multi-line message that says what went wrong: the first fatal one
    (``nvcc fatal : Unsupported gpu architecture 'sm_50'``), else the first error with words after its
    colon, else the first line. A heading such as ``Compilation error:`` or quoted source is passed over."""
    said = [line.strip() for line in message.strip().splitlines() if line.strip()]
    quoted = [line for line in said if not line.startswith("#")]
    fatal = [line for line in quoted if _FATAL.search(line)]
    errors = [line for line in quoted if _ERROR.search(line) and not line.endswith(":")]
    return (fatal or errors or said or [""])[0]


def _excepthook(kind: type[BaseException], err: BaseException, tb: Any) -> None:
    _ended.append(f"{kind.__name__}: {cause(str(err))}"[:500])
    at = program.program_frame(tb)
    trace = "".join(traceback.format_tb(tb))[-2000:]
    lines.write({"event": "exit", "error": _ended[-1], "at": at, "traceback": trace, **_what_it_imported()})
    _previous_hook(kind, err, tb)


def _at_exit() -> None:
    if not _ended:
        lines.write({"event": "exit", "error": None, **_what_it_imported()})


def _what_it_imported() -> dict[str, list[str]]:
    """The program's files imported since the last line, and the installed modules without bytecode."""
    return {**lines.imports(), **program.uncompiled()}


def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """A test that failed (under ``PYTEST_PLUGINS``): which, why and at which of the program's lines,
    since pytest catches what would otherwise end the program; the run goes on to the next test."""
    excinfo = getattr(call, "excinfo", None)
    if excinfo is None or call.when != "call" or excinfo.typename in ("Skipped", "XFailed"):
        return
    error = f"{excinfo.type.__name__}: {cause(str(excinfo.value))}"[:500]
    lines.write({"event": "test-failed", "test": item.nodeid, "error": error, "at": program.program_frame(excinfo.tb)})


def install() -> None:
    if not lines.OUT:
        return
    import importlib.util  # noqa: F401  (used by the finder)

    sys.meta_path.insert(0, _AfterImport())
    if _fake is not None and _fake.PROFILE.get("kind") == "npu":
        sys.meta_path.append(_fake.NpuFinder())
    for name, patch in _PATCHES.items():  # already imported (a sitecustomize of the user's own)
        if name in sys.modules:
            with contextlib.suppress(Exception):
                patch(sys.modules[name])
    sys.excepthook = _excepthook
    atexit.register(_at_exit)


_previous_hook = sys.excepthook
