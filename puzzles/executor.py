"""The process that compiles and runs kernels; it runs no learner Python.

It receives PrimFuncs as TVM JSON (built elsewhere), compiles them with the real TileLang (or, for
``device="interpret"``, translates them for the core's tile interpreter), and runs them on tensors
the grader lent it (``buffers``): upload, launch, synchronise, write every byte back. It reports only
what it did: the raw CUDA-event times when asked to time, the interpreter's access findings after an
interpreted run; the grader judges everything from its own buffers. Kept warm between checks,
restarted after any failure.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tilescope.puzzles.children import reply_channel
from tilescope.puzzles.protocol import (
    Compiled,
    CompileFailed,
    CompileRequest,
    ExecutorReady,
    Ran,
    RunCaseRequest,
    RunFailed,
    Timed,
    TimeRequest,
)


def _send(replies: IO[str], message: Mapping[str, Any]) -> None:
    import json

    replies.write(json.dumps(message) + "\n")
    replies.flush()


class Executor:
    def __init__(self) -> None:
        self.kernels: dict[str, Any] = {}
        self.resident: dict[str, list[Any]] = {}
        self._scratch: Any = None

    def _dirty(self) -> None:
        """Leave random values in every SM's registers and shared memory, as a busy GPU would, so that a
        kernel reading what it never wrote (an accumulator never cleared) reads garbage, not zeros."""
        import torch

        if self._scratch is None:
            gen = torch.Generator(device="cuda").manual_seed(1)
            self._scratch = torch.randn(4096, 4096, device="cuda", dtype=torch.float16, generator=gen)
        torch.matmul(self._scratch, self._scratch)

    def compile(self, request: CompileRequest) -> Compiled | CompileFailed:
        from tilescope.core.model import to_json
        from tilescope.puzzles import runner
        from tvm import ir

        path = str(request["path"])
        source = str(request["source"]) if "source" in request else Path(path).read_text()
        try:
            if "prim_func" in request:
                func = ir.load_json(request["prim_func"])
            else:  # the puzzle's own content (a baseline to time against, verified by the grader), never a learner's
                func = runner.build(path, source, dict(request.get("args", {})))
        except runner.CompileFailure as failure:
            return {"op": "compile-error", "diagnostic": to_json(failure.diagnostic)}
        except Exception as err:
            return {"op": "compile-error", "diagnostic": None, "message": f"not a kernel: {type(err).__name__}"}
        scopes = runner.storage_scopes(func)
        params = [{"name": p.name, "shape": list(p.shape), "dtype": p.dtype} for p in runner.params(func)]
        if request["device"] == "interpret":
            return self._translate(request["key"], func, path, params, scopes)
        flags = ["-lineinfo"] if request.get("lineinfo") else None
        try:
            kernel = runner.compile_kernel(func, path, source, flags)
        except runner.CompileFailure as failure:
            return {"op": "compile-error", "diagnostic": to_json(failure.diagnostic)}
        self.kernels[request["key"]] = kernel
        self.resident.clear()
        return {"op": "compiled", "key": request["key"], "params": params, "scopes": scopes}

    def _translate(
        self, key: str, func: Any, path: str, params: list[dict[str, Any]], scopes: list[str]
    ) -> Compiled | CompileFailed:
        """Translate for the tile interpreter; what it cannot run exactly is a compile error with its line."""
        from tilescope.core.interpret import NotInterpretable, compile_kernel
        from tilescope.core.model import Diagnostic, Span, to_json

        try:
            self.kernels[key] = compile_kernel(func, path)
        except NotInterpretable as err:
            diagnostic = Diagnostic("error", str(err), Span(max(err.line, 1)), "not-interpretable")
            return {"op": "compile-error", "diagnostic": to_json(diagnostic)}
        except Exception as err:
            return {"op": "compile-error", "diagnostic": None, "message": f"not a kernel: {type(err).__name__}: {err}"}
        self.resident.clear()
        return {"op": "compiled", "key": key, "params": params, "scopes": scopes}

    def run(self, request: RunCaseRequest) -> Ran | RunFailed:
        import torch
        from tilescope.core.errors import first_message
        from tilescope.puzzles.buffers import open_lent

        kernel = self.kernels[request["key"]]
        if request["device"] == "interpret":
            return self._interpret(request, kernel)
        lent = [open_lent(spec, "cuda") for spec in request["buffers"]]
        try:
            if request.get("dirty", True):
                self._dirty()
            kernel(*(body for _, _, body in lent))
            torch.cuda.synchronize()
        except Exception as err:
            return {"op": "run-error", "message": first_message(err)}
        for host, whole, _ in lent:
            host.copy_(whole)
        self.resident = {request["key"]: lent}
        return {"op": "ran"}

    def _interpret(self, request: RunCaseRequest, kernel: Any) -> Ran | RunFailed:
        """One interpreted launch on the lent files themselves; out-of-bounds stores are not made but
        reported, with every other access finding, for the grader to judge."""
        from tilescope.core.errors import first_message
        from tilescope.core.model import to_json
        from tilescope.puzzles.buffers import open_lent

        bodies = [open_lent(spec, "cpu")[2] for spec in request["buffers"]]
        try:
            run = kernel(*bodies, outputs={str(n) for n in request.get("outputs", [])})
        except Exception as err:
            return {"op": "run-error", "message": first_message(err)}
        return {"op": "ran", "findings": [to_json(f) for f in run.findings]}

    def time(self, request: TimeRequest) -> Timed | RunFailed:
        from tilescope.puzzles.timing import time_cuda_runs

        lent = self.resident.get(request["key"])
        if lent is None:
            return {"op": "run-error", "message": "timing asked for before a checked run"}
        kernel = self.kernels[request["key"]]
        bodies = [body for _, _, body in lent]
        times = time_cuda_runs(lambda: kernel(*bodies), warmup=int(request["warmup"]), runs=int(request["runs"]))
        return {"op": "timed", "times_us": times}

    def time_torch(self, request: TimeRequest) -> Timed | RunFailed:
        """The puzzle's torch baseline (an expression the grader read from the puzzle's own content), timed
        on the same lent tensors as the kernel just timed, with the same flush and runs."""
        from tilescope.puzzles.timing import time_torch_runs

        lent = self.resident.get(request["key"])
        if lent is None:
            return {"op": "run-error", "message": "timing asked for before a checked run"}
        bodies = [body for _, _, body in lent]
        try:
            times = time_torch_runs(request.get("expr", ""), bodies, request["warmup"], request["runs"])
        except Exception as err:
            return {"op": "run-error", "message": f"the torch baseline failed: {type(err).__name__}: {err}"}
        return {"op": "timed", "times_us": times}


def hello() -> ExecutorReady:
    import torch

    cuda = torch.cuda.is_available()
    name = torch.cuda.get_device_name() if cuda else "cpu"
    return {"op": "ready", "cuda": cuda, "gpu": name, "torch": torch.__version__}


def _warm_interpreter() -> None:
    """Translate one tiny kernel for the tile interpreter: the first translation sets TileLang's lowering up
    (seconds on a busy machine), which is this process's start, not the first check's time."""
    import tilelang.language as T
    from tilescope.core.interpret import compile_kernel

    @T.prim_func
    def copy(A: T.Tensor[(32,), T.float32], B: T.Tensor[(32,), T.float32]):
        with T.Kernel(1, threads=32):
            for i in T.Parallel(32):
                B[i] = A[i]

    compile_kernel(copy, __file__)


def main() -> None:
    import contextlib
    import json

    replies = reply_channel()
    # Imported before the first request, while the grader waits: a check's limit is its file's time, and
    # these imports are the process's own start.
    import tilelang  # noqa: F401
    from tilescope.core import interpret  # noqa: F401
    from tilescope.puzzles import buffers, runner, timing  # noqa: F401

    greeting = hello()
    if not greeting["cuda"]:
        with contextlib.suppress(Exception):  # a set-up that fails shows in the first real translation instead
            _warm_interpreter()
    _send(replies, greeting)
    executor = Executor()
    handlers = {
        "compile": executor.compile,
        "run": executor.run,
        "time": executor.time,
        "time-torch": executor.time_torch,
    }
    for line in sys.stdin:
        request = json.loads(line)
        reply = handlers[request["op"]](request)
        _send(replies, {"id": request["id"], **reply})


if __name__ == "__main__":
    main()
