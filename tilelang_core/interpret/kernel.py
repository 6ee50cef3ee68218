"""A compiled interpreter kernel: bind tensors to the PrimFunc's parameters, run, collect findings.

``compile_kernel`` translates once; the result is called like a compiled TileLang kernel, with
every tensor argument (torch CPU tensors or numpy arrays, written in place), and returns the
run's findings instead of raising for bad accesses.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from tilelang import tvm
from tilescope.core.interpret.context import Context, Frame, Stop, key
from tilescope.core.interpret.memory import Findings, Memory, NotInterpretable, np_dtype
from tilescope.core.interpret.prepare import front_end, pass_configs
from tilescope.core.interpret.stmt import compile_stmt
from tilescope.core.model import Finding

tirx = tvm.tirx


@dataclass(frozen=True)
class CpuRun:
    """What one interpreted launch found, and how long it took."""

    findings: list[Finding]
    seconds: float
    unwritten: dict[str, int]
    """Per declared output, the elements the kernel never wrote."""
    stopped: str | None = None
    """Why the run ended before its plan's last block (its time was up), else ``None``."""

    def describe(self) -> list[str]:
        """One plain line per finding."""
        return [f.describe() for f in self.findings]


def as_array(value: Any, dtype: np.dtype) -> np.ndarray:
    """A numpy view of a CPU tensor or array in ``dtype``; writes through it reach the tensor."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.view(dtype)
    import torch

    if value.device.type != "cpu":
        raise ValueError(f"the interpreter runs on CPU tensors, got one on {value.device}")
    if not value.is_contiguous():
        raise ValueError("the interpreter needs contiguous tensors")
    bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[value.element_size()]
    raw = value.numpy() if value.dtype in (torch.float16, torch.float32, torch.float64, torch.bool) else None
    if raw is None:
        raw = value.view(bits).numpy()
    return raw if raw.dtype == dtype else raw.view(dtype)


class Kernel:
    """The interpreter's form of one PrimFunc; call it with one tensor or value per parameter."""

    def __init__(
        self,
        func: Any,
        path: str | None,
        configs: dict[str, Any] | None = None,
        tile_lines: dict[frozenset[str], list[int]] | None = None,
    ) -> None:
        ctx = Context(path, safe_memory=not bool((configs or {}).get("tl.disable_safe_memory_legalize", False)))
        ctx.tile_lines = tile_lines or {}
        self.params: list[tuple[str, int, Any]] = []
        for var in func.params:
            buffer = func.buffer_map.get(var)
            if buffer is not None:
                self.params.append(("buffer", ctx.buffer_slot(buffer), buffer))
            else:
                self.params.append(("scalar", ctx.slot(var), var))
        self._shape_slots: dict[int, int] = {}
        for kind, _, obj in self.params:
            if kind == "buffer":
                for dim in obj.shape:
                    if isinstance(dim, tirx.Var):
                        self._shape_slots[key(dim)] = ctx.slot(dim)
        self._body = compile_stmt(ctx, func.body)
        self.writes = written_buffers(func)
        """Names of the buffers the kernel stores to (statements and tile regions marked for writing)."""
        self._size = len(ctx.names)
        self.grid = list(ctx.grid)
        self.threads = list(ctx.threads)

    def buffer_params(self) -> list[tuple[str, list[Any], str]]:
        """(name, shape, dtype) of every tensor parameter, in order."""
        return [(str(b.name), list(b.shape), str(b.dtype)) for kind, _, b in self.params if kind == "buffer"]

    def __call__(self, *args: Any, outputs: set[str] | None = None, tracker: Any = None, plan: Any = None) -> CpuRun:
        """Run the whole grid on ``args``; ``outputs`` names the buffers the kernel is meant to write:
        they start unwritten, and a write to any other buffer is reported as ``input-write``.
        ``tracker`` observes every access (``tilescope.core.interpret.hazards``); ``plan`` picks the blocks."""
        if len(args) != len(self.params):
            raise TypeError(f"the kernel takes {len(self.params)} arguments, got {len(args)}")
        findings = Findings()
        frame = Frame(self._size, findings)
        frame.plan = plan
        if tracker is not None:
            findings.tracker = tracker
            tracker.attach(frame)
        declared: list[Memory] = []
        for (kind, slot, obj), value in zip(self.params, args, strict=True):
            if kind == "scalar":
                frame.values[slot] = value
                continue
            name = str(obj.name)
            array = as_array(value, np_dtype(obj.dtype))
            self._bind_shape(frame, obj, array)
            is_output = outputs is not None and name in outputs
            memory = Memory(
                name,
                array,
                findings,
                scope="global",
                initialised=not is_output,
                input=not is_output,
                watch_writes=outputs is not None and not is_output,
            )
            frame.values[slot] = memory
            if is_output:
                declared.append(memory)
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        start = time.perf_counter()
        stopped = None
        try:
            with np.errstate(all="ignore"):
                self._body(frame)
        except Stop as err:
            stopped = str(err)
        finally:
            torch.set_num_threads(threads)
        seconds = time.perf_counter() - start
        unwritten = {m.name: int((~m.written).sum()) for m in declared}
        return CpuRun(findings.records(), seconds, unwritten, stopped)

    def _bind_shape(self, frame: Frame, buffer: Any, array: np.ndarray) -> None:
        if len(buffer.shape) != array.ndim:
            raise ValueError(f"{buffer.name} has {len(buffer.shape)} dimensions, the argument {array.ndim}")
        for axis, dim in enumerate(buffer.shape):
            if isinstance(dim, tirx.IntImm) and int(dim.value) != array.shape[axis]:
                raise ValueError(f"{buffer.name} has shape {list(buffer.shape)}, the argument {list(array.shape)}")
            if isinstance(dim, tirx.Var):
                frame.values[self._shape_slots[key(dim)]] = int(array.shape[axis])


def written_buffers(func: Any) -> set[str]:
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tirx.BufferStore):
            names.add(str(node.buffer.name))
        elif isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")) in ("tl.region", "tl.tileop.region"):
            access = node.args[1]
            if isinstance(access, tirx.IntImm) and int(access.value) & 2:
                names.add(str(node.args[0].buffer.name))

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return names


def compile_kernel(prim_func: Any, path: str | None = None, arch: str = "sm_90") -> Kernel:
    """Run TileLang's front end on ``prim_func`` and translate the result; ``path`` is the kernel
    file, whose lines findings name. Raises ``NotInterpretable`` (with the line) for what it cannot run."""
    return Kernel(front_end(prim_func, arch), path, pass_configs(prim_func))


__all__ = ["CpuRun", "Kernel", "NotInterpretable", "compile_kernel"]
