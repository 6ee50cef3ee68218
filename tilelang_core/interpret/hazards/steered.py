"""Which of a kernel's global inputs steer its control flow: their values decide a loop's bounds or a branch.

The hazard check runs a kernel on inputs it makes up (seeded random numbers; integers in [0, 16)).
Where a loop bound or a branch depends on an input's values (``cu_seqlens[b + 1] - cu_seqlens[b]``
trips, a ``T.if`` on a lengths tensor), what the interpreter sees happen is what those invented
values make happen: a real program's offsets may never leave part of a tile unwritten. A finding of
such a kernel is then information, naming the inputs, not an error.

Read from the front-end IR the interpreter runs, in program order: a value is data when it loads a
global buffer, or a variable (``Bind``, ``LetStmt``) or local buffer holding such a value; a
``For``'s ``min`` or ``extent``, an ``IfThenElse``'s or ``While``'s condition that is data names the
inputs it came from.
"""

from __future__ import annotations

from typing import Any

from tvm import tirx

_BINDINGS = tuple(t for t in (getattr(tirx, "Bind", None), getattr(tirx, "LetStmt", None)) if t is not None)
"""A variable bound to a value: ``Bind`` in TileLang 0.1.15's TVM, ``LetStmt`` in earlier ones."""


def steering_inputs(func: Any) -> list[str]:
    """The names of ``func``'s global buffers whose values decide a loop bound or a branch, in order."""
    names: dict[Any, str] = {buffer.data: buffer.name for buffer in func.buffer_map.values()}
    holds: dict[Any, set[str]] = {}
    """A ``Var`` (a let-bound scalar, or a local buffer's data) and the inputs its value came from."""
    found: dict[str, None] = {}

    def sources(node: Any) -> set[str]:
        out: set[str] = set()

        def visit(n: Any) -> None:
            if isinstance(n, tirx.BufferLoad):
                if n.buffer.data in names:
                    out.add(names[n.buffer.data])
                out.update(holds.get(n.buffer.data, ()))
            elif isinstance(n, tirx.Var):
                out.update(holds.get(n, ()))

        tirx.stmt_functor.post_order_visit(node, visit)
        return out

    def visit(stmt: Any) -> bool:
        if isinstance(stmt, _BINDINGS):
            holds.setdefault(stmt.var, set()).update(sources(stmt.value))
        elif isinstance(stmt, tirx.BufferStore) and stmt.buffer.data not in names:
            came = sources(stmt.value)
            for index in stmt.indices:
                came |= sources(index)
            if came:
                holds.setdefault(stmt.buffer.data, set()).update(came)
        elif isinstance(stmt, tirx.For):
            found.update(dict.fromkeys(sorted(sources(stmt.min) | sources(stmt.extent))))
        elif isinstance(stmt, tirx.IfThenElse | tirx.While):
            found.update(dict.fromkeys(sorted(sources(stmt.condition))))
        return True

    tirx.stmt_functor.pre_order_visit(func.body, visit)
    return list(found)
