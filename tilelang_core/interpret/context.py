"""State shared by the expression and statement compilers, and the frame a compiled kernel runs in.

The PrimFunc is translated once into Python closures (TVM node attributes are slow to read, so the
tree is walked only once). Each variable and each buffer gets a slot in a flat list; a ``Frame``
holds the slots' current values, the lane mask (which lanes of a ``T.Parallel`` nest are live) and
the number of lane axes in use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tilescope.core.interpret.memory import Findings, NotInterpretable


class Frame:
    """Run-time state: slot values, the live-lane mask (``None``: all) and the lane axes in use.

    ``loops`` names each lane axis, outermost first: ``(loop variable, first value, count, line)``
    of a ``T.Parallel`` loop, or ``("threadIdx.x", 0, threads, 0)`` in per-thread code. ``plan``
    (optional) picks which blocks of each grid axis run and may stop the run when its time is up.
    """

    __slots__ = ("findings", "lanes", "loops", "mask", "plan", "values")

    def __init__(self, size: int, findings: Findings) -> None:
        self.values: list[Any] = [None] * size
        self.mask: Any = None
        self.lanes = 0
        self.findings = findings
        self.loops: list[tuple[str, Any, int, int]] = []
        self.plan: Any = None


class Stop(Exception):
    """Raised by a frame's ``plan`` to end a run early (its time is up); what was found so far stays."""


Fn = Callable[[Frame], Any]
Run = Callable[[Frame], None]


def is_constant(expr: Any) -> bool:
    """No variable and no load inside: TileLang's safe-memory pass leaves such an index unchecked."""
    from tilelang import tvm

    found = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Var | tvm.tirx.BufferLoad):
            found.append(node)

    tvm.tirx.stmt_functor.post_order_visit(expr, visit)
    return not found


def key(node: Any) -> int:
    """A TVM object's identity (Python wrappers of one node differ; the handle does not)."""
    return int(node.__chandle__())


class Context:
    """Compile-time tables: slots per variable and buffer, thread variables, the current line."""

    def __init__(self, path: str | None, safe_memory: bool = True) -> None:
        self.path = path
        self.safe_memory = safe_memory
        """TileLang guards global accesses (``tl.disable_safe_memory_legalize`` turns it off)."""
        self.slots: dict[int, int] = {}
        self.names: list[str] = []
        self.thread_vars: dict[int, str] = {}
        """Thread indices the code may not name (per-thread mode is off, or a y/z index)."""
        self.thread_slot: int | None = None
        """In per-thread mode, the slot of the linear thread number (``threadIdx.x`` itself in a 1-D
        block): one lane per thread of the block."""
        self.thread_count = 0
        self.buffers: dict[int, Any] = {}
        self.grid: list[int] = []
        self.grid_depth = 0
        """How many ``blockIdx`` bindings enclose the statement being compiled (0: a new launch)."""
        self.threads: list[int] = []
        self.line = 0
        self.tile_lines: dict[frozenset[str], list[int]] = {}
        """Lines of the file's tile operations by the buffers they touch (from the static tier), for
        the operations TileLang builds inside its own macros, whose spans point into TileLang."""

    def slot(self, var: Any) -> int:
        k = key(var)
        found = self.slots.get(k)
        if found is None:
            found = self.slots[k] = len(self.names)
            self.names.append(str(var.name))
        return found

    def anonymous_slot(self, name: str) -> int:
        """A slot no TIR variable names (the linear thread number of a 2-D or 3-D block)."""
        self.names.append(name)
        return len(self.names) - 1

    def buffer_slot(self, buffer: Any) -> int:
        """The slot of a buffer's storage; a second view of it with another shape is refused."""
        k = key(buffer.data)
        seen = self.buffers.setdefault(k, buffer)
        if [str(d) for d in seen.shape] != [str(d) for d in buffer.shape] or str(seen.dtype) != str(buffer.dtype):
            raise self.fail(f"a view of {seen.name} as {buffer.name} with another shape or dtype")
        return self.slot(buffer.data)

    def guard(self, buffer: Any, indices: list[Any]) -> tuple[bool, ...] | None:
        """The dimensions of an access that TileLang's ``LegalizeSafeMemoryAccess`` bounds-checks:
        those of a global buffer whose index is not a constant."""
        if not self.safe_memory or str(buffer.scope()) != "global":
            return None
        return tuple(not is_constant(i) for i in indices)

    def per_thread(self, buffer: Any) -> bool:
        """Per-thread mode gives each thread its own copy of ``local`` and ``local.var`` buffers."""
        return self.thread_slot is not None and str(buffer.scope()) in ("local", "local.var")

    def fail(self, what: str) -> NotInterpretable:
        where = f" at line {self.line}" if self.line else ""
        return NotInterpretable(f"not interpretable: uses {what}{where}", self.line)
