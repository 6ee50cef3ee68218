"""``tilescope trace FILE``: open the pass viewer, or ``--export html|patch`` the whole trace."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tilescope.core.cli.kernel_options import KernelOptions
from tilescope.core.display import kib
from tilescope.visualizer.analyze import kernel_model, open_analyzer
from tilescope.visualizer.trace_session import TraceSession, open_session


def run(args: argparse.Namespace) -> int:
    if not (args.export or args.text) and not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("tilescope trace: the pass viewer needs a terminal; use --text or --export html|patch", file=sys.stderr)
        return 2
    with open_analyzer(args) as analyzer:
        result, kernel = kernel_model(args, analyzer)
        if kernel is None:
            return 1
        session = TraceSession(analyzer, result.path, kernel)
        if args.text:
            from tilescope.visualizer.trace_export import to_patch

            print(to_patch(session), end="")
            return 0
        if args.export:
            from tilescope.visualizer.trace_export import to_html, to_patch

            started = time.perf_counter()
            text = to_html(session) if args.export == "html" else to_patch(session)
            out = Path(args.output or f"{kernel.kernel}-trace.{args.export}")
            out.write_text(text)
            took = time.perf_counter() - started
            changed = sum(p.changed for p in session.passes)
            print(f"{out}: {len(session.passes)} passes, {changed} changed the IR, {kib(len(text))} in {took:.2f} s")
            return 0
        from tilescope.visualizer.trace_app import TraceApp

        options = KernelOptions.from_args(args)

        def open_kernel(name: str) -> TraceSession:
            return open_session(
                analyzer, result.path, name, target=options.target, args=options.args or None, timeout_s=args.timeout
            )

        TraceApp(session, [k.name for k in result.discovered], open_kernel).run()
    return 0
