"""The Ascend 950 facts of one lowered kernel, read from TileLang's own IR, in the worker.

TileLang's Ascend pipeline decides what the user never writes: which statement runs on the Cube
core (AIC), which on the Vector cores (AIV) and which on both (scalar control); the pipe flags
between the hardware pipes and the Cube-Vector flags; multi-buffer slots. All of it is in the IR
it leaves behind, so nothing here guesses:

- the **schedule** is the module right after ``tl.InsertSync``: every statement sits under a
  ``tl.ascend_task`` attribute whose ``core_mask`` says its core (bit 1 AIV, bit 2 AIC, both: run
  by each core's scalar unit), and the flags it inserted are ``ascend_set_flag``/``ascend_wait_flag``
  (pipe to pipe, with an event id) and ``ascend_cross_core_set_flag``/``_wait_flag`` (Cube to Vector);
  loops carry ``num_stages`` and ``multi_buffer_eligible``, the kernel block
  ``tl.buffer_versions_map`` (slots per buffer);
- the **flags and core split** of the code that runs are those of the final device module, whose
  ``CUBE`` and ``VECTOR`` blocks become the ``ASC_IS_AIC``/``ASC_IS_AIV`` sections of the AscendC;
- the **memory plan** counts each buffer's bytes times its slots per level against the part's
  capacity (``targets.ASCEND_LEVELS``), as ``tl.AutoSchedule`` does.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.compat import spans
from tilescope.core.model import (
    AscendBuffer,
    AscendCore,
    AscendFlag,
    AscendLoop,
    AscendModel,
    Buffer,
    CoreSection,
    Diagnostic,
    FlagKind,
    Layout,
    MemoryLevel,
    ScheduleStep,
    Span,
)
from tilescope.core.targets import ASCEND_LEVELS, ASCEND_UB_WITH_SIMT, ascend_level
from tvm import tirx

SCHEDULE_PASS = "tl.InsertSync"
_FLAG_OPS: dict[str, FlagKind] = {
    "tl.ascend_set_flag": "set",
    "tl.ascend_wait_flag": "wait",
    "tl.ascend_cross_core_set_flag": "cross-set",
    "tl.ascend_cross_core_wait_flag": "cross-wait",
}
_CORES: dict[int, AscendCore] = {1: "vector", 2: "cube", 3: "scalar"}
_SECTIONS = {"CUBE": "aic", "VECTOR": "aiv"}
_LEVEL_ORDER = ("GM", "L1", "L0A", "L0B", "L0C", "UB")


def model(
    prim_func: Any,
    modules: list[Any],
    names: list[str],
    device_mod: Any | None,
    buffers: list[Buffer],
    path: str,
    source: str,
    kernel: str,
    auto_schedule: bool,
) -> tuple[AscendModel, list[Diagnostic]]:
    """The Ascend model of a kernel lowered (or stopped) with its passes recorded."""
    scheduled = _module_after(modules, names, SCHEDULE_PASS)
    lines = source.splitlines()
    walk = _Walk(path, lines)
    if scheduled is not None:
        for func in _funcs(scheduled):
            walk.visit(func.body, 0)
    elif device_mod is not None:
        walk.unscheduled = "scalar"
        for func in _funcs(device_mod):
            walk.visit(func.body, 0)
    simt = _simt_threads(device_mod) if device_mod is not None else []
    ascend_buffers = _buffers(buffers, walk.versions)
    memory = _memory(ascend_buffers, bool(simt) or walk.simt)
    sections, flags, kind = _sections(device_mod) if device_mod is not None else ({}, [], "unknown")
    merged = _merged(device_mod) if device_mod is not None else {}
    offsets = _offsets(modules, names)
    ascend_buffers = [_with_merge(b, merged, offsets) for b in ascend_buffers]
    result = AscendModel(
        kernel_kind=kind,
        buffers=ascend_buffers,
        memory=memory,
        schedule=walk.steps,
        loops=walk.loops,
        flags=flags,
        sections=sections,
        simt_threads=simt,
        scheduled=scheduled is not None,
    )
    diagnostics = [_overflow(level, kernel, ascend_buffers, auto_schedule) for level in memory if not level.fits]
    return result, diagnostics


_FRACTAL_KINDS = {
    0: "nZ fractal, K-major",
    1: "nZ fractal, L0C 16×16",
    2: "fractal, scale factors",
    3: "nZ fractal, MN-major",
}
"""``kind`` of TileLang's ``_AscendFractalLayout`` (``tilelang/layout/ascend.py``: MajorK, L0C, SF, MajorMN)."""


def fractal_layouts(layout_module: Any | None, layouts: list[Layout]) -> list[Layout]:
    """The layouts read after ``tl.AscendLayoutInference`` with each fractal one named for its kind."""
    if layout_module is None:
        return layouts
    kinds: dict[str, str] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                kind = _int(getattr(layout, "kind", None))
                if kind is not None:
                    kinds.setdefault(str(buf.name), _FRACTAL_KINDS.get(kind, f"fractal kind {kind}"))

    for func in _funcs(layout_module):
        tirx.stmt_functor.post_order_visit(func.body, visit)
    return [replace(layout, swizzle=kinds[layout.buffer]) if layout.buffer in kinds else layout for layout in layouts]


def _module_after(modules: list[Any], names: list[str], name: str) -> Any | None:
    index = next((i for i, n in enumerate(names) if n == name), None)
    return modules[index] if index is not None and index < len(modules) else None


def _funcs(module: Any) -> list[Any]:
    return [f for f in module.functions.values() if isinstance(f, tirx.PrimFunc)]


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _line(node: Any, path: str) -> int | None:
    found = spans.location(spans.stmt_span(node))
    return found[1] if found is not None and found[0] == path else None


class _Walk:
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
        stages = _int(notes.get("num_stages")) if "num_stages" in notes else None
        eligible = [str(getattr(b, "name", b)) for b in notes.get("multi_buffer_eligible", [])]
        var = str(loop.loop_var.name)
        line = _line(loop, self.path) or self._search(rf"\bfor\s+{re.escape(var)}\b")
        self.loops.append(AscendLoop(var, _int(loop.extent), stages, [_base(n) for n in eligible], line, depth))
        self._loop_stack.append((var, len(self.loops) - 1))
        self.visit(loop.body, depth + 1)
        self._loop_stack.pop()

    def _task(self, attr: Any, depth: int) -> None:
        notes = dict(attr.node) if hasattr(attr.node, "items") else {}
        mask = _int(notes.get("core_mask")) or 3
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
        line = _line(attr, self.path) or _line(getattr(attr, "body", attr), self.path)
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
                latency=_int(notes.get("latency")) if "latency" in notes else None,
                flag=flag,
            )
        )

    def _search(self, pattern: str) -> int | None:
        compiled = re.compile(pattern)
        return next((i + 1 for i, text in enumerate(self.lines) if compiled.search(text)), None)

    def _search_op(self, op: str, operands: list[str]) -> int | None:
        """A tile operation that lost its span: the source line writing the same operation on the same buffers."""
        written = {"copy": ("copy", "dual_copy"), "gemm": ("gemm",)}.get(op, (op,))
        names = [_base(n) for n in operands]
        for i, text in enumerate(self.lines):
            if any(f"{w}(" in text for w in written) and all(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
                return i + 1
        return None


def _base(name: str) -> str:
    """A buffer's name as the user wrote it: TVM's ``x_l1_1`` copies and ``.data`` vars name the same buffer."""
    return re.sub(r"(_\d+)+$", "", name)


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
            operands.append(_base(str(getattr(arg.args[1], "name", arg.args[1]))))
        elif isinstance(arg, tirx.Call) and str(getattr(arg.op, "name", "")).endswith("address_of"):
            load = arg.args[0]
            if isinstance(load, tirx.BufferLoad):
                operands.append(_base(str(load.buffer.name)))
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
    return AscendFlag(kind=kind, core=core, source_pipe=pipe, target_pipe="", event=args[2], mode=_int(call.args[0]))


def _sections(device_mod: Any) -> tuple[dict[str, CoreSection], list[AscendFlag], str]:
    """What each core's section of the final kernel touches and the flags it holds, and the kernel's kind."""
    sections: dict[str, CoreSection] = {}
    flags: list[AscendFlag] = []
    kind = "unknown"
    for func in _funcs(device_mod):
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


def _simt_threads(device_mod: Any) -> list[int]:
    """Thread counts of the kernel's SimtVF regions."""
    threads: list[int] = []
    for func in _funcs(device_mod):

        def visit(node: Any) -> None:
            if isinstance(node, tirx.SBlock) and node.name_hint == "SIMT_VF":
                count = 1

                def inner(n: Any) -> None:
                    nonlocal count
                    if isinstance(n, tirx.AttrStmt) and n.attr_key == "thread_extent":
                        count *= _int(n.value) or 1

                tirx.stmt_functor.post_order_visit(node.body, inner)
                threads.append(count)

        tirx.stmt_functor.post_order_visit(func.body, visit)
    return threads


def _merged(device_mod: Any) -> dict[str, tuple[str, int]]:
    """Each buffer the final kernel declares over another's storage (``MergeUBAllocations``, the dynamic L1):
    its name to the allocation's name and bytes."""
    merged: dict[str, tuple[str, int]] = {}
    allocations: dict[Any, tuple[str, int]] = {}

    def visit(node: Any) -> None:
        if isinstance(node, tirx.AllocBuffer):
            size = 1
            for d in node.buffer.shape:
                size *= _int(d) or 0
            allocations[node.buffer.data] = (str(node.buffer.name), size * _dtype_bytes(str(node.buffer.dtype)))
        elif isinstance(node, tirx.DeclBuffer) and node.buffer.data in allocations:
            owner = allocations[node.buffer.data]
            if _base(owner[0]) != _base(str(node.buffer.name)):
                merged.setdefault(_base(str(node.buffer.name)), owner)

    for func in _funcs(device_mod):
        tirx.stmt_functor.post_order_visit(func.body, visit)
    return merged


def _dtype_bytes(dtype: str) -> int:
    bits = re.search(r"(\d+)", dtype)
    if dtype == "bool":
        return 1
    return max(1, int(bits.group(1)) // 8) if bits else 4


def _buffers(buffers: list[Buffer], versions: dict[str, int]) -> list[AscendBuffer]:
    found = []
    for buf in buffers:
        level = ascend_level(buf.scope)
        if level is None:
            continue
        slots = versions.get(buf.name, 1)
        found.append(
            AscendBuffer(
                name=buf.name,
                level=level,
                shape=list(buf.shape),
                dtype=buf.dtype,
                bytes=buf.bytes,
                slots=slots,
                line=buf.line,
                is_param=buf.is_param,
            )
        )
    return found


def _with_merge(buf: AscendBuffer, merged: dict[str, tuple[str, int]], offsets: dict[str, int]) -> AscendBuffer:
    if buf.name not in merged:
        return buf
    owner, size = merged[buf.name]
    return replace(buf, storage=owner, storage_bytes=size, offset=offsets.get(buf.name))


MERGE_PASS = "tl.MergeUBAllocations"


def _offsets(modules: list[Any], names: list[str]) -> dict[str, int]:
    """Each merged buffer's byte offset in its allocation, as ``tl.MergeUBAllocations`` placed it.

    The pass rewrites every ``tvm_access_ptr(dtype, buffer.data, index, ...)`` of a merged buffer to
    ``tvm_access_ptr(dtype, arena.data, FloorDiv(bit_offset, bits) + index, ...)``; the calls before and
    after it pair up in program order (every occurrence visited, ``ir_transform`` does not skip shared nodes).
    """
    at = next((i for i, n in enumerate(names) if n == MERGE_PASS), None)
    if at is None or at == 0 or at >= len(modules):
        return {}
    found: dict[str, int] = {}
    for before, after in zip(_access_ptrs(modules[at - 1]), _access_ptrs(modules[at]), strict=False):
        old, new = before.args[1], after.args[1]
        if not (isinstance(old, tirx.Var) and isinstance(new, tirx.Var)) or old.same_as(new):
            continue
        bits = _placed_bits(after.args[2])
        if bits is not None:
            found.setdefault(_base(str(old.name)), bits // 8)
    return found


def _access_ptrs(module: Any) -> list[Any]:
    found: list[Any] = []

    def post(node: Any) -> None:
        if isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")).endswith("tvm_access_ptr"):
            found.append(node)

    for func in _funcs(module):
        tirx.stmt_functor.ir_transform(func.body, None, post, ["tirx.Call"])
    return found


def _placed_bits(index: Any) -> int | None:
    """``FloorDiv(bit_offset, bits) + ...``: the bit offset the merge added to an index."""
    while isinstance(index, tirx.Add):
        if isinstance(index.a, tirx.FloorDiv) and isinstance(index.a.a, tirx.IntImm):
            return int(index.a.a)
        index = index.a
    if isinstance(index, tirx.FloorDiv) and isinstance(index.a, tirx.IntImm):
        return int(index.a)
    return None


def _memory(buffers: list[AscendBuffer], simt: bool) -> list[MemoryLevel]:
    levels = []
    for level in _LEVEL_ORDER[1:]:
        on = [b for b in buffers if b.level == level and not b.is_param]
        if not on:
            continue
        capacity = ASCEND_UB_WITH_SIMT if level == "UB" and simt else ASCEND_LEVELS[level]
        used = sum((b.bytes or 0) * b.slots for b in on)
        levels.append(
            MemoryLevel(level=level, capacity=capacity, used=used, buffers=[b.name for b in on], fits=used <= capacity)
        )
    return levels


def _overflow(level: MemoryLevel, kernel: str, buffers: list[AscendBuffer], auto_schedule: bool) -> Diagnostic:
    first = next((b.line for b in buffers if b.level == level.level and b.line), None)
    form = None if auto_schedule else "manual"
    return diagnostic(
        "ascend-memory-overflow",
        Span(line=first or 1),
        form=form,
        kernel=kernel,
        level=level.level,
        used=level.used,
        capacity=level.capacity,
        buffers=", ".join(level.buffers),
    )
