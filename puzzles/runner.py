"""Build and compile a puzzle file's kernel in this process (imports TileLang).

Build and compile failures come back as the core's diagnostics, at the learner's line.
"""

from __future__ import annotations

from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compiler.discovery import discover
from tilescope.core.errors import build_error, first_message, load_error
from tilescope.core.model import Diagnostic, Span
from tilescope.core.worker.loader import load_module
from tilescope.puzzles.catalog import KERNEL_NAME
from tilescope.puzzles.verdict import Param


class CompileFailure(Exception):
    """The kernel did not build or compile; ``diagnostic`` says why and where."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _kernel_line(source: str, path: str) -> int:
    refs = [r for r in discover(source, path) if r.name == KERNEL_NAME]
    return refs[0].span.line if refs else 1


def build(path: str, source: str, args: dict[str, Any]) -> Any:
    """The PrimFunc the file's ``kernel`` factory returns for these arguments."""
    try:
        namespace = load_module(source, path)
    except MemoryError:
        raise
    except Exception as err:
        raise CompileFailure(load_error(err, path)) from err
    factory = namespace.get(KERNEL_NAME)
    if not callable(factory):
        raise CompileFailure(diagnostic("no-kernel", Span(1), form="puzzle", function=KERNEL_NAME))
    try:
        return factory(**args)
    except MemoryError:
        raise
    except Exception as err:
        raise CompileFailure(build_error(err, path, KERNEL_NAME, _kernel_line(source, path))) from err


def compile_kernel(prim_func: Any, path: str, source: str, flags: list[str] | None = None) -> Any:
    """A callable kernel for this machine's GPU (without one, the tile interpreter runs the PrimFunc)."""
    import tilelang

    try:
        return tilelang.compile(prim_func, target="cuda", compile_flags=flags)
    except Exception as err:
        failure = diagnostic(
            "compile-error",
            Span(_kernel_line(source, path)),
            form="cuda",
            kernel=KERNEL_NAME,
            error=first_message(err),
            detail=str(err)[-4000:],
        )
        raise CompileFailure(failure) from err


def params(prim_func: Any) -> list[Param]:
    """The kernel's tensor parameters, in order, with the shapes and dtypes it was built for."""
    result = []
    for var in prim_func.params:
        buf = prim_func.buffer_map.get(var)
        if buf is None:
            continue
        shape = tuple(int(s) if hasattr(s, "value") or isinstance(s, int) else -1 for s in buf.shape)
        result.append(Param(buf.name, shape, str(buf.dtype)))
    return result


def storage_scopes(prim_func: Any) -> list[str]:
    """The storage scopes the kernel allocates in (``shared.dyn``, ``local.fragment``...), for targets that
    reward a technique: a transpose that allocates no shared memory has not used the lesson."""
    from tilelang import tvm

    scopes: set[str] = set()

    def visit(node: Any) -> None:
        for buf in getattr(node, "alloc_buffers", None) or []:
            scopes.add(str(buf.scope()))

    tvm.tirx.stmt_functor.post_order_visit(prim_func.body, visit)
    return sorted(scopes)
