"""``tilescope layout FILE [--buffer NAME]``: draw an inferred layout to an image or the terminal.

The buffer (the first in the core's plot order unless named), its view and everything drawn come
from :mod:`tilescope.core.ide.layout_view`; ``--json`` prints that view as the editors receive it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tilescope.core.display import kib
from tilescope.core.environment import require_extra
from tilescope.core.ide import KernelLayout, NoLayout, choose, layout_buffers
from tilescope.core.model import KernelModel, dumps
from tilescope.visualizer.analyze import kernel_model, open_analyzer


def _chosen(kernel: KernelModel, args: argparse.Namespace) -> list[KernelLayout] | None:
    try:
        if args.all:
            return [choose(kernel, name) for name in layout_buffers(kernel)]
        return [choose(kernel, args.buffer)]
    except NoLayout as error:
        print(f"tilescope layout: {error}", file=sys.stderr)
        return None


def _destination(args: argparse.Namespace, kernel: str, buffer: str, many: bool) -> Path:
    if not args.output:
        return Path(f"{kernel}-{buffer}.png")
    out = Path(args.output)
    if many:
        return out.with_name(f"{out.stem}-{buffer}{out.suffix or '.png'}")
    return out


def run(args: argparse.Namespace) -> int:
    if not args.json and (args.output or not args.term):
        # Said before the analysis, not after it: an image needs matplotlib (the ``plots`` extra).
        require_extra("plots", "layout", also="or draw in the terminal with --term, or print the view with --json")
    with open_analyzer(args) as analyzer:
        _, kernel = kernel_model(args, analyzer)
    if kernel is None:
        return 1
    chosen = _chosen(kernel, args)
    if chosen is None:
        return 2
    if args.json:
        print(dumps(chosen if args.all else chosen[0], indent=1))
        return 0
    for choice in chosen:
        view = choice.view
        if args.term:
            from rich.console import Console
            from tilescope.visualizer.layout_term import render

            render(view, Console())
        if args.output or not args.term:
            try:
                from tilescope.visualizer.layout_plot import save
            except ImportError as err:
                print(
                    f"tilescope layout: drawing an image needs matplotlib ({err}): pip install 'tilescope[plots]', "
                    "or draw in the terminal with --term, or print the view with --json",
                    file=sys.stderr,
                )
                return 2

            started = time.perf_counter()
            path = save(view, _destination(args, kernel.kernel, view.buffer, len(chosen) > 1))
            took = time.perf_counter() - started
            print(f"{path}: {view.buffer} ({view.kind}), {kib(path.stat().st_size)} in {took:.2f} s")
    return 0
