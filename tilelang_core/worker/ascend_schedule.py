"""The schedule of an Ascend kernel from the IR after ``tl.InsertSync``, and its core split from the final
device module (see ``ascend``): steps at their lines and cores, loops with stages and multi-buffer
slots, the flags between pipes and between the Cube and Vector cores, the SIMT regions' threads."""

from __future__ import annotations

import re
from typing import Any

from tilescope.core.model import AscendCore, AscendFlag, AscendLoop, CoreSection, FlagKind, ScheduleStep
from tilescope.core.targets import ascend_level
from tilescope.core.worker.ascend_ir import as_int, base_name, funcs, line_of
from tvm import tirx

_FLAG_OPS: dict[str, FlagKind] = {
    "tl.ascend_set_flag": "set",
    "tl.ascend_wait_flag": "wait",
    "tl.ascend_cross_core_set_flag": "cross-set",
    "tl.ascend_cross_core_wait_flag": "cross-wait",
}
_CORES: dict[int, AscendCore] = {1: "vector", 2: "cube", 3: "scalar"}
_SECTIONS = {"CUBE": "aic", "VECTOR": "aiv"}


class Walk:
    """One pass over the scheduled IR, in program order: steps, loops, multi-buffer slots."""

    def __init__(self, path: str, lines: list[str]) -> None:
        self.path = path
        self.lines = lines
        self.steps: list[ScheduleStep] = []
        self.loops: list[AscendLoop] = []
        self.versions: dict[str, int] = {}
        self.simt = False
        self._loop_stack: list[tuple[str, int]] = []
        self.unscheduled: AscendCore | None = None
        """Walking the final kernel (no ``tl.InsertSync`` ran: auto-scheduling off): each statement's core is
        its ``CUBE``/``VECTOR`` block's, or this one outside them."""

    def visit(self, stmt: Any, depth: int) -> None:
        if isinstance(stmt, tirx.SeqStmt):
            for s in stmt.seq:
                self.visit(s, depth)
        elif isinstance(stmt, tirx.AttrStmt) and stmt.attr_key == "tl.ascend_task":
            self._task(stmt, depth)
        elif isinstance(stmt, tirx.AttrStmt):
            self.visit(stmt.body, depth)
        elif isinstance(stmt, tirx.For):
            self._loop(stmt, depth)
        elif isinstance(stmt, tirx.IfThenElse):
            self.visit(stmt.then_case, depth)
            if stmt.else_case is not None:
                self.visit(stmt.else_case, depth)
        elif isinstance(stmt, tirx.SBlockRealize):
            self.visit(stmt.block, depth)
        elif isinstance(stmt, tirx.SBlock) and self.unscheduled is not None and stmt.name_hint in _SECTIONS:
            outer, self.unscheduled = self.unscheduled, "cube" if stmt.name_hint == "CUBE" else "vector"
            self.visit(stmt.body, depth)
            self.unscheduled = outer
        elif isinstance(stmt, tirx.SBlock) and self.unscheduled is not None and stmt.name_hint == "SIMT_VF":
            self.simt = True
            self._step(stmt, self.unscheduled, {}, depth, stmt)
        elif isinstance(stmt, tirx.SBlock):
            if stmt.name_hint == "SIMT_VF":
                self.simt = True
            versions = stmt.annotations.get("tl.buffer_versions_map") if stmt.annotations else None
            for var, count in dict(versions or {}).items():
                self.versions[str(getattr(var, "name", var))] = int(count)
            self.visit(stmt.body, depth)
        elif hasattr(stmt, "body") and isinstance(getattr(stmt, "body", None), tirx.Stmt):
            self.visit(stmt.body, depth)
        elif self.unscheduled is not None and isinstance(stmt, tirx.Evaluate | tirx.BufferStore):
            self._step(stmt, self.unscheduled, {}, depth, stmt)

    def _loop(self, loop: Any, depth: int) -> None:
        notes = loop.annotations or {}
        stages = as_int(notes.get("num_stages")) if "num_stages" in notes else None
        eligible = [str(getattr(b, "name", b)) for b in notes.get("multi_buffer_eligible", [])]
        var = str(loop.loop_var.name)
        line = line_of(loop, self.path) or self._search(rf"\bfor\s+{re.escape(var)}\b")
        self.loops.append(AscendLoop(var, as_int(loop.extent), stages, [base_name(n) for n in eligible], line, depth))
        self._loop_stack.append((var, len(self.loops) - 1))
        self.visit(loop.body, depth + 1)
        self._loop_stack.pop()

    def _task(self, attr: Any, depth: int) -> None:
        notes = dict(attr.node) if hasattr(attr.node, "items") else {}
        mask = as_int(notes.get("core_mask")) or 3
        core = _CORES.get(mask, "scalar")
        body = attr.body
        while isinstance(body, tirx.IfThenElse) and body.else_case is None:  # a guard the schedule kept
            body = body.then_case
        if isinstance(body, tirx.AttrStmt) and body.attr_key == "tl.ascend_task":
            body = body.body
        if isinstance(body, tirx.For | tirx.SeqStmt | tirx.SBlockRealize):
            self.visit(body, depth)
            return
        self._step(body, core, notes, depth, attr)

    def _step(self, body: Any, core: AscendCore, notes: dict[str, Any], depth: int, attr: Any) -> None:
        op, operands = _describe(body)
        flag = _flag(body, core) if op in _FLAG_OPS.values() else None
        line = line_of(attr, self.path) or line_of(getattr(attr, "body", attr), self.path)
        if line is None and flag is None and operands:
            line = self._search_op(op, operands)
        self.steps.append(
            ScheduleStep(
                index=len(self.steps),
                core=core,
                op=op,
                operands=operands,
                line=line,
                depth=depth,
                loop=self._loop_stack[-1][0] if self._loop_stack else None,
                loop_index=self._loop_stack[-1][1] if self._loop_stack else None,
                latency=as_int(notes.get("latency")) if "latency" in notes else None,
                flag=flag,
            )
        )

    def _search(self, pattern: str) -> int | None:
        compiled = re.compile(pattern)
        return next((i + 1 for i, text in enumerate(self.lines) if compiled.search(text)), None)

    def _search_op(self, op: str, operands: list[str]) -> int | None:
        """A tile operation that lost its span: the source line writing the same operation on the same buffers."""
        written = {"copy": ("copy", "dual_copy"), "gemm": ("gemm",)}.get(op, (op,))
        names = [base_name(n) for n in operands]
        for i, text in enumerate(self.lines):
            if any(f"{w}(" in text for w in written) and all(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                return i + 1
        return None


def _call(body: Any) -> Any | None:
    if isinstance(body, tirx.Evaluate) and isinstance(body.value, tirx.Call):
        return body.value
    return None


def _describe(body: Any) -> tuple[str, list[str]]:
    """A short name of the statement's operation and the buffers it names (source, then destination)."""
    call = _call(body)
    if isinstance(body, tirx.SBlock):  # a SimtVF region of the final kernel
        return "simt_vf", []
    if call is None:
        if isinstance(body, tirx.BufferStore):
            return "store", [str(body.buffer.name)]
        if isinstance(body, tirx.Bind):
            return "scalar", []
        return type(body).__name__.lower(), []
    name = str(getattr(call.op, "name", call.op))
    if name in _FLAG_OPS:
        return _FLAG_OPS[name], []
    short = name.removeprefix("tl.").removeprefix("tileop.").removeprefix("ascend_")
    operands: list[str] = []
    for arg in call.args:
        if isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")) == "tl.region":
            load = arg.args[0]
            if isinstance(load, tirx.BufferLoad):
                operands.append(str(load.buffer.name))
        elif isinstance(arg, tirx.BufferLoad):
            operands.append(str(arg.buffer.name))
        elif isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")) in (
            "tirx.tvm_access_ptr",
            "tir.tvm_access_ptr",
        ):
            operands.append(base_name(str(getattr(arg.args[1], "name", arg.args[1]))))
        elif isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")).endswith("address_of"):
            load = arg.args[0]
            if isinstance(load, tirx.BufferLoad):
                operands.append(base_name(str(load.buffer.name)))
    return short, operands


def _text(expr: Any) -> str:
    if isinstance(expr, tirx.StringImm):
        return str(expr.value)
    if isinstance(expr, tirx.IntImm):
        return str(int(expr))
    return str(expr)


def _flag(body: Any, core: AscendCore) -> AscendFlag | None:
    call = _call(body)
    if call is None:
        return None
    kind = _FLAG_OPS[str(call.op.name)]
    args = [_text(a) for a in call.args]
    if kind in ("set", "wait"):
        source, _, target = args[0].partition("_")
        return AscendFlag(kind=kind, core=core, source_pipe=source, target_pipe=target, event=args[1])
    # ascend_cross_core_*_flag(mode, pipe, id): the Cube-Vector flag with id ``args[2]``, raised after ``pipe``
    pipe = args[1].removeprefix("PIPE_")
    return AscendFlag(kind=kind, core=core, source_pipe=pipe, target_pipe="", event=args[2], mode=as_int(call.args[0]))


def core_sections(device_mod: Any) -> tuple[dict[str, CoreSection], list[AscendFlag], str]:
    """What each core's section of the final kernel touches and the flags it holds, and the kernel's kind."""
    sections: dict[str, CoreSection] = {}
    flags: list[AscendFlag] = []
    kind = "unknown"
    for func in funcs(device_mod):
        if func.attrs is None or "thread_extent" not in func.attrs:
            continue
        names = {str(p.name) for p in func.params} | _allocated(func.body)
        blocks: list[Any] = []

        def visit(node: Any, blocks: list[Any] = blocks) -> None:
            if isinstance(node, tirx.SBlock) and node.name_hint in _SECTIONS:
                blocks.append(node)

        tirx.stmt_functor.post_order_visit(func.body, visit)
        for block in blocks:
            core = _SECTIONS[block.name_hint]
            used, found = _section(block.body, names, "cube" if core == "aic" else "vector")
            sections[core] = CoreSection(buffers=sorted(used), flags=len(found))
            flags.extend(found)
        cores = {_SECTIONS[b.name_hint] for b in blocks}
        if not blocks:  # no CUBE/VECTOR split (auto-scheduling off): codegen's own rule, a gemm makes it Cube
            core = "aic" if _has_gemm(func.body) else "aiv"
            used, found = _section(func.body, names, "cube" if core == "aic" else "vector")
            sections[core] = CoreSection(buffers=sorted(used), flags=len(found))
            flags.extend(found)
            cores = {core}
        kind = "mix" if cores == {"aic", "aiv"} else "cube" if cores == {"aic"} else "vector"
    return sections, flags, kind


def _has_gemm(body: Any) -> bool:
    """Whether the kernel calls a Cube matrix multiply (``ascend_gemm_l0``/``_l1``), as AscendC's codegen asks."""
    found = []

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Call) and "gemm_l" in str(getattr(node.op, "name", "")):
            found.append(node)

    tirx.stmt_functor.post_order_visit(body, visit)
    return bool(found)


def _allocated(body: Any) -> set[str]:
    """Names of a device function's on-chip allocations (what the AscendC declares ``__cbuf__``, ``__ubuf__``...)."""
    found: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tirx.AllocBuffer) and ascend_level(str(node.buffer.scope())) not in (None, "GM"):
            found.add(str(node.buffer.data.name))

    tirx.stmt_functor.post_order_visit(body, visit)
    return found


def _section(body: Any, names: set[str], core: AscendCore) -> tuple[set[str], list[AscendFlag]]:
    used: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, tirx.Var) and str(node.name) in names:
            used.add(str(node.name))

    tirx.stmt_functor.post_order_visit(body, visit)
    flags = [flag for stmt in _statements(body) if (flag := _flag_of(stmt, core)) is not None]
    return used, flags


def _flag_of(stmt: Any, core: AscendCore) -> AscendFlag | None:
    call = _call(stmt)
    return _flag(stmt, core) if call is not None and str(getattr(call.op, "name", "")) in _FLAG_OPS else None


def _statements(stmt: Any) -> list[Any]:
    """Every statement under ``stmt``, each occurrence counted: TVM's ``post_order_visit`` visits a node
    once, and a flag the compiler wrote twice (the same ``wait`` in two branches) is one shared node."""
    found = [stmt]
    if isinstance(stmt, tirx.SeqStmt):
        for inner in stmt.seq:
            found.extend(_statements(inner))
    elif isinstance(stmt, tirx.IfThenElse):
        found.extend(_statements(stmt.then_case))
        if stmt.else_case is not None:
            found.extend(_statements(stmt.else_case))
    elif isinstance(stmt, tirx.SBlockRealize):
        found.extend(_statements(stmt.block))
    elif isinstance(getattr(stmt, "body", None), tirx.Stmt):
        found.extend(_statements(stmt.body))
    return found


def simt_threads(device_mod: Any) -> list[int]:
    """Thread counts of the kernel's SimtVF regions."""
    threads: list[int] = []
    for func in funcs(device_mod):

        def visit(node: Any) -> None:
            if isinstance(node, tirx.SBlock) and node.name_hint == "SIMT_VF":
                count = 1

                def inner(n: Any) -> None:
                    nonlocal count
                    if isinstance(n, tirx.AttrStmt) and n.attr_key == "thread_extent":
                        count *= as_int(n.value) or 1

                tirx.stmt_functor.post_order_visit(node.body, inner)
                threads.append(count)

        tirx.stmt_functor.post_order_visit(func.body, visit)
    return threads
