"""Whether a kernel writes TileLang's Ascend dialect, and what the dialect or the Ascend backend refused,
at the user's line. Runs in the worker.

A name the dialect lacks (``errors.ascend_dialect``) and a semantic check of the backend
(``errors.ascend_rejected``) are the release's own words; this finds the line they are about: the
statement that binds the loop variable a check names, or the ``T.copy`` between the two dtypes it names.
"""

from __future__ import annotations

import re
import types
from typing import Any

from tilescope.core import errors
from tilescope.core.compiler.discovery import Instantiation
from tilescope.core.model import Access, Buffer, Diagnostic


def tilelang_version() -> str:
    import tilelang

    return str(getattr(tilelang, "__version__", "?")).split("+")[0]


def _ascend_has(name: str) -> bool:
    try:
        import tilelang.ascend.language as dialect
    except ImportError:
        return False
    return hasattr(dialect, name)


def dialect_error(err: BaseException, path: str, line: int = 1) -> Diagnostic | None:
    """A ``T.*`` name the Ascend dialect lacks, as the release words it; ``None`` for any other error."""
    return errors.ascend_dialect(err, path, _ascend_has, tilelang_version(), line)


def rejected(
    err: BaseException,
    name: str,
    line: int,
    source: str,
    inst: Instantiation,
    buffers: list[Buffer] | None = None,
    accesses: list[Access] | None = None,
) -> Diagnostic | None:
    """A semantic check of the Ascend backend, at the line of the statement it names (``T.Parallel loop 'ti'``),
    or of the ``T.copy`` between the two dtypes it names (``T.copy() from dtype 'bfloat16' to dtype 'float32'``)."""
    subjects = errors.semantic_subject(err)
    at = _copy_line(subjects, buffers or [], accesses or []) or _named_line(subjects, source, inst) or line
    return errors.ascend_rejected(err, name, at, tilelang_version())


def _copy_line(subjects: list[str], buffers: list[Buffer], accesses: list[Access]) -> int | None:
    """The first copy whose source and destination have the two dtypes a casting check names."""
    if len(subjects) < 2:
        return None
    dtypes = {b.name: b.dtype for b in buffers}
    for access in accesses:
        if access.op not in ("copy", "ascend_copy", "dual_copy") or access.line is None:
            continue
        read = {dtypes.get(n) for n in access.reads}
        written = {dtypes.get(n) for n in access.writes}
        if subjects[0] in read and subjects[1] in written:
            return access.line
    return None


def _named_line(names: list[str], source: str, inst: Instantiation) -> int | None:
    """The first line of the kernel's definition that binds one of ``names`` (``for ti in ...``, ``ti = ...``)."""
    lines = source.splitlines()
    start = inst.kernel.span.line
    end = inst.kernel.span.end_line or len(lines)
    for name in names:
        binds = re.compile(rf"\bfor\s+(?:[\w\s,]*\b)?{re.escape(name)}\b|\b{re.escape(name)}\s*=[^=]")
        for number in range(start, min(end, len(lines)) + 1):
            if binds.search(lines[number - 1]):
                return number
    return None


def uses_ascend(namespace: dict[str, Any], name: str) -> bool:
    """Whether the kernel's module writes TileLang's Ascend dialect (``import tilelang.ascend.language as T``)."""
    obj = namespace.get(name)
    scopes = [namespace, getattr(getattr(obj, "func", None), "__globals__", None) or {}]
    return any(
        isinstance(value, types.ModuleType) and value.__name__.startswith("tilelang.ascend")
        for scope in scopes
        for value in scope.values()
    )
