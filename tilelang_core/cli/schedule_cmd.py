"""``tilescope schedule FILE``: an Ascend kernel's schedule, Cube and Vector side by side with the flags between.

The kernel is analysed by the compiler tier in the supervised worker (TileLang's own Ascend
pipeline, for the target the kernel declares, ``ascend`` unless ``--target`` says otherwise);
this command draws ``KernelModel.ascend`` (``ide.schedule_view``), or prints it as JSON. Exit
status 1 when the kernel was not lowered.
"""

from __future__ import annotations

import argparse
import sys

from tilescope.core.cli.kernel_options import KernelOptions, add_kernel_options, readable
from tilescope.core.cli.terminal import Status
from tilescope.core.compiler.service import Analyzer
from tilescope.core.ide import schedule_text
from tilescope.core.model import dumps


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang Ascend kernels")
    add_kernel_options(parser, one_kernel=True)
    parser.add_argument("--scalars", action="store_true", help="also draw the scalar control both cores run")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args).choose(args.file, "schedule")
    options.check_parameters(readable([args.file]))
    target = args.target or "ascend"
    with Status(f"tilescope schedule: lowering {args.file}"), Analyzer(**options.analyzer_options()) as analyzer:
        result = analyzer.analyze(
            args.file, target=target, kernel=options.kernel, args=options.args or None, hazards_s=0
        )
    model = result.kernel(options.kernel)
    if args.json:
        print(dumps(model.ascend if model is not None else None, indent=2))
    elif model is not None:
        print(schedule_text(model, scalars=args.scalars))
    errors = [d for d in result.all_diagnostics() if d.severity == "error"]
    for found in result.all_diagnostics():
        print(f"  {args.file}:{found.span.line}: {found.severity}[{found.code}]: {found.message}", file=sys.stderr)
    return 1 if errors or model is None or model.ascend is None else 0
