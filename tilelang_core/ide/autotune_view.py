"""Hover on an ``@autotune`` decorator: every config of the kernel and whether it can run, as Markdown."""

from __future__ import annotations

from tilescope.core.ide.describe import HoverText
from tilescope.core.ide.merge import Facts
from tilescope.core.model import Autotune, Span


def autotune_hover(facts: Facts, line: int) -> HoverText | None:
    """The configs table of the compiled kernel whose ``@autotune`` decorator is on ``line``."""
    for kernel in facts.static.kernels:
        model = facts.model(kernel)
        if model is not None and model.autotune is not None and model.autotune.line == line:
            return HoverText(configs_markdown(model.kernel, model.autotune), Span(line, 0, line))
    return None


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def configs_markdown(kernel: str, tune: Autotune) -> str:
    chosen = {
        "first-fit": f"config {tune.chosen} (the first that fits)",
        "directive": f"config {tune.chosen} (`config={tune.chosen}`)",
        "call": "the call site's own values (TileLang skips tuning)",
    }[tune.chosen_by]
    lines = [
        f"**{kernel}**: {tune.summary}; analysed with {chosen}. The autotuner never runs.",
        "",
        "| # | config | status | shared B | threads | why |",
        "|---|---|---|---|---|---|",
    ]
    for c in tune.configs:
        values = ", ".join(f"{k}={v}" for k, v in c.values.items())
        where = f" (line {c.line})" if c.line else ""
        reason = f"{c.reason}{where}" if c.reason else ""
        shared = "" if c.shared_bytes is None else c.shared_bytes
        threads = "" if c.threads is None else c.threads
        lines.append(f"| {c.index} | {_cell(values)} | {c.status} | {shared} | {threads} | {_cell(reason)} |")
    return "\n".join(lines)
