"""``tilescope variants FILE``: every target and autotune config of a file's kernels, side by side.

One row per variant; ``--json`` prints the ``VariantsReport`` record (schema in
``tilelang_core/SCHEMA.md``); ``--diff A B`` prints what changed between two variants, named
``TARGET`` or ``TARGET:CONFIG``; ``--ray [ADDRESS]`` lowers the variants on a Ray cluster's slots
(the same report). The exit status is non-zero when no variant can run.

An autotuned kernel may have hundreds of configs, five targets each: before lowering, the command
says how many lowerings it will start and about how long they take (timed on the first round), asks
on a terminal when there are more than ``ASK_ABOVE``, and on a pipe refuses them (exit status 2)
unless ``--yes`` says to go on. Meanwhile a status line on a terminal, or a line every
``PIPE_EVERY`` lowerings on a pipe, says how far it is.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from contextlib import AbstractContextManager

from tilescope.core.cli.kernel_options import KernelOptions, UsageError, add_kernel_options, readable
from tilescope.core.cli.terminal import Status, display_path
from tilescope.core.cli.variant_diff import diff
from tilescope.core.compiler.variants import (
    DEFAULT_TARGETS,
    Lowerer,
    Progress,
    VariantPlan,
    label,
    lower_variants,
    parse_configs,
    plan_variants,
    pool,
)
from tilescope.core.display import dims_text
from tilescope.core.environment import require_extra
from tilescope.core.model import KernelModel, Variant, VariantDiff, VariantsReport, dumps
from tilescope.core.targets import target_error

ASK_ABOVE = 100
"""Lowerings started without asking (every target of a few kernels; an autotuned one's configs are more)."""
PIPE_EVERY = 50
"""Lowerings between two progress lines on a pipe."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    parser.add_argument(
        "--targets", default=",".join(DEFAULT_TARGETS), help=f"comma-separated (default {','.join(DEFAULT_TARGETS)})"
    )
    parser.add_argument("--configs", default="all", help="autotune configs: all (default) or N,M,...")
    parser.add_argument("--ptxas", action="store_true", help="registers and spills from ptxas (CUDA targets)")
    add_kernel_options(
        parser, target=False, jobs=min(2, os.cpu_count() or 1), ray="the variants", timeout_help="seconds per variant"
    )
    parser.add_argument("--diff", nargs=2, metavar=("A", "B"), help="what changed from variant A to B (sm_80, sm_90:3)")
    parser.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help=f"lower more than {ASK_ABOVE} variants without asking (needed on a pipe)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args)
    try:
        configs = parse_configs(args.configs)
    except ValueError as err:
        raise UsageError(f"argument --configs: {err}") from None
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    for name in targets:
        if target_error(name):
            raise UsageError(f"argument --targets: {target_error(name)}")
    if args.diff:
        targets = list(dict.fromkeys([*(d.split(":")[0] for d in args.diff)]))
        try:  # lower only what the diff needs
            configs = sorted({int(d.split(":")[1]) for d in args.diff if ":" in d})
        except ValueError:
            raise UsageError(f"argument --diff: expected TARGET or TARGET:CONFIG, got {' '.join(args.diff)}") from None
    options.check_parameters(readable([args.file]))
    with _lowerer(options, args.jobs) as workers:
        with Status(f"tilescope variants: lowering each kernel of {args.file} on {targets[0]}"):
            planned = plan_variants(
                workers,
                args.file,
                kernel=options.kernel,
                targets=targets,
                configs=configs,
                args=options.args or None,
                ptxas=args.ptxas,
            )
        refused = _announce(planned, workers.count, args.yes)
        if refused is not None:
            return refused
        with Status(f"tilescope variants: lowering {len(planned.todo)} variants") as status:
            report = lower_variants(workers, planned, _progress(status))
    if args.diff:
        return _print_diff(report, args.diff[0], args.diff[1], args.json)
    print(dumps(report, indent=2) if args.json else render(report))
    return 0 if any(v.status in ("fits", "spills") for v in report.variants) else 1


def _announce(planned: VariantPlan, slots: int, yes: bool) -> int | None:
    """Say how many lowerings are left and about how long they take; above ``ASK_ABOVE`` without
    ``--yes``, ask on a terminal or refuse on a pipe. The exit status when not going on, else ``None``."""
    count = len(planned.todo)
    if not count:
        return None
    kernels = len({job.kernel for job in planned.todo})
    configs = max((len(space) for space in planned.spaces.values()), default=0)
    shape = f"{kernels} kernel{'s' if kernels > 1 else ''}" + (f", up to {configs} autotune configs" if configs else "")
    estimate = f"about {_duration(planned.estimate_s(slots))} with {slots} worker{'s' if slots > 1 else ''}"
    print(f"tilescope variants: {count} lowerings to go ({shape}), {estimate}", file=sys.stderr)
    if count <= ASK_ABOVE or yes:
        return None
    fewer = "--configs 0,1,2 or --targets sm_90 lower fewer; -j N lowers N at once"
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        print(f"tilescope variants: not starting {count} lowerings without --yes ({fewer})", file=sys.stderr)
        return 2
    sys.stderr.write(f"Lower all {count}? [y/N] ")
    sys.stderr.flush()
    if sys.stdin.readline().strip().lower() in ("y", "yes"):
        return None
    print(f"tilescope variants: nothing lowered ({fewer})", file=sys.stderr)
    return 1


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def _progress(status: Status) -> Progress:
    """On a terminal the status line counts the lowerings and the time left; on a pipe a line every
    ``PIPE_EVERY``, so a log shows the work going on."""
    started = time.monotonic()
    on_terminal = sys.stderr.isatty()

    def step(done: int, total: int, index: int) -> None:
        left = (time.monotonic() - started) / done * (total - done)
        line = f"tilescope variants: {done}/{total} lowered, about {_duration(left)} left"
        if on_terminal:
            status.update(line)
        elif done % PIPE_EVERY == 0 and done < total:
            print(line, file=sys.stderr, flush=True)

    return step


def _lowerer(options: KernelOptions, jobs: int) -> AbstractContextManager[Lowerer]:
    """This machine's ``jobs`` workers, or ``jobs`` slots on a Ray cluster (``--ray``)."""
    if options.ray is None:
        return pool(jobs, options.timeout_s, options.memory_mb, options.python)
    require_extra("cluster", "variants --ray")
    from tilescope.core.compiler.cluster import Slots

    return Slots(jobs, options.analyzer_options(), options.ray_address())


def _find(report: VariantsReport, name: str) -> Variant:
    matches = [v for v in report.variants if label(v) == name]
    if not matches:
        raise UsageError(f"argument --diff: no variant {name!r}; have {', '.join(label(v) for v in report.variants)}")
    return matches[0]


def _print_diff(report: VariantsReport, a: str, b: str, as_json: bool) -> int:
    result = diff(_find(report, a), _find(report, b), a, b)
    print(dumps(result, indent=2) if as_json else render_diff(result))
    return 0


def render_diff(d: VariantDiff) -> str:
    out = [f"--- {d.a}", f"+++ {d.b}"]
    for title, changes in (("resources", d.resources), ("layouts", d.layouts), ("passes", d.passes)):
        out.append(f"{title}: {'no change' if not changes else ''}".rstrip())
        for c in changes:
            if title == "passes":
                out.append(f"  {'-' if c.a else '+'} {c.a or c.b}")
            else:
                out.append(f"  {c.what}: {c.a if c.a is not None else '-'} → {c.b if c.b is not None else '-'}")
    return "\n".join(out)


def _layouts(k: KernelModel) -> str:
    parts = []
    for layout in k.layouts:
        if layout.kind == "fragment":
            begin = f"@{layout.thread_begin}" if layout.thread_begin else ""
            parts.append(f"{layout.buffer} {layout.thread_extent}t{begin}×{layout.elements_per_thread}")
        else:
            parts.append(f"{layout.buffer} {(layout.swizzle or '').replace(' swizzle', '')}")
    return ", ".join(parts)


def _config(v: Variant) -> str:
    if v.config_index is None:
        return "-" if not v.kernels or v.kernels[0].autotune is None else "call"
    values = " ".join(f"{k}={val}" for k, val in (v.config or {}).items() if k != "pass_configs")
    return f"#{v.config_index} {values}"


def row(v: Variant) -> list[str]:
    k = v.kernels[0] if v.kernels else None
    if k is None or not k.passes:
        return [v.kernel, v.target, _config(v), "", "", "", "", "", "", v.status, ""]
    grid = dims_text(k.launch.grid_dims()) if k.launch else ""
    threads = str(k.launch.threads_after_ws) if k.launch else ""
    regs = f"{k.resources.registers}/{k.resources.spill_store_bytes}" if k.resources else "-"
    stages = ",".join(str(p.num_stages) for p in k.pipelines) or "-"
    return [
        v.kernel,
        v.target,
        _config(v),
        grid,
        threads,
        str(k.shared_bytes),
        regs,
        stages,
        str(len(k.passes)),
        v.status,
        _layouts(k),
    ]


HEADER = [
    "kernel",
    "target",
    "config",
    "grid",
    "threads",
    "smem B",
    "regs/spill",
    "stages",
    "passes",
    "status",
    "layouts",
]


def render(report: VariantsReport) -> str:
    rows = [HEADER, *(row(v) for v in report.variants)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER) - 1)]
    lines = [
        "  ".join([*(cell.ljust(w) for cell, w in zip(r[:-1], widths, strict=True)), r[-1]]).rstrip() for r in rows
    ]
    for v in report.variants:
        if v.reason:
            lines.append(f"{display_path(report.path)}:{v.line or 1}: {label(v)}: {v.status}: {v.reason}")
    others: dict[tuple[int, str, str, str], list[str]] = {}
    for v in report.variants:
        for d in [*v.diagnostics, *(d for k in v.kernels for d in k.diagnostics)]:
            if d.message != v.reason:
                others.setdefault((d.span.line, d.severity, d.code, d.message), []).append(label(v))
    for (line, severity, code, message), labels in others.items():
        where = "all variants" if len(labels) == len(report.variants) else ", ".join(labels)
        lines.append(f"{display_path(report.path)}:{line}: {severity}[{code}] ({where}): {message}")
    fits = sum(v.status in ("fits", "spills") for v in report.variants)
    lines.append(f"{len(report.variants)} variants: {fits} can run, {len(report.variants) - fits} cannot")
    return "\n".join(lines)
