"""``tilescope layout FILE --buffer NAME``: draw an inferred layout to an image or the terminal."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tilescope.core import Analyzer
from tilescope.core.model import KernelModel, Layout
from tilescope.visualizer.analyze import kernel_model
from tilescope.visualizer.layout_view import build


def _chosen(kernel: KernelModel, args: argparse.Namespace) -> list[Layout] | None:
    if args.all:
        return list(kernel.layouts)
    layout = kernel.layout(args.buffer) if args.buffer else None
    if layout is None:
        available = ", ".join(f"{lay.buffer} ({lay.kind})" for lay in kernel.layouts) or "none"
        problem = f"no inferred layout for {args.buffer!r}" if args.buffer else "choose --buffer NAME or --all"
        print(f"tilescope layout: {problem}; layouts of {kernel.kernel}: {available}", file=sys.stderr)
        return None
    return [layout]


def _destination(args: argparse.Namespace, kernel: str, buffer: str, many: bool) -> Path:
    if not args.output:
        return Path(f"{kernel}-{buffer}.png")
    out = Path(args.output)
    if many:
        return out.with_name(f"{out.stem}-{buffer}{out.suffix or '.png'}")
    return out


def run(args: argparse.Namespace) -> int:
    with Analyzer(timeout_s=args.timeout) as analyzer:
        _, kernel = kernel_model(args, analyzer)
    if kernel is None:
        return 1
    layouts = _chosen(kernel, args)
    if layouts is None:
        return 2
    for layout in layouts:
        view = build(layout, kernel.buffer(layout.buffer))
        if args.term:
            from rich.console import Console
            from tilescope.visualizer.layout_term import render

            render(view, Console())
        if args.output or not args.term:
            from tilescope.visualizer.layout_plot import save

            started = time.perf_counter()
            path = save(view, _destination(args, kernel.kernel, layout.buffer, len(layouts) > 1))
            took = time.perf_counter() - started
            print(f"{path}: {layout.buffer} ({layout.kind}), {path.stat().st_size // 1024} KiB in {took:.2f} s")
    return 0
