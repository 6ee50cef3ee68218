"""The schedule of an Ascend kernel as an engineer sketches it: Cube and Vector side by side, flags between.

Drawn from ``AscendModel.schedule`` (the kernel after TileLang's ``tl.InsertSync``), in program
order: a Cube (AIC) statement in the left column, a Vector (AIV) one in the right, control both
cores run across both; a pipe flag in its core's column (``notify MTE2→MTE1 #ev`` where the pipe
signals, ``wait`` where the next one waits), a Cube-Vector flag as an arrow across the middle. Loop
headers say their stages and the buffers given several slots. Plain text, no TileLang.
"""

from __future__ import annotations

import re

from tilescope.core.display import kib
from tilescope.core.model import AscendBuffer, AscendFlag, AscendLoop, AscendModel, KernelModel, ScheduleStep

WIDTH = 46
_CORE_NAMES = {"cube": "Cube (AIC)", "vector": "Vector (AIV)"}


def _event(text: str) -> str:
    """A multi-buffer rotation (``x_l1_version_counter_1[0] % 2``) as ``slot % 2``."""
    return re.sub(r"\(?\b\w+_version_counter(?:_\d+)?\[0\]\)?", "slot", text)


def _flag_text(flag: AscendFlag) -> str:
    if flag.kind == "set":
        return f"notify {flag.source_pipe}→{flag.target_pipe} #{_event(flag.event)}"
    if flag.kind == "wait":
        return f"wait {flag.source_pipe}→{flag.target_pipe} #{_event(flag.event)}"
    scope = " (all cores)" if flag.mode == 0 else ""
    return f"{'arrive' if flag.kind == 'cross-set' else 'wait'} {flag.source_pipe} flag {flag.event}{scope}"


def _step_text(step: ScheduleStep) -> str:
    where = f"L{step.line} " if step.line else ""
    if step.flag is not None:
        return f"· {_flag_text(step.flag)}"
    if step.op == "store" and any("_version_counter" in n for n in step.operands):
        return "· slot counter"  # the compiler's multi-buffer rotation
    if step.op == "copy" and len(step.operands) == 2:
        return f"{where}copy {step.operands[0]} → {step.operands[1]}"
    operands = ", ".join(step.operands)
    return f"{where}{step.op}({operands})" if operands else f"{where}{step.op}"


def _loop_text(loop: AscendLoop) -> str:
    parts = [f"for {loop.loop_var} in {loop.extent if loop.extent is not None else '?'}"]
    if loop.num_stages:
        parts.append(f"{loop.num_stages} stages")
    if loop.multi_buffered:
        parts.append("multi-buffered " + ", ".join(loop.multi_buffered))
    where = f"L{loop.line} " if loop.line else ""
    return where + " · ".join(parts)


def _placement(buf: AscendBuffer) -> str:
    """``x_l1 L1 at buf_dyn_l1+128 KB, 2 × 64 KB``: where the compiler put a buffer and how much it takes."""
    size = f"{buf.slots} × {kib(buf.bytes or 0)}" if buf.slots > 1 else kib(buf.bytes or 0)
    if buf.storage is None:
        return f"{buf.name} {buf.level} own allocation, {size}"
    at = ("+" + (kib(buf.offset) if buf.offset else "0")) if buf.offset is not None else "+?"
    return f"{buf.name} {buf.level} at {buf.storage}{at}, {size}"


def _cell(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def schedule_text(model: KernelModel, scalars: bool = False) -> str:
    """The side-by-side schedule of one Ascend kernel, its memory plan and its flag totals."""
    plan = model.ascend
    if plan is None:
        return f"kernel {model.kernel}: no Ascend schedule (target {model.target})"
    lines = [f"kernel {model.kernel}  target ascend  {plan.kernel_kind} kernel"]
    for level in plan.memory:
        mark = "" if level.fits else "  OVER CAPACITY"
        lines.append(f"  {level.level:4} {kib(level.used)} of {kib(level.capacity)}: {', '.join(level.buffers)}{mark}")
    placed = [b for b in plan.buffers if not b.is_param]
    if placed:
        lines.append("  address plan: " + "; ".join(_placement(b) for b in placed))
    if plan.simt_threads:
        lines.append(f"  SimtVF regions: {', '.join(str(t) for t in plan.simt_threads)} threads")
    lines.append("")
    lines.extend(line.rstrip() for line in _columns(plan, scalars))
    counts = {core: section.flags for core, section in plan.sections.items()}
    lines.append("")
    lines.append(
        f"flags in the AscendC: {len(plan.flags)} ("
        + ", ".join(f"{'Cube' if c == 'aic' else 'Vector'} {n}" for c, n in sorted(counts.items()))
        + ")"
    )
    return "\n".join(lines)


def _columns(plan: AscendModel, scalars: bool) -> list[str]:
    head = f"{_CORE_NAMES['cube']:<{WIDTH}}   {'':^9}   {_CORE_NAMES['vector']}"
    lines = [head, "─" * len(head)]
    shown: set[int] = set()
    for step in plan.schedule:
        for index in _enclosing(plan, step.loop_index):
            if index not in shown:
                shown.add(index)
                loop = plan.loops[index]
                lines.append("  " * loop.depth + f"┌ {_loop_text(loop)}")
        indent = "  " * step.depth
        if step.core == "scalar":
            if scalars or (step.line is not None and step.op not in ("scalar", "store")):
                lines.append(f"{indent}{_cell('both: ' + _step_text(step), 2 * WIDTH)}")
            continue
        text = indent + _step_text(step)
        middle = ""
        if step.flag is not None and step.flag.kind == "cross-set" and step.flag.mode != 0:
            middle = "──────▶" if step.core == "cube" else "◀──────"
        if step.core == "cube":
            lines.append(f"{_cell(text):<{WIDTH}}   {middle:^9}")
        else:
            lines.append(f"{'':<{WIDTH}}   {middle:^9}   {_cell(text)}")
    return lines


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
