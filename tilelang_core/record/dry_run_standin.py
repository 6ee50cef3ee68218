"""Stand-in compiled kernels for the dry run: a program runs on the CPU to the kernels it builds later.

The dry run (``dry_run.py``) and ``tilescope record`` on a machine without a GPU set
``TILESCOPE_RECORD_STAND_IN=1`` with the fake device (``fake_device.py``); the corpus ground truth
(``benchmarks/corpus_truth.py``) sets it with ``TILESCOPE_RECORD_CPU_TENSORS=1``. ``tilelang.compile``
then returns a ``StandIn`` instead of compiling. Called, it returns zero tensors of the shapes and
dtypes of the kernel's outputs (``out_idx``; symbolic extents read off the tensors passed in), on
its inputs' device (shape-only on the fake one); its profiler checks nothing and times nothing;
``torch.testing.assert_close`` and TileLang's ``do_bench`` are made no-ops (the latter calls its
function once). So the results a program checks are not real: what the dry run is after is which
kernels the program builds, with what arguments. Nothing runs on a GPU and nothing is timed.

Copied next to the record hook (``tilescope_dry_run_standin``); it must import nothing of Tilescope.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

_FP8 = {"float8_e4m3": "float8_e4m3fn", "float8_e5m2": "float8_e5m2", "float8_e4m3fnuz": "float8_e4m3fnuz"}


def _torch_dtype(torch: Any, name: str) -> Any:
    name = _FP8.get(name, name)
    found = getattr(torch, name, None)
    return found if isinstance(found, torch.dtype) else torch.float32


class _Profiler:
    """``kernel.get_profiler()``: runs nothing, checks nothing."""

    def assert_allclose(self, *args: Any, **kwargs: Any) -> None:
        return None

    def do_bench(self, *args: Any, **kwargs: Any) -> float:
        return 1.0

    def run_once(self, *args: Any, **kwargs: Any) -> None:
        return None


class StandIn:
    """What ``tilelang.compile`` returns in a dry run."""

    def __init__(self, prim_func: Any, out_idx: Any) -> None:
        self.prim_func = prim_func
        attrs = getattr(prim_func, "attrs", None)
        if out_idx is None and attrs is not None and "tilelang_out_idx" in attrs:  # eager: its T.empty outputs
            out_idx = [int(i) for i in attrs["tilelang_out_idx"]]
        self.out_idx = [out_idx] if isinstance(out_idx, int) else list(out_idx or [])

    def get_profiler(self, *args: Any, **kwargs: Any) -> _Profiler:
        return _Profiler()

    def get_kernel_source(self, *args: Any, **kwargs: Any) -> str:
        return ""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        import torch
        from tvm import tirx

        func = self.prim_func
        params = list(func.params)
        outputs = sorted({i % len(params) for i in self.out_idx}) if params else []
        inputs = [p for i, p in enumerate(params) if i not in outputs]
        sizes: dict[str, int] = {}
        device = next((t.device for t in args if isinstance(t, torch.Tensor)), None)  # the fake device's: shape-only
        for param, tensor in zip(inputs, args, strict=False):
            buffer = func.buffer_map.get(param)
            shape = getattr(tensor, "shape", None)
            if buffer is None or shape is None:
                continue
            for dim, extent in zip(buffer.shape, shape, strict=False):
                if isinstance(dim, tirx.Var):
                    sizes[str(dim.name)] = int(extent)
        made = []
        for index in outputs:
            buffer = func.buffer_map[params[index]]
            shape = []
            for dim in buffer.shape:
                if isinstance(dim, tirx.IntImm | int):
                    shape.append(int(dim))
                else:
                    shape.append(sizes.get(str(getattr(dim, "name", dim)), 1))
            # On the fake device an output is shape-only (``empty``): what a kernel would compute is not known,
            # and a size read back from it would be made up.
            make = torch.zeros if device is None or str(device) == "cpu" else torch.empty
            made.append(make(shape, dtype=_torch_dtype(torch, str(buffer.dtype)), device=device))
        if not made:
            return None
        return made[0] if len(made) == 1 else made


def patch_compile(module: Any) -> None:
    """``compile`` of ``tilelang.jit`` (which ``@tilelang.jit`` calls) and of ``tilelang``."""
    if getattr(getattr(module, "compile", None), "__tilescope_standin__", False):
        return

    def compile(func: Any = None, out_idx: Any = None, *args: Any, **kwargs: Any) -> StandIn:
        hook = sys.modules.get("tilescope_hook_lines")
        if hook is not None and func is not None:  # the target and pass_configs belong to the instance
            with contextlib.suppress(Exception):
                hook.compiled(func, kwargs.get("target", "auto"), kwargs.get("pass_configs"))
        return StandIn(func, out_idx)

    compile.__tilescope_standin__ = True
    module.compile = compile


def patch_profiler(module: Any) -> None:
    """TileLang's ``do_bench(fn)``: calls ``fn`` once (it may build kernels) and times nothing."""

    def do_bench(fn: Any = None, *args: Any, **kwargs: Any) -> float:
        if callable(fn):
            fn()
        return 1.0

    module.do_bench = do_bench


def patch_torch(torch: Any) -> None:
    """Result checks pass; CUDA synchronisation is a no-op on the CPU."""
    with contextlib.suppress(Exception):
        torch.testing.assert_close = lambda *args, **kwargs: None
    with contextlib.suppress(Exception):
        torch.cuda.synchronize = lambda *args, **kwargs: None
