"""The schedule of an Ascend kernel as an engineer sketches it: Cube and Vector side by side, flags between.

One view, drawn alike by ``tilescope schedule``, the language server and VS Code. It is computed from
``AscendModel`` (the kernel after TileLang's ``tl.InsertSync`` and the final kernel), in program
order: a Cube (AIC) statement is a row of the left lane, a Vector (AIV) one of the right lane,
control both cores run spans both; loops head the rows they hold, with their stages and the buffers
given several slots. Every flag is a row of its core's lane, and each one that is set gets arrows to
the waits it releases (:func:`flag_arrows`): across the middle for a Cube-Vector flag, along the
lane for a flag between two pipes of one core. The memory plan comes per level, each buffer with
the place ``tl.MergeUBAllocations`` gave it. Plain data and text, no TileLang.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tilescope.core.display import kib, shape_text, stages_text
from tilescope.core.model import AscendBuffer, AscendFlag, AscendLoop, AscendModel, KernelModel, ScheduleStep

WIDTH = 46
"""Characters of one lane in the text drawing."""
Lane = Literal["cube", "vector", "both"]
RowKind = Literal["loop", "op", "flag", "slot", "control"]
"""``slot``: the compiler's multi-buffer rotation (a version counter's update); ``control``: scalar code."""
When = Literal["next", "next iteration", "after the loop"]
LANE_NAMES: dict[str, str] = {"cube": "Cube (AIC)", "vector": "Vector (AIV)", "both": "both cores"}
CORES_TEXT = {"mix": "Cube + Vector", "cube": "Cube", "vector": "Vector"}
VECTOR_SLOTS = 16
"""Cube-Vector flag ids per Vector core: the Cube core addresses the second Vector core's flag ``id`` as
``id + 16`` (TileLang's ``tl.InsertSync``), while both Vector cores run the same code with ``id``."""


@dataclass(frozen=True)
class FlagMark:
    """A flag as its row shows it: ``notify MTE2→MTE1 #slot % 2``, ``arrive FIX flag 1``."""

    kind: str
    """``set``, ``wait`` (between two pipes of one core), ``cross-set`` or ``cross-wait``."""
    pipes: str
    """``MTE2→MTE1`` for a pipe flag; the pipe it is raised after or waited on for a cross-core one."""
    event: str
    """The event or flag id, a multi-buffer rotation written ``slot % 2``."""
    across: bool
    """A flag between the Cube core and its Vector cores."""
    all_cores: bool
    """A flag between all AI cores of the launch (a split-K reduction's barrier)."""


@dataclass(frozen=True)
class ScheduleRow:
    row: int
    lane: Lane
    kind: RowKind
    depth: int
    """Loops around it (a loop row: loops around the loop)."""
    text: str
    """Without the source line, which is ``line``."""
    line: int | None
    step: int | None
    """``ScheduleStep.index`` of the model; ``None`` for a loop row."""
    flag: FlagMark | None = None
    loop: int | None = None
    """A loop row's index into ``AscendModel.loops``."""


@dataclass(frozen=True)
class FlagArrow:
    """A set flag and a wait it releases, by row; ``when`` the wait runs after the set."""

    source: int
    target: int
    across: bool
    label: str
    """``FIX→MTE3 #1`` across the cores, ``MTE2→MTE1 #slot % 2`` along one."""
    when: When
    """``next``: later in the same pass; ``next iteration``: above it, in the loop's next iteration;
    ``after the loop``: below it, once the loop around the set is done."""
    vector_core: int | None = None
    """Which Vector core (0 or 1) a Cube-Vector flag is for, where its id says."""
    text: str = ""
    """The arrow in words, for readers of the text rather than the drawing."""


@dataclass(frozen=True)
class PlacedBuffer:
    name: str
    level: str
    shape: str
    dtype: str
    slots: int
    bytes: int | None
    line: int | None
    placement: str
    """``at buf_dyn_l1+128 KB, 2 × 64 KB``, or ``own allocation, 256 KB``."""


@dataclass(frozen=True)
class LevelPlan:
    level: str
    used: int
    capacity: int
    fits: bool
    text: str
    """``256 KB of 512 KB``."""
    buffers: list[str]


@dataclass(frozen=True)
class ScheduleView:
    kernel: str
    kind: str
    """``mix``, ``cube`` or ``vector``."""
    cores: str
    """``Cube + Vector``."""
    title: str
    lens: str
    """``Schedule · Cube + Vector · 17 flags``: the code lens above the kernel."""
    levels: list[LevelPlan]
    placed: list[PlacedBuffer]
    """On-chip buffers in declaration order."""
    simt_threads: list[int]
    rows: list[ScheduleRow]
    arrows: list[FlagArrow]
    flags: int
    """Flags of the final kernel (the AscendC's ``asc_sync_*`` calls)."""
    flags_text: str
    scheduled: bool
    lanes: dict[str, str] = field(default_factory=lambda: dict(LANE_NAMES))


class NoSchedule(LookupError):
    """The kernel has no Ascend schedule; the message says what it has."""


def _event(text: str) -> str:
    """A multi-buffer rotation (``x_l1_version_counter_1[0] % 2``) as ``slot % 2``."""
    return re.sub(r"\(?\b\w+_version_counter(?:_\d+)?\[0\]\)?", "slot", text)


def _mark(flag: AscendFlag) -> FlagMark:
    pipes = f"{flag.source_pipe}→{flag.target_pipe}" if flag.kind in ("set", "wait") else flag.source_pipe
    return FlagMark(flag.kind, pipes, _event(flag.event), flag.mode not in (None, 0), flag.mode == 0)


def _flag_text(mark: FlagMark) -> str:
    if mark.kind == "set":
        return f"notify {mark.pipes} #{mark.event}"
    if mark.kind == "wait":
        return f"wait {mark.pipes} #{mark.event}"
    scope = " (all cores)" if mark.all_cores else ""
    return f"{'arrive' if mark.kind == 'cross-set' else 'wait'} {mark.pipes} flag {mark.event}{scope}"


def _step_row(row: int, step: ScheduleStep) -> ScheduleRow:
    lane: Lane = "both" if step.core == "scalar" else step.core
    if step.flag is not None:
        mark = _mark(step.flag)
        return ScheduleRow(row, lane, "flag", step.depth, _flag_text(mark), step.line, step.index, flag=mark)
    if step.op == "store" and any("_version_counter" in n for n in step.operands):
        return ScheduleRow(row, lane, "slot", step.depth, "slot counter", step.line, step.index)
    if step.op == "copy" and len(step.operands) == 2:
        text = f"copy {step.operands[0]} → {step.operands[1]}"
    else:
        operands = ", ".join(step.operands)
        text = f"{step.op}({operands})" if operands else step.op
    return ScheduleRow(row, lane, "control" if lane == "both" else "op", step.depth, text, step.line, step.index)


def _loop_text(loop: AscendLoop) -> str:
    parts = [f"for {loop.loop_var} in {loop.extent if loop.extent is not None else '?'}"]
    if loop.num_stages:
        parts.append(stages_text(loop.num_stages))
    if loop.multi_buffered:
        parts.append("multi-buffered " + ", ".join(loop.multi_buffered))
    return " · ".join(parts)


def _placed(buf: AscendBuffer) -> PlacedBuffer:
    size = f"{buf.slots} × {kib(buf.bytes or 0)}" if buf.slots > 1 else kib(buf.bytes or 0)
    if buf.storage is None:
        placement = f"own allocation, {size}"
    else:
        at = ("+" + (kib(buf.offset) if buf.offset else "0")) if buf.offset is not None else "+?"
        placement = f"at {buf.storage}{at}, {size}"
    return PlacedBuffer(
        buf.name, buf.level, shape_text(buf.shape), buf.dtype, buf.slots, buf.bytes, buf.line, placement
    )


def _enclosing(plan: AscendModel, index: int | None) -> list[int]:
    """The loop ``index`` and the loops around it, outermost first (loops are listed in program order, each
    after the ones around it, one level deeper)."""
    if index is None:
        return []
    chain = [index]
    for earlier in range(index - 1, -1, -1):
        if plan.loops[earlier].depth < plan.loops[chain[0]].depth:
            chain.insert(0, earlier)
    return chain


def _rows(plan: AscendModel, scalars: bool) -> tuple[list[ScheduleRow], dict[int, list[int]]]:
    """The drawn rows, and each step row's loops (outermost first). Scalar control is drawn only where it
    is a statement of the user's (``scalars``: all of it); a loop heads its rows from its first step on."""
    rows: list[ScheduleRow] = []
    loops_of: dict[int, list[int]] = {}
    shown: set[int] = set()
    for step in plan.schedule:
        chain = _enclosing(plan, step.loop_index)
        for index in chain:
            if index not in shown:
                shown.add(index)
                loop = plan.loops[index]
                rows.append(
                    ScheduleRow(len(rows), "both", "loop", loop.depth, _loop_text(loop), loop.line, None, loop=index)
                )
        if step.core == "scalar" and not (scalars or (step.line is not None and step.op not in ("scalar", "store"))):
            continue
        loops_of[len(rows)] = chain
        rows.append(_step_row(len(rows), step))
    return rows, loops_of


def _literal(event: str) -> int | None:
    return int(event) if event.isdigit() else None


def _pairs(setter: ScheduleRow, waiter: ScheduleRow) -> int | Literal[False] | None:
    """Whether ``waiter`` waits for what ``setter`` sets: ``False`` if not, else the Vector core the pair is
    for (``None`` when unknown). A rotating event may be any of its slots, so it pairs with a literal one."""
    a, b = setter.flag, waiter.flag
    if a is None or b is None or a.all_cores or b.all_cores:
        return False
    if a.kind == "set":
        if b.kind != "wait" or setter.lane != waiter.lane or a.pipes != b.pipes:
            return False
        return None if a.event == b.event or _literal(a.event) is None or _literal(b.event) is None else False
    if a.kind != "cross-set" or b.kind != "cross-wait" or setter.lane == waiter.lane or not (a.across and b.across):
        return False
    cube, vector = (a, b) if setter.lane == "cube" else (b, a)
    cube_id, vector_id = _literal(cube.event), _literal(vector.event)
    if cube_id is None or vector_id is None:
        return None if cube.event == vector.event or cube_id is None or vector_id is None else False
    return cube_id // VECTOR_SLOTS if cube_id % VECTOR_SLOTS == vector_id else False


def _group(rows: list[ScheduleRow], setter: ScheduleRow, start: int, stop: int) -> list[tuple[int, int | None]]:
    """The first wait in ``rows[start:stop]`` paired with ``setter`` and the paired waits right after it
    (nothing but flags between them on that core), with the Vector core of each."""
    found: list[tuple[int, int | None]] = []
    for row in rows[start:stop]:
        if found and row.lane in (rows[found[0][0]].lane, "both") and row.kind != "flag":
            break
        paired = _pairs(setter, row)
        if paired is not False:
            found.append((row.row, paired))
    return found


def flag_arrows(rows: list[ScheduleRow], loops_of: dict[int, list[int]]) -> list[FlagArrow]:
    """Each set flag to the waits it releases: the next paired wait below it (with the paired waits right
    after that one), and, when that wait is outside the set's loop or there is none, the first paired
    wait above it in the innermost loop around the set that has one: the loop's next iteration."""
    heads = {r.loop: r.row for r in rows if r.kind == "loop"}
    arrows: list[FlagArrow] = []
    for setter in rows:
        if setter.flag is None or setter.flag.kind not in ("set", "cross-set"):
            continue
        chain = loops_of.get(setter.row, [])
        ahead = _group(rows, setter, setter.row + 1, len(rows))
        ahead_loops = set(loops_of.get(ahead[0][0], [])) if ahead else set[int]()
        for loop in reversed(chain):
            if loop in ahead_loops:
                break
            back = _group(rows, setter, heads[loop] + 1, setter.row)
            if back:
                arrows.extend(_arrow(rows, setter, target, core, "next iteration") for target, core in back)
                break
        for target, core in ahead:
            when: When = "next" if set(chain) <= set(loops_of.get(target, [])) else "after the loop"
            arrows.append(_arrow(rows, setter, target, core, when))
    return arrows


def _arrow(rows: list[ScheduleRow], setter: ScheduleRow, target: int, core: int | None, when: When) -> FlagArrow:
    waiter = rows[target]
    assert setter.flag is not None and waiter.flag is not None
    across = setter.flag.kind == "cross-set"
    if across:
        event = waiter.flag.event if setter.lane == "cube" else setter.flag.event  # the Vector core's own id
        label = f"{setter.flag.pipes}→{waiter.flag.pipes} #{event}"
    else:
        label = f"{setter.flag.pipes} #{setter.flag.event}"
    where = f" (AIV {core})" if core is not None else ""
    text = f"{LANE_NAMES[setter.lane]} {setter.text} → {LANE_NAMES[waiter.lane]} {waiter.text}{where}" + (
        "" if when == "next" else f", {when}"
    )
    return FlagArrow(setter.row, target, across, label, when, core, text)


def schedule_lens(model: KernelModel) -> str | None:
    """``Schedule · Cube + Vector · 17 flags``, for an Ascend kernel; ``None`` for any other."""
    plan = model.ascend
    if plan is None:
        return None
    return f"Schedule · {CORES_TEXT.get(plan.kernel_kind, plan.kernel_kind)} · {len(plan.flags)} flags"


def schedule_view(model: KernelModel, scalars: bool = False) -> ScheduleView:
    """The side-by-side schedule of one Ascend kernel; ``scalars`` adds every scalar statement."""
    plan = model.ascend
    if plan is None:
        raise NoSchedule(f"kernel {model.kernel!r} has no Ascend schedule (target {model.target})")
    rows, loops_of = _rows(plan, scalars)
    by_core = {("Cube" if c == "aic" else "Vector"): s.flags for c, s in sorted(plan.sections.items())}
    cores = CORES_TEXT.get(plan.kernel_kind, plan.kernel_kind)
    args = " ".join(f"{k}={v}" for k, v in model.args.items())
    return ScheduleView(
        kernel=model.kernel,
        kind=plan.kernel_kind,
        cores=cores,
        title=f"{model.kernel}({args}) · ascend · {cores}" if args else f"{model.kernel} · ascend · {cores}",
        lens=schedule_lens(model) or "",
        levels=[
            LevelPlan(m.level, m.used, m.capacity, m.fits, f"{kib(m.used)} of {kib(m.capacity)}", list(m.buffers))
            for m in plan.memory
        ],
        placed=[_placed(b) for b in plan.buffers if not b.is_param],
        simt_threads=list(plan.simt_threads),
        rows=rows,
        arrows=flag_arrows(rows, loops_of),
        flags=len(plan.flags),
        flags_text=f"flags in the AscendC: {len(plan.flags)} ("
        + ", ".join(f"{core} {n}" for core, n in by_core.items())
        + ")",
        scheduled=plan.scheduled,
    )


def _cell(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _row_text(row: ScheduleRow) -> str:
    if row.kind in ("flag", "slot"):
        return f"· {row.text}"
    return f"L{row.line} {row.text}" if row.line else row.text


def schedule_text(model: KernelModel, scalars: bool = False) -> str:
    """The side-by-side schedule of one Ascend kernel, its memory plan and its flag totals, as text."""
    if model.ascend is None:
        return f"kernel {model.kernel}: no Ascend schedule (target {model.target})"
    return schedule_view_text(schedule_view(model, scalars))


def schedule_view_text(view: ScheduleView) -> str:
    """``schedule_text`` of a view already made."""
    lines = [f"kernel {view.kernel}  target ascend  {view.kind} kernel"]
    for level in view.levels:
        mark = "" if level.fits else "  OVER CAPACITY"
        lines.append(f"  {level.level:4} {level.text}: {', '.join(level.buffers)}{mark}")
    if view.placed:
        lines.append("  address plan: " + "; ".join(f"{b.name} {b.level} {b.placement}" for b in view.placed))
    if view.simt_threads:
        lines.append(f"  SimtVF regions: {', '.join(str(t) for t in view.simt_threads)} threads")
    lines.append("")
    lines.extend(line.rstrip() for line in _columns(view))
    lines.append("")
    lines.append(view.flags_text)
    return "\n".join(lines)


def _columns(view: ScheduleView) -> list[str]:
    head = f"{LANE_NAMES['cube']:<{WIDTH}}   {'':^9}   {LANE_NAMES['vector']}"
    lines = [head, "─" * len(head)]
    for row in view.rows:
        indent = "  " * row.depth
        if row.kind == "loop":
            lines.append(f"{indent}┌ {_row_text(row)}")
        elif row.lane == "both":
            lines.append(f"{indent}{_cell('both: ' + _row_text(row), 2 * WIDTH)}")
        else:
            middle = ""
            if row.flag is not None and row.flag.kind == "cross-set" and row.flag.across:
                middle = "──────▶" if row.lane == "cube" else "◀──────"
            text = _cell(indent + _row_text(row))
            if row.lane == "cube":
                lines.append(f"{text:<{WIDTH}}   {middle:^9}")
            else:
                lines.append(f"{'':<{WIDTH}}   {middle:^9}   {text}")
    return lines
