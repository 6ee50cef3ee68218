"""``tilescope run FILE``: run one kernel on the CPU with the tile interpreter and report.

The kernel is built and interpreted in the core's supervised worker, never in this process. The
report gives each output's statistics, NaN/Inf counts and never-written elements, every
out-of-bounds or uninitialised access and every race with its line, and, with ``--compare`` or the
file's own ``ref_program``, the mismatches against a torch reference and who wrote the first wrong
element. Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import sys

from tilescope.core.cli.kernel_options import KernelOptions, add_kernel_options, readable
from tilescope.core.cli.terminal import Status, display_path
from tilescope.core.compiler.service import Analyzer
from tilescope.core.ide.run_view import run_failed as failed
from tilescope.core.ide.run_view import run_text as render
from tilescope.core.model import dumps
from tilescope.core.protocol import CONFIG_ARG


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    add_kernel_options(parser, one_kernel=True, target=False, timeout_help="seconds the run may compute")
    parser.add_argument(
        "--interpret",
        action="store_true",
        help="use the CPU interpreter (the only engine today; accepted so scripts can say so)",
    )
    parser.add_argument("--inputs", metavar="MODULE:FN", help="FN(**args) returns the kernel's input tensors")
    parser.add_argument("--compare", metavar="MODULE:FN", help="FN(*inputs) returns the expected outputs (torch)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.add_argument(
        "--config",
        type=int,
        metavar="N",
        help="for an @autotune kernel, its config N (default: the one check analyses, the first that fits)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args).choose(args.file, "run")
    options.check_parameters(readable([args.file]))
    with Status(f"tilescope run: interpreting {args.file}"), Analyzer(**options.analyzer_options()) as analyzer:
        report = analyzer.run(
            args.file,
            kernel=options.kernel,
            args={**options.args, CONFIG_ARG: args.config} if args.config is not None else options.args or None,
            inputs=args.inputs,
            compare=args.compare,
            seed=args.seed,
        )
    print(dumps(report, indent=2) if args.json else render(display_path(args.file), report))
    status = "FAILED" if failed(report) else "ok"
    print(f"tilescope run {status}: {report.kernel or args.file}", file=sys.stderr if args.json else sys.stdout)
    return 1 if failed(report) else 0
