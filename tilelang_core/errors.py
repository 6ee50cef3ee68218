"""Turn what goes wrong while building or lowering a kernel into diagnostics at the user's line.

A raw traceback is kept as ``detail``; the message says in plain words what failed and where.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Iterable

from tilescope.core.codes import diagnostic
from tilescope.core.environment import gpu_query, missing_module
from tilescope.core.lines import lone_surrogate
from tilescope.core.model import Access, Buffer, Diagnostic, Span

_TVM_NOISE = re.compile(r"^\s*(Traceback|File \"|  File|\d+: |During handling|The above exception)")
_ADDRESS = re.compile(r"\b0x[0-9a-f]{12}\b")
"""A pointer printed by TVM's checks (``(0x55dd... vs. 0x55dd...)``): it differs from process to process."""


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
            return _ADDRESS.sub("0x…", ln)[:500]
    return _ADDRESS.sub("0x…", lines[0] if lines else type(err).__name__)[:500]


def _detail(err: BaseException) -> str:
    return "".join(traceback.format_exception(err))[-4000:]


def syntax_error(err: SyntaxError) -> Diagnostic:
    line = err.lineno or 1
    column = max((err.offset or 1) - 1, 0)
    span = Span(line=line, column=column, end_line=err.end_lineno or line, end_column=err.end_offset)
    return diagnostic("syntax-error", span, msg=err.msg)


def surrogate_error(text: str) -> Diagnostic | None:
    """A lone surrogate in the text: Python cannot compile it (no UTF-8 file can hold one)."""
    found = lone_surrogate(text)
    if found is None:
        return None
    line, column, name = found
    span = Span(line=line, column=column, end_line=line, end_column=column + 3)
    return diagnostic("syntax-error", span, form="surrogate", char=name)


def environment_problem(err: BaseException, path: str, kernel: str | None, kernel_line: int) -> Diagnostic | None:
    """A missing module or a GPU query: the environment, not the kernel, stopped the build."""
    return missing_module(err, path) or gpu_query(err, path, kernel, kernel_line)


def load_error(err: BaseException, path: str) -> Diagnostic:
    """The file could not be executed (its definitions raised at import)."""
    if isinstance(err, SyntaxError):
        return syntax_error(err)
    environment = environment_problem(err, path, None, 1)
    if environment is not None:
        return environment
    line = _user_line(err, path) or 1
    return diagnostic(
        "load-error", Span(line=line), error=type(err).__name__, message=first_message(err), detail=_detail(err)
    )


_MISSING_NAME = re.compile(
    r"module '(tilelang(?:\.ascend)?\.language)' has no attribute '(\w+)'"
    r"|cannot import name '(\w+)' from '(tilelang(?:\.ascend)?\.language)'"
)
_SEMANTIC = re.compile(r"\[TileLang Semantic Check\]\s*(.*)")


def ascend_dialect(
    err: BaseException, path: str, ascend_has: Callable[[str], bool], version: str, kernel_line: int = 1
) -> Diagnostic | None:
    """An operation asked of ``tilelang.language`` that this release has only in ``tilelang.ascend.language``
    (files written for newer TileLang), or of either module when neither has it; ``None`` for another error."""
    if not isinstance(err, AttributeError | ImportError):
        return None
    found = _MISSING_NAME.search(str(err))
    if found is None:
        return None
    module, name = (found.group(1), found.group(2)) if found.group(1) else (found.group(4), found.group(3))
    moved = module == "tilelang.language" and ascend_has(name)
    span = Span(line=_user_line(err, path) or kernel_line)
    form = None if moved else "missing"
    return diagnostic("ascend-dialect", span, form=form, name=name, module=module, version=version, detail=_detail(err))


def ascend_rejected(err: BaseException, kernel: str, line: int, version: str) -> Diagnostic | None:
    """TileLang's Ascend semantic checks (``[TileLang Semantic Check] T.Parallel loop 'ti' must be inside a VF
    block``) as a diagnostic at ``line``; ``None`` for another error."""
    found = _SEMANTIC.search(str(err))
    if found is None:
        return None
    reason = found.group(1).strip().splitlines()[0] if found.group(1).strip() else first_message(err)
    return diagnostic(
        "ascend-rejected", Span(line=line), kernel=kernel, reason=reason, version=version, detail=_detail(err)
    )


def semantic_subject(err: BaseException) -> list[str]:
    """The names a semantic check quotes (``'ti'``), which the caller looks up in the kernel's source."""
    found = _SEMANTIC.search(str(err))
    return re.findall(r"'(\w+)'", found.group(1)) if found else []


def build_error(err: BaseException, path: str, kernel: str, kernel_line: int) -> Diagnostic:
    """Building the PrimFunc raised: TileLang's own checks (``T.gemm K shape check failed``) land here."""
    environment = environment_problem(err, path, kernel, kernel_line)
    if environment is not None:
        return environment
    span = Span(line=_user_line(err, path) or kernel_line)
    if isinstance(err, AssertionError) and not str(err).strip():
        return diagnostic("build-error", span, form="assertion", kernel=kernel, detail=_detail(err))
    if isinstance(err, MemoryError):
        return diagnostic("build-error", span, form="memory", kernel=kernel, detail=_detail(err))
    return diagnostic("build-error", span, kernel=kernel, error=first_message(err), detail=_detail(err))


def lowering_error(
    err: BaseException,
    failed_pass: str | None,
    kernel: str,
    kernel_line: int,
    buffers: Iterable[Buffer],
    accesses: Iterable[Access],
) -> Diagnostic:
    """The compiler rejected the kernel; say where in the pipeline and point at the likely line."""
    buffers = list(buffers)
    message = first_message(err)
    if failed_pass == "tl.LayoutInference":
        return _layout_failure(err, message, kernel, kernel_line, buffers, list(accesses))
    named = [b for b in buffers if b.line and re.search(rf"\b{re.escape(b.name)}\b", str(err))]
    line = named[0].line if named and named[0].line else kernel_line
    if not failed_pass:
        return diagnostic(
            "compile-error", Span(line=line), form="no_pass", kernel=kernel, error=message, detail=_detail(err)
        )
    return diagnostic(
        "compile-error", Span(line=line), kernel=kernel, stage=failed_pass, error=message, detail=_detail(err)
    )


def _layout_failure(
    err: BaseException, message: str, kernel: str, kernel_line: int, buffers: list[Buffer], accesses: list[Access]
) -> Diagnostic:
    """Explain a layout-inference failure with the fragments and the operations that constrain them.

    TileLang's own message (``no available layout found``) names neither; the usual cause is a
    ``T.Parallel`` loop that reads fragments whose layouts were fixed differently elsewhere, such
    as a row-reduction result indexed by column.
    """
    rank = {b.name: len(b.shape) for b in buffers if b.scope == "local.fragment"}
    involved = [a for a in accesses if set(a.reads + a.writes) & rank.keys()]
    mixed = [a for a in involved if a.op == "parallel" and len({rank[n] for n in a.reads + a.writes if n in rank}) > 1]
    culprit = (mixed or [a for a in involved if a.op == "parallel"] or involved or [None])[0]
    names = sorted({n for a in (mixed or involved) for n in a.reads + a.writes if n in rank})
    uses = "; ".join(
        f"{a.op} at line {a.line} ({', '.join(n for n in dict.fromkeys(a.reads + a.writes) if n in rank)})"
        for a in involved
        if a.line
    )
    line = culprit.line if culprit is not None and culprit.line else kernel_line
    return diagnostic(
        "layout-inference",
        Span(line=line),
        kernel=kernel,
        fragments=", ".join(names) or "the fragments",
        uses=uses or "none recorded",
        error=message,
        detail=_detail(err),
    )
