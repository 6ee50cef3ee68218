"""The hook ``tilescope record`` loads into the user's program: one JSON line per kernel instantiation.

It is copied next to a ``sitecustomize.py`` on ``PYTHONPATH``, so it must import nothing of
Tilescope (the program may run in an interpreter without it) and cost nothing until TileLang is
imported. Argument values are stored in ``record_values``'s form (dataclasses, enums, dtypes,
tuples, callables by name) or with why they cannot be. It then wraps ``T.prim_func`` (a factory
building a kernel: its own arguments, read from
the calling frame), ``JITImpl.get_tir`` (``@tilelang.jit``: arguments, ``T.const`` values read
from the tensors passed, ``pass_configs``, ``target``, ``out_idx``) and the autotuner's result (the
config it chose). Lines go to the file named by ``TILESCOPE_RECORD``, appended whole, so several
processes (test workers) can share it; the last line says how the process ended.

``TILESCOPE_FAKE_DEVICE`` (the dry run, ``dry_run.py``, and ``tilescope record`` on a machine
without a GPU) gives the program the fake device of ``fake_device.py``: shape-only tensors, device
queries answered from a profile; each line then names it, and the test building the instance
(pytest's node id). ``TILESCOPE_RECORD_CPU_TENSORS=1`` (the corpus ground truth) makes the GPU
tensors on the CPU instead. With ``TILESCOPE_RECORD_STAND_IN=1`` as well, compiles return stand-ins
(``dry_run_standin.py``) so the run goes on to its later kernels. Loaded as a pytest plugin too
(``PYTEST_PLUGINS``), it says which tests failed, why, and at which line of the program.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import importlib.abc
import importlib.util
import inspect
import itertools
import json
import os
import re
import sys
import textwrap
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

try:
    # Written beside this hook (as ``sitecustomize``) at run time, so the checker cannot resolve it.
    import tilescope_record_values as _values  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside ``sitecustomize``
    from tilescope.core.record import record_values as _values

_OUT = os.environ.get("TILESCOPE_RECORD", "")
_state = threading.local()
_ended: list[str] = []


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple) and all(isinstance(v, bool | int | float | str) for v in value):
        return list(value)
    if type(value).__module__.startswith(("tvm", "tilelang")) or "dtype" in type(value).__name__.lower():
        with contextlib.suppress(Exception):
            return str(value)
    return None


def _write(record: dict[str, Any]) -> None:
    if not _OUT:
        return
    line = json.dumps({"pid": os.getpid(), **record}, default=str) + "\n"
    fd = os.open(_OUT, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


def _tensor(value: Any) -> dict[str, Any] | None:
    shape = getattr(value, "shape", None)
    if shape is None or not hasattr(value, "dtype"):
        return None
    try:
        return {"shape": [int(d) for d in shape], "dtype": str(value.dtype).removeprefix("torch.")}
    except (TypeError, ValueError):
        return None


def _consts(func: Any, prim_func: Any) -> dict[str, int]:
    """``T.const`` names bound by the built kernel's tensor shapes (``A: T.Tensor((M, K))`` → ``M``, ``K``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return {}
    shapes: dict[str, list[str | None]] = {}
    for node in ast.walk(tree):
        target, call = None, None
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, call = node.target.id, node.annotation
        elif isinstance(node, ast.arg) and node.annotation is not None:
            target, call = node.arg, node.annotation
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, call = node.targets[0].id, node.value
        if isinstance(call, ast.Subscript):  # T.Tensor[(M, K), dtype]: the shape is the first item
            index = call.slice
            first = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if isinstance(index, ast.Tuple) and not isinstance(first, ast.Tuple | ast.List):
                first = index  # T.Tensor[M, K]: every item is a dimension
            call = ast.Call(func=call.value, args=[first], keywords=[])
        if target and isinstance(call, ast.Call) and call.args and isinstance(call.args[0], ast.Tuple | ast.List):
            dims = call.args[0].elts
            shapes[target] = [d.id if isinstance(d, ast.Name) else None for d in dims]
    bound: dict[str, int] = {}
    for param in getattr(prim_func, "params", []):
        buffer = prim_func.buffer_map.get(param) if hasattr(prim_func, "buffer_map") else None
        if buffer is None:
            continue
        names = shapes.get(str(buffer.name), [])
        for name, extent in zip(names, buffer.shape, strict=False):
            with contextlib.suppress(TypeError, ValueError):
                if name is not None:
                    bound.setdefault(name, int(extent))
    return bound


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


def _device() -> dict[str, Any] | None:
    """The GPU the program builds for, as ``torch.cuda.get_device_properties`` sees it (a device profile);
    none under the fake device (its answers are the profile the run was given, not a device seen)."""
    cuda = getattr(sys.modules.get("torch"), "cuda", None)
    if _fake is not None:
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
    if _fake is not None:
        context["fake_device"] = _fake.short_name()
    return {**context, **_imports()}


def _imports() -> dict[str, list[str]]:
    """``{"imports": [...]}``: the program's files imported since the last line, where there are any."""
    imported = _program_files()
    return {"imports": imported} if imported else {}


_seen_modules: set[str] = set()


def _program_files() -> list[str]:
    """Files of the program's own modules (not an installed package's, not this hook's) imported since the
    last call."""
    libraries = (_TILELANG, *_library_paths(), os.path.join(os.path.dirname(os.path.abspath(__file__)), ""))
    found = []
    for name, module in list(sys.modules.items()):
        if name in _seen_modules:
            continue
        _seen_modules.add(name)
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py") and os.path.isabs(file):
            installed = f"{os.sep}site-packages{os.sep}" in file or f"{os.sep}dist-packages{os.sep}" in file
            if not installed and not file.startswith(libraries):
                found.append(file)
    return found


def _program_frame(tb: Any) -> dict[str, Any] | None:
    """The innermost frame of a traceback in the program's own code: the line a stopped run stopped at."""
    libraries = (_TILELANG, *_library_paths())
    found = None
    while tb is not None:
        name = os.path.abspath(tb.tb_frame.f_code.co_filename)
        if not name.startswith(libraries) and not os.path.basename(name).startswith(("tilescope_", "<")):
            found = {"file": name, "function": tb.tb_frame.f_code.co_name, "line": tb.tb_lineno}
        tb = tb.tb_next
    return found


def _where(func: Any) -> tuple[str | None, int | None]:
    with contextlib.suppress(TypeError, OSError):
        return os.path.abspath(inspect.getsourcefile(func) or ""), inspect.getsourcelines(func)[1]
    return None, None


def _library_paths() -> tuple[str, ...]:
    import sysconfig

    paths = {sysconfig.get_paths().get(k, "") for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(os.path.join(os.path.abspath(p), "") for p in paths if p)


def _called_at(frame: Any) -> dict[str, Any] | None:
    """The first frame at or above ``frame`` in the program's own code (not TileLang, a library or this hook):
    where the program asked for the kernel, for "from a dry run of main(), line 212"."""
    libraries = (_TILELANG, *_library_paths())
    while frame is not None:
        name = os.path.abspath(frame.f_code.co_filename)
        if not name.startswith(libraries) and name != os.path.abspath(__file__) and not name.startswith("<"):
            function = frame.f_code.co_name
            if function.startswith("<") and function != "<module>":  # a lambda: the function that wrote it
                function = getattr(frame.f_code, "co_qualname", function).rsplit(".<locals>.", 1)[0]
            return {"file": name, "function": function, "line": frame.f_lineno}
        frame = frame.f_back
    return None


def _arguments(given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """Each argument as a rebuildable value, a tensor's shape and dtype, or why it has no recorded form."""
    values: dict[str, Any] = {}
    tensors: dict[str, Any] = {}
    unrecorded: dict[str, str] = {}
    for name, value in given.items():
        described = _tensor(value)
        if described is not None:
            tensors[name] = described
            continue
        try:
            values[name] = _values.encode(value)
        except _values.Unrecordable as why:
            unrecorded[name] = str(why)
    return values, tensors, unrecorded


def _record_jit(
    impl: Any, args: tuple[Any, ...], kwargs: dict[str, Any], prim_func: Any, error: str | None = None
) -> None:
    jit_func = impl.func
    func = getattr(jit_func, "orig_func", jit_func)
    file, line = _where(func)
    names: list[str] = []
    with contextlib.suppress(TypeError, ValueError):
        names = list(inspect.signature(func).parameters)
    given = {**dict(zip(names, args, strict=False)), **kwargs}  # T.const values may come as keywords too
    values, tensors, unrecorded = _arguments(given)
    configs = {str(getattr(k, "value", k)): _plain(v) for k, v in (impl.pass_configs or {}).items()}
    out_idx = impl.out_idx
    _write(
        {
            "event": "instance",
            "file": file,
            "line": line,
            "kernel": getattr(func, "__name__", None),
            "style": "jit",
            "args": values,
            "consts": _consts(func, prim_func) if prim_func is not None else {},
            "tensors": tensors,
            "unrecorded": unrecorded,
            "pass_configs": configs,
            "target": _plain(impl.target) if impl.target is not None else None,
            "out_idx": [out_idx] if isinstance(out_idx, int) else (list(out_idx) if out_idx else None),
            "error": error,
            "device": _device(),
            "called_at": _called_at(sys._getframe(2)),
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
    values, _, unrecorded = _arguments({n: frame.f_locals.get(n) for n in names})
    return {"kernel": name, "line": code.co_firstlineno, "args": values, "unrecorded": unrecorded}


_built: dict[int, int] = {}
"""``id`` of each PrimFunc a factory built, to the number of its instance line (``compiled`` names it)."""
_instances = itertools.count(1)


def _record_factory() -> int | None:
    """``T.prim_func`` applied inside a function: that function is a factory; record its arguments.

    The line's number in this process (``seq``), or ``None`` when nothing was recorded."""
    frame = sys._getframe(2)
    code = frame.f_code
    if code.co_name == "<module>" or getattr(_state, "in_jit", False) or code.co_filename.startswith(_TILELANG):
        return None
    count = code.co_argcount + code.co_kwonlyargcount
    names = code.co_varnames[:count]
    values, tensors, unrecorded = _arguments({n: frame.f_locals.get(n) for n in names})
    seq = next(_instances)
    _write(
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
            "called_at": _called_at(frame.f_back),
            **_run_context(),
        }
    )
    return seq


def compiled(prim_func: Any, target: Any, pass_configs: Any) -> None:
    """A stand-in ``tilelang.compile`` of a factory's PrimFunc: the target and ``pass_configs`` it was
    compiled with, for the instance line it names (``seq``); they are part of the build."""
    seq = _built.get(id(prim_func))
    if seq is None:
        return
    configs = {str(getattr(k, "value", k)): _plain(v) for k, v in dict(pass_configs or {}).items()}
    _write({"event": "compile", "seq": seq, "target": _plain(target), "pass_configs": configs})


_TILELANG = os.path.join(os.sep, "nonexistent", "")


def _recorded(function: Any) -> bool:
    """Whether this hook wrapped ``function`` already (a module imported again keeps its wrapper)."""
    return getattr(function, "__tilescope_recorded__", False)


def _install(owner: Any, name: str, wrapper: Any) -> None:
    wrapper.__tilescope_recorded__ = True
    setattr(owner, name, wrapper)


@contextlib.contextmanager
def _jit_call(jit: Any, args: Any, kwargs: Any) -> Iterator[None]:
    """Inside a ``JITImpl`` call: what builds is this instance's; when the call raises (a build that
    needs a GPU, or a function whose first call fails), its arguments are still recorded."""
    _state.in_jit = True
    try:
        yield
    except Exception as err:
        with contextlib.suppress(Exception):
            _record_jit(jit, args, kwargs, None, f"{type(err).__name__}: {err}"[:300])
        raise
    finally:
        _state.in_jit = False


def _patch_language(module: Any) -> None:
    global _TILELANG
    root = os.path.abspath(module.__file__)
    for _ in range(module.__name__.count(".") + 1):  # tilelang/language/__init__.py, tilelang/ascend/language/...
        root = os.path.dirname(root)
    _TILELANG = root
    original = module.prim_func
    if _recorded(original):
        return

    def prim_func(*args: Any, **kwargs: Any) -> Any:
        seq = None
        with contextlib.suppress(Exception):
            seq = _record_factory()
        built = original(*args, **kwargs)
        if seq is not None:
            _built[id(built)] = seq
        return built

    prim_func.__wrapped__ = original
    _install(module, "prim_func", prim_func)


def _wrap_method(owner: str, method: str, wrapper: Callable[[Any], Any]) -> Callable[[Any], None]:
    """The patch of a module that replaces ``<owner>.<method>`` by ``wrapper(original)``, once."""

    def patch(module: Any) -> None:
        cls = getattr(module, owner, None)
        original = getattr(cls, method, None)
        if original is None or _recorded(original):
            return
        _install(cls, method, wrapper(original))

    return patch


def _both(*patches: Any) -> Any:
    def patch(module: Any) -> None:
        for each in patches:
            with contextlib.suppress(Exception):
                each(module)

    return patch


def _jit_get_tir(original: Any) -> Any:
    def get_tir(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _jit_call(self, args, kwargs):
            prim_func = original(self, *args, **kwargs)
        with contextlib.suppress(Exception):
            _record_jit(self, args, kwargs, prim_func)
        return prim_func

    return get_tir


def _jit_infer_mode(original: Any) -> Any:
    """It calls the function once to see whether it returns a PrimFunc: not an instance."""

    def infer_mode(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _jit_call(self, args, kwargs):
            return original(self, *args, **kwargs)

    return infer_mode


def _tuner_run(original: Any) -> Any:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        with contextlib.suppress(Exception):
            func = getattr(self, "fn", None) or getattr(self, "jit_impl", None)
            func = getattr(getattr(func, "func", func), "orig_func", func)
            file, line = _where(func) if func is not None else (None, None)
            config = getattr(result, "config", None)
            _write(
                {
                    "event": "autotune",
                    "file": file,
                    "line": line,
                    "kernel": getattr(func, "__name__", None),
                    "config": {k: _plain(v) for k, v in dict(config or {}).items()},
                }
            )
        return result

    return run


def _on_cpu(value: Any) -> bool:
    return "cuda" in str(value).lower() or (isinstance(value, int) and not isinstance(value, bool))


def _patch_torch(torch: Any) -> None:
    """GPU tensors made on the CPU, for ``TILESCOPE_RECORD_CPU_TENSORS``: shapes are what a recording needs."""

    def factory(original: Any) -> Any:
        def make(*args: Any, **kwargs: Any) -> Any:
            if _on_cpu(kwargs.get("device")):
                kwargs.pop("device")
            return original(*args, **kwargs)

        return make

    for name in ("randn", "rand", "randint", "empty", "zeros", "ones", "full", "tensor", "arange", "randperm"):
        if hasattr(torch, name):
            setattr(torch, name, factory(getattr(torch, name)))
    to = torch.Tensor.to

    def moved(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _on_cpu(kwargs.get("device")):
            kwargs.pop("device")
        args = tuple(a for a in args if not (isinstance(a, str | torch.device) and _on_cpu(a)))
        return to(self, *args, **kwargs) if args or kwargs else self

    torch.Tensor.to = moved
    torch.Tensor.cuda = lambda self, *args, **kwargs: self


_PATCHES: dict[str, Callable[[Any], None]] = {
    "tilelang.language": _patch_language,
    "tilelang.ascend.language": _patch_language,  # the Ascend dialect re-exports the common prim_func
    "tilelang.jit": _both(
        _wrap_method("JITImpl", "get_tir", _jit_get_tir), _wrap_method("JITImpl", "_infer_jit_mode", _jit_infer_mode)
    ),
    "tilelang.autotuner.tuner": _wrap_method("AutoTuner", "run", _tuner_run),
}
_fake: Any = None
if os.environ.get("TILESCOPE_FAKE_DEVICE"):  # the dry run, and record on a machine without a GPU
    import tilescope_fake_device as _fake  # pyright: ignore[reportMissingImports]  # put on the path by record.py

    _PATCHES["torch"] = _fake.patch_torch
    _PATCHES["tilelang.carver.arch.driver"] = _fake.patch_driver
    _PATCHES["tilelang.carver.arch.driver.cuda_driver"] = _fake.patch_driver
    _PATCHES["tilelang.backend.target"] = _fake.patch_target
    _PATCHES["tilelang.contrib.nvcc"] = _fake.patch_nvcc
elif os.environ.get("TILESCOPE_RECORD_CPU_TENSORS") == "1":
    _PATCHES["torch"] = _patch_torch
if os.environ.get("TILESCOPE_RECORD_STAND_IN") == "1":  # see that module
    import tilescope_dry_run_standin as _standin  # pyright: ignore[reportMissingImports]  # put on the path by record.py

    _PATCHES["tilelang.jit"] = _both(_PATCHES["tilelang.jit"], _standin.patch_compile)
    _PATCHES["tilelang.profiler"] = _standin.patch_profiler
    _PATCHES["torch"] = _both(_PATCHES.get("torch", _patch_torch), _standin.patch_torch)


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
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    quoted = [line for line in lines if not line.startswith("#")]
    fatal = [line for line in quoted if _FATAL.search(line)]
    errors = [line for line in quoted if _ERROR.search(line) and not line.endswith(":")]
    return (fatal or errors or lines or [""])[0]


def _excepthook(kind: type[BaseException], err: BaseException, tb: Any) -> None:
    _ended.append(f"{kind.__name__}: {cause(str(err))}"[:500])
    at = _program_frame(tb)
    trace = "".join(traceback.format_tb(tb))[-2000:]
    _write({"event": "exit", "error": _ended[-1], "at": at, "traceback": trace, **_imports()})
    _previous_hook(kind, err, tb)


def _at_exit() -> None:
    if not _ended:
        _write({"event": "exit", "error": None, **_imports()})


def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """A test that failed (under ``PYTEST_PLUGINS``): which, why and at which of the program's lines,
    since pytest catches what would otherwise end the program; the run goes on to the next test."""
    excinfo = getattr(call, "excinfo", None)
    if excinfo is None or call.when != "call" or excinfo.typename in ("Skipped", "XFailed"):
        return
    error = f"{excinfo.type.__name__}: {cause(str(excinfo.value))}"[:500]
    _write({"event": "test-failed", "test": item.nodeid, "error": error, "at": _program_frame(excinfo.tb)})


def install() -> None:
    if not _OUT:
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
