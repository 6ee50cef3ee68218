"""What a child of the zygote answers: the ``Worker`` made once in the zygote, with TileLang imported
and warmed on kernels of Tilescope's own, so the children it forks start warm.

Runs in the worker (the zygote builds it; a forked child calls it). ``Worker.handle`` is the one
dispatch over the protocol's operations (``analyze``, ``pass_ir``, ``run``, ``profile``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
from collections.abc import Callable
from typing import Any

from tilescope.core.model import from_json, to_json
from tilescope.core.protocol import AnalyzeRequest, PassIRRequest, ProfileRequest, RunRequest, WorkerRequest

WARM_UP_PATH = "<tilescope-warm-up>"
WARM_UP_SOURCE = """
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def warm_up(M=256, N=256, K=256, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            B_shared = T.alloc_shared((block_K, block_N), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main
"""
"""Tilescope's own kernel, analysed once in the zygote so each child starts with TileLang's lazy state warm."""
ASCEND_WARM_UP_PATH = "<tilescope-ascend-warm-up>"
ASCEND_WARM_UP_SOURCE = """
import tilelang.ascend.language as T


def ascend_warm_up(M=128, N=128, K=128, block=64):
    @T.prim_func
    def main(A: T.Tensor((M, K), "bfloat16"), B: T.Tensor((N, K), "bfloat16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(4) as bx:
            A_l1 = T.alloc_l1((block, block), "bfloat16")
            B_l1 = T.alloc_l1((block, block), "bfloat16")
            C_l0c = T.alloc_l0c((block, block), "float32")
            C_ub = T.alloc_shared((block // 2, block), "float32")
            m, n = bx // 2 * block, bx % 2 * block
            for k in T.Pipelined(K // block, num_stages=2):
                T.copy(A[m, k * block], A_l1)
                T.copy(B[n, k * block], B_l1)
                T.gemm(A_l1, B_l1, C_l0c, transpose_B=True, clear_accum=(k == 0))
            T.dual_copy(C_l0c, C_ub)
            with T.SimtVF(threads=64):
                for i, j in T.Parallel(block // 2, block):
                    C_ub[i, j] = T.max(C_ub[i, j], 0)
            T.dual_copy(C_ub, C[m : m + block, n : n + block])

    return main


ascend_warm_up()
"""
"""An Ascend kernel of Tilescope's own (Cube, Vector, a SimtVF region), analysed once in the zygote where the
release has the Ascend backend: each child then starts with its modules imported and its passes warm."""


def _prime_native_errors() -> None:
    """Raise one error from TVM's C++ side in the zygote. The first native error of a process loads the
    symbols for its backtrace (1-2 s on this kind of machine); a child forked afterwards finds them loaded,
    so a kernel that TileLang rejects (most kernels being typed) is answered without that second."""
    import tvm

    with contextlib.suppress(Exception):
        tvm.target.Target("tilescope-no-such-target-kind")


def _import_interpreter() -> None:
    """Import the hazard check's interpreter and the numpy parts it uses on first use (0.1-0.2 s). Not before
    the zygote is ready: an editor's first file is sent its model before the check runs, so the first child
    imports them after that, and later children find them imported."""
    import numpy.ma
    import numpy.random  # noqa: F401
    from tilescope.core.interpret.hazards import check  # noqa: F401

    with contextlib.suppress(ImportError):  # a release older than what the interpreter reads (0.1.12 and
        # before): its hazard check says "not interpreted" itself
        importlib.import_module("tilescope.core.interpret.launch")


def _import_testing() -> None:
    """Import ``tilelang.testing`` (and the pytest it imports) in the zygote: most of TileLang's examples and
    many kernel files import it, and a child importing it itself pays about 0.25 s of every analysis. It is
    TileLang's own module, as trusted as TileLang; nothing of the user's runs here."""
    with contextlib.suppress(Exception):
        importlib.import_module("tilelang.testing")


class Worker:
    """The requests a child answers; made once in the zygote, so every child starts with the imports done."""

    def __init__(self) -> None:
        # What a child's analysis imports up to the model it sends ahead of the hazard check (TileLang itself:
        # most of the start-up cost), once, here; the interpreter the check needs is the first warm-up step.
        import tilelang  # noqa: F401
        from tilescope.core.compiler.discovery import Instantiation, instantiations
        from tilescope.core.worker import analysis, autotune, ir_text

        autotune.guard()

        self._analysis = analysis
        self._ir_text = ir_text
        self._instantiation = Instantiation
        self._runs: dict[str, dict[str, Any]] = {}
        """A child's lowerings by request key, for ``pass_ir`` (it analyses first, then prints one pass)."""
        self._instantiations = instantiations
        self._warm_steps: list[Callable[[], None]] = [
            _import_interpreter,
            functools.partial(self._warm_on, WARM_UP_PATH, WARM_UP_SOURCE, 0.2),
            _prime_native_errors,
            _import_testing,
        ]
        if importlib.util.find_spec("tilelang.ascend") is not None:
            self._warm_steps.insert(1, functools.partial(self._warm_on, ASCEND_WARM_UP_PATH, ASCEND_WARM_UP_SOURCE, 0))

    def warm(self, waiting: Callable[[], bool]) -> None:
        """Take the warm-up steps not yet taken, one at a time, while no request is ``waiting``.

        What a child imports up to the model it sends ahead of its hazard check is imported before the zygote
        says it is ready (``__init__``: a child importing it itself would pay for each file it reads, many times
        over while user code keeps a thread spinning for the lock). The steps come after, the interpreter's
        imports first: a request already waiting (an editor's first file) is answered first, and they follow
        between requests. A warm-up analysis costs a
        third of a second and saves a child about a twentieth, so the first answer does not wait for it. Each
        step only makes later children faster; none changes an answer."""
        while self._warm_steps and not waiting():
            self._warm_steps.pop(0)()

    def skip_warm_up(self) -> None:
        """Take no warm-up steps: the worker answers one check and is ended (``protocol.COLD_VARIABLE``)."""
        self._warm_steps.clear()

    def _warm_on(self, path: str, source: str, hazards_s: float) -> None:
        """Analyse one of Tilescope's own kernels in the zygote (``hazards_s``: its hazard check's budget)."""
        found = self._instantiations(source, path)
        self._analysis.analyze_file(path, source, found, hazards_s=hazards_s)

    @staticmethod
    def key(request: AnalyzeRequest | PassIRRequest) -> str:
        """What a lowering depends on; the instantiations carry recorded values, so a re-recording misses."""
        parts = [
            request["path"],
            request["source"],
            request["target"],
            request["args"] or {},
            request["instantiations"],
        ]
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()

    def analyze(
        self, request: AnalyzeRequest, on_phase: Any = None, on_partial: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Build and lower the instantiations the parent computed; the worker never re-runs discovery. A request
        that asks for it (``stream``) has its analysis so far sent through ``on_partial`` before each hazard
        check."""
        found = [from_json(self._instantiation, i) for i in request["instantiations"]]
        streamed = on_partial if request.get("stream") else None
        result, runs = self._analysis.analyze_file(
            request["path"],
            request["source"],
            found,
            target=request["target"],
            args=request["args"],
            with_ptxas=request["ptxas"],
            hazards_s=float(request.get("hazards_s", 0.0)),
            on_phase=on_phase,
            on_partial=None if streamed is None else lambda partial: streamed(to_json(partial)),
        )
        self._runs[self.key(request)] = runs
        return to_json(result)

    def pass_ir(self, request: PassIRRequest) -> dict[str, Any]:
        kernel = request["kernel"]
        self.analyze(
            {
                "op": "analyze",
                "path": request["path"],
                "source": request["source"],
                "target": request["target"],
                "kernel": kernel,
                "instantiations": request["instantiations"],
                "args": request["args"],
                "ptxas": False,
                "hazards_s": 0.0,
            }
        )
        run = self._runs.get(self.key(request), {}).get(kernel)
        if run is None or run.lowered is None:
            raise LookupError(f"kernel '{kernel}' did not lower, so it has no pass IR")
        lowered = run.lowered
        texts = []
        for index in request["indices"]:
            if index == -1:
                mod = lowered.initial
            elif 0 <= index < len(lowered.modules):
                mod = lowered.modules[index]
            else:
                raise IndexError(f"pass index {index} out of range (0..{len(lowered.modules) - 1})")
            texts.append(to_json(self._ir_text.render(mod, request["path"])))
        return {"texts": texts}

    def run(self, request: RunRequest) -> dict[str, Any]:
        """Interpret one kernel on the CPU (``tilescope run``)."""
        from tilescope.core.interpret.launch import run_file

        report = run_file(
            request["path"],
            request["source"],
            kernel=request["kernel"],
            args=request["args"],
            inputs=request["inputs"],
            compare=request["compare"],
            seed=request["seed"],
            choose=lambda inst: self._tuned_choice(request, inst),
        )
        return to_json(report)

    def _tuned_choice(self, request: RunRequest, inst: Any) -> Any:
        """The config the compiler tier analyses for an ``@autotune`` kernel (lowering configs until
        one fits), so ``run`` interprets the kernel ``check`` describes."""
        _, runs = self._analysis.analyze_file(request["path"], request["source"], [inst])
        run = runs.get(inst.kernel.name)
        return run.model.autotune if run is not None else None

    def profile(self, request: ProfileRequest) -> dict[str, Any]:
        """Build one kernel for this machine's GPU and time it (``tilescope profile``)."""
        from tilescope.core.worker import gpu_run

        return to_json(gpu_run.profile(request))

    def handle(
        self, request: WorkerRequest, on_phase: Any = None, on_partial: Callable[[dict[str, Any]], None] | None = None
    ) -> Any:
        if request["op"] == "run":
            return self.run(request)
        if request["op"] == "analyze":
            return self.analyze(request, on_phase, on_partial)
        if request["op"] == "pass_ir":
            return self.pass_ir(request)
        if request["op"] == "profile":
            return self.profile(request)
        raise ValueError(f"unknown request {request['op']!r}")
