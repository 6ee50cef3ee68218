"""The PrimFunc the interpreter executes: TileLang's own pipeline, stopped after its front end.

The interpreter runs the IR right after ``tl.VerifyBufferInit``, the last target-independent pass
of the CUDA pipeline's front end. By then TileLang has materialised the launch (``blockIdx`` and
``threadIdx`` bindings), legalised negative indices, simplified, and canonicalised reducers, so the
program is the one the compiler goes on to compile; yet every tile operation is still a
``tl.tileop.*`` call on whole regions and every fragment still has its logical shape. That keeps
the semantics exact with little code: ``T.copy``'s masking, ``T.gemm`` and ``T.reduce_*`` are
implemented once over tiles, from the rules in TileLang's ``src/op/*.cc``. Later points cost more
and add nothing: warp specialisation and software pipelining (the next passes) split the block
into producer and consumer threads and multi-buffer shared tiles, and after ``tl.LowerTileOp``
every fragment is spread over threads by its inferred layout, so each of the block's threads
would have to be simulated.

The real ``tilelang.lower`` runs under a pass instrument that keeps the module after that pass
and then stops the pipeline, so nothing is code-generated or compiled.
"""

from __future__ import annotations

from typing import Any

import tilelang
import tvm
from tilescope.core.worker.lowering import cuda_target

STOP_AFTER = "tl.VerifyBufferInit"


class _Stop(Exception):
    """Raised from the instrument to end the pipeline once the front end has run."""


@tvm.instrument.pass_instrument
class _StopAfter:
    def __init__(self, name: str) -> None:
        self.stop_name = name
        self.depth = 0
        self.kept: Any = None

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self.depth += 1

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self.depth -= 1
        if self.depth == 0 and info.name == self.stop_name:
            self.kept = mod
            raise _Stop(self.stop_name)


def pass_configs(prim_func: Any) -> dict[str, Any]:
    """The pass configuration a kernel carries (``tilelang_pass_configs``), which ``tilelang.compile``
    applies: ``tl.disable_safe_memory_legalize`` among them changes what the kernel computes."""
    attrs = prim_func.attrs
    if attrs is None or "tilelang_pass_configs" not in attrs:
        return {}
    return {str(k): v for k, v in dict(attrs["tilelang_pass_configs"]).items()}


def front_end(prim_func: Any, arch: str = "sm_90") -> Any:
    """``prim_func`` after TileLang's front-end passes for ``arch``; compile errors propagate."""
    stopper = _StopAfter(STOP_AFTER)
    target = cuda_target(arch)
    try:
        with target, tvm.transform.PassContext(instruments=[stopper], config=pass_configs(prim_func)):
            tilelang.lower(prim_func, target=target)
    except Exception:
        if stopper.kept is None:
            raise
    if stopper.kept is None:
        raise RuntimeError(f"TileLang's pipeline never ran {STOP_AFTER}")
    functions = list(stopper.kept.functions.values())
    if len(functions) != 1:
        raise RuntimeError(f"expected one PrimFunc after the front end, found {len(functions)}")
    return functions[0]
