"""The record hook's patches of TileLang (and torch): ``T.prim_func`` (a factory building a kernel),
``JITImpl.get_tir`` (``@tilelang.jit``), the autotuner's result, and GPU tensors made on the CPU. Each
wraps the original once and writes its line through ``hook_lines``. Part of the record hook, copied
beside it (``tilescope_hook_patches``): it must import nothing of Tilescope.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

try:
    # Written beside the hook at run time, so the checker cannot resolve them.
    import tilescope_hook_arguments as arguments  # pyright: ignore[reportMissingImports]
    import tilescope_hook_lines as lines  # pyright: ignore[reportMissingImports]
    import tilescope_hook_program as program  # pyright: ignore[reportMissingImports]
except ImportError:  # imported from the package rather than beside ``sitecustomize``
    from tilescope.core.record import hook_arguments as arguments
    from tilescope.core.record import hook_lines as lines
    from tilescope.core.record import hook_program as program


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
    lines.state.in_jit = True
    try:
        yield
    except Exception as err:
        with contextlib.suppress(Exception):
            lines.record_jit(jit, args, kwargs, None, f"{type(err).__name__}: {err}"[:300])
        raise
    finally:
        lines.state.in_jit = False


def patch_language(module: Any) -> None:
    """``T.prim_func`` of ``module`` (``tilelang.language``, or the Ascend dialect, which re-exports it):
    applied inside a function, it records that factory's instance."""
    program.found_tilelang(module)
    original = module.prim_func
    if _recorded(original):
        return

    def prim_func(*args: Any, **kwargs: Any) -> Any:
        seq = None
        with contextlib.suppress(Exception):
            seq = lines.record_factory()
        built = original(*args, **kwargs)
        if seq is not None:
            lines.built_by(built, seq)
        return built

    prim_func.__wrapped__ = original
    _install(module, "prim_func", prim_func)


def wrap_method(owner: str, method: str, wrapper: Callable[[Any], Any]) -> Callable[[Any], None]:
    """The patch of a module that replaces ``<owner>.<method>`` by ``wrapper(original)``, once."""

    def patch(module: Any) -> None:
        cls = getattr(module, owner, None)
        original = getattr(cls, method, None)
        if original is None or _recorded(original):
            return
        _install(cls, method, wrapper(original))

    return patch


def both(*patches: Any) -> Any:
    """One patch that applies each of ``patches``; one that fails leaves the others."""

    def patch(module: Any) -> None:
        for each in patches:
            with contextlib.suppress(Exception):
                each(module)

    return patch


def jit_get_tir(original: Any) -> Any:
    def get_tir(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _jit_call(self, args, kwargs):
            prim_func = original(self, *args, **kwargs)
        with contextlib.suppress(Exception):
            lines.record_jit(self, args, kwargs, prim_func)
        return prim_func

    return get_tir


def template_get_tir(original: Any) -> Any:
    """An eager kernel's second phase (``TirTemplate.get_tir``): the ``T.const`` values TileLang read from
    the tensors passed, by the template's own matcher (``q_shape = [batch, 1, heads, dim]``,
    ``KH = K``: the names a source reading cannot follow), for the instance line ``jit_get_tir`` writes."""

    def get_tir(self: Any, tensor_args: Any, given_tensor_args: Any, kwargs: Any) -> Any:
        prim_func = original(self, tensor_args, given_tensor_args, kwargs)
        with contextlib.suppress(Exception):
            if not self.is_lazy_style and self.matcher:
                found = self._parse_phase2_key(**given_tensor_args, **kwargs)
                lines.state.consts = {
                    str(getattr(var, "orig_name", var)): int(value)
                    for var, value in zip(self.matcher, found, strict=True)
                }
        return prim_func

    return get_tir


def jit_infer_mode(original: Any) -> Any:
    """It calls the function once to see whether it returns a PrimFunc: not an instance."""

    def infer_mode(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _jit_call(self, args, kwargs):
            return original(self, *args, **kwargs)

    return infer_mode


def tuner_run(original: Any) -> Any:
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        with contextlib.suppress(Exception):
            func = getattr(self, "fn", None) or getattr(self, "jit_impl", None)
            func = getattr(getattr(func, "func", func), "orig_func", func)
            file, line = program.where(func) if func is not None else (None, None)
            config = getattr(result, "config", None)
            lines.write(
                {
                    "event": "autotune",
                    "file": file,
                    "line": line,
                    "kernel": getattr(func, "__name__", None),
                    "config": {k: arguments.plain(v) for k, v in dict(config or {}).items()},
                }
            )
        return result

    return run


def _on_cpu(value: Any) -> bool:
    return "cuda" in str(value).lower() or (isinstance(value, int) and not isinstance(value, bool))


def patch_torch(torch: Any) -> None:
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
