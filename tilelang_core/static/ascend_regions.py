"""The Ascend dialect's regions read statically (``T.SimtVF``, ``T.SimdVF``, and a mixed kernel's ``T.Cube``
and ``T.Vector`` sections), and the rules TileLang's Ascend ``vf_checker`` makes of a ``T.copy`` by the
region it sits in.
"""

from __future__ import annotations

import ast

from tilescope.core.codes import diagnostic
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Diagnostic, Dim
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.operand import Operand
from tilescope.core.static.records import RegionDecl
from tilescope.core.static.symbolic import Sym, Value, as_dim, is_known_int
from tilescope.core.static.syntax import arguments, span_of

VECTOR_REGIONS = frozenset({"SimtVF", "SimdVF"})
"""The Ascend dialect's vector regions: SIMT threads, or SIMD vector registers."""
REGIONS = VECTOR_REGIONS | {"Cube", "Vector"}
"""With the sections of a mixed kernel written by hand: the Cube core's (AIC) and the Vector cores' (AIV)."""


def region(name: str, call: ast.Call, env: dict[str, Value], aliases: frozenset[str]) -> RegionDecl:
    """``with T.SimtVF(threads=...)`` (its thread count, ``[x, y, z]`` as their product) or ``with T.SimdVF()``."""
    threads: Dim | None = None
    if name == "SimtVF":
        given = arguments(call, ["threads", "latency"]).get("threads")
        value = evaluate(given, env, aliases) if given is not None else 128  # SimtVF's default
        if isinstance(value, tuple | list):
            product: Value = 1
            for item in value:
                product = product * item if is_known_int(item) and is_known_int(product) else Sym(str(value))
            value = product
        threads = as_dim(value)
    return RegionDecl(name, threads, span_of(call))


def copy_rules(
    call: ast.Call, source: Operand | None, dest: Operand | None, vector: list[RegionDecl], kernel: str
) -> list[Diagnostic]:
    """An Ascend ``T.copy`` outside a vector region is a DMA, which casts nothing (L0C's fixpipe aside);
    inside ``T.SimdVF`` no copy may touch global memory. ``vector``: the vector regions around the copy."""
    if source is None or dest is None:
        return []
    found = []
    src, dst = source.buffer.buffer, dest.buffer.buffer
    known = dtype_bits(src.dtype) is not None and dtype_bits(dst.dtype) is not None
    if not vector and known and src.dtype != dst.dtype and src.scope != "shared.l0c":
        words = {"src": src.name, "dst": dst.name, "src_dtype": src.dtype, "dst_dtype": dst.dtype}
        found.append(diagnostic("ascend-vector-region", span_of(call), form="cast", kernel=kernel, fields=words))
    simd = bool(vector) and vector[-1].kind == "SimdVF"
    if simd and "global" in (src.scope, dst.scope):
        found.append(
            diagnostic("ascend-vector-region", span_of(call), form="global", kernel=kernel, src=src.name, dst=dst.name)
        )
    return found
