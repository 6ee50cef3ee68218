"""Turn what goes wrong while building or lowering a kernel into diagnostics at the user's line.

A raw traceback is kept as ``detail``; the message says in plain words what failed and where.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Iterable

from tilelang_core.model import Buffer, Diagnostic, Span

_TVM_NOISE = re.compile(r"^\s*(Traceback|File \"|  File|\d+: |During handling|The above exception)")


def _user_line(err: BaseException, path: str) -> int | None:
    """The deepest traceback frame that is in the user's file."""
    line = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == path and frame.lineno:
            line = frame.lineno
    return line


def first_message(err: BaseException) -> str:
    """The meaningful first line of an exception, without TVM's C++ backtrace."""
    text = str(err).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not _TVM_NOISE.match(ln)]
    for ln in lines:
        if ln.startswith(("Check failed", "InternalError", "ValueError", "RuntimeError", "TVMError")) or ":" in ln:
            return ln[:500]
    return (lines[0] if lines else type(err).__name__)[:500]


def _detail(err: BaseException) -> str:
    return "".join(traceback.format_exception(err))[-4000:]


def load_error(err: BaseException, path: str) -> Diagnostic:
    """The file could not be executed (its definitions raised at import)."""
    if isinstance(err, SyntaxError):
        line = err.lineno or 1
        return Diagnostic(
            severity="error",
            message=f"Syntax error: {err.msg}",
            span=Span(line=line, column=max((err.offset or 1) - 1, 0)),
            code="syntax-error",
        )
    line = _user_line(err, path) or 1
    return Diagnostic(
        severity="error",
        message=f"The file raised {type(err).__name__} while loading: {first_message(err)}",
        span=Span(line=line),
        code="load-error",
        detail=_detail(err),
    )


def build_error(err: BaseException, path: str, kernel: str, kernel_line: int) -> Diagnostic:
    """Building the PrimFunc raised: TileLang's own checks (``T.gemm K shape check failed``) land here."""
    line = _user_line(err, path) or kernel_line
    message = first_message(err)
    if isinstance(err, AssertionError) and not str(err).strip():
        message = "an assertion in TileLang failed"
    elif isinstance(err, MemoryError):
        message = "it ran out of memory (the worker's memory limit stopped it)"
    return Diagnostic(
        severity="error",
        message=f"Building kernel '{kernel}' failed: {message}",
        span=Span(line=line),
        code="build-error",
        kernel=kernel,
        detail=_detail(err),
    )


def lowering_error(
    err: BaseException, failed_pass: str | None, kernel: str, kernel_line: int, buffers: Iterable[Buffer]
) -> Diagnostic:
    """The compiler rejected the kernel; point at a buffer the message names, else at the kernel."""
    message = first_message(err)
    named = [b for b in buffers if b.line and re.search(rf"\b{re.escape(b.name)}\b", str(err))]
    line = named[0].line if named else kernel_line
    where = f" in pass {failed_pass}" if failed_pass else ""
    if failed_pass == "tl.LayoutInference":
        names = ", ".join(b.name for b in named) or "the kernel's buffers"
        text = (
            f"Layout inference failed for {names}: the compiler could not find one layout that every "
            f"operation on them accepts ({message})"
        )
        code = "layout-inference"
    else:
        text = f"Lowering kernel '{kernel}' failed{where}: {message}"
        code = "compile-error"
    return Diagnostic(
        severity="error",
        message=text,
        span=Span(line=line or kernel_line),
        code=code,
        kernel=kernel,
        detail=_detail(err),
    )
