"""``tilescope run FILE``: run one kernel on the CPU with the tile interpreter and report.

The kernel is built and interpreted in the core's supervised worker, never in this process. The
report gives each output's statistics, NaN/Inf counts and never-written elements, every
out-of-bounds or uninitialised access with its line, and, with ``--compare``, the mismatches
against a torch reference. Exit status 1 when anything was found.
"""

from __future__ import annotations

import argparse
import sys

from tilescope.core.display import dims_text
from tilescope.core.kernel_options import KernelOptions, add_kernel_options, readable
from tilescope.core.model import RunReport, dumps
from tilescope.core.service import Analyzer
from tilescope.core.terminal import Status, display_path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    add_kernel_options(parser, target=False, timeout_help="seconds the run may compute")
    parser.add_argument(
        "--interpret",
        action="store_true",
        help="use the CPU interpreter (the only engine today; accepted so scripts can say so)",
    )
    parser.add_argument("--inputs", metavar="MODULE:FN", help="FN(**args) returns the kernel's input tensors")
    parser.add_argument("--compare", metavar="MODULE:FN", help="FN(*inputs) returns the expected outputs (torch)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    parser.set_defaults(func=run)


def failed(report: RunReport) -> bool:
    bad_values = any(o.nan or o.inf or o.unwritten for o in report.outputs)
    return bool(report.error or report.findings or bad_values or any(c.wrong for c in report.comparisons))


def _number(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def render(path: str, report: RunReport) -> str:
    args = ", ".join(f"{k}={v}" for k, v in report.args.items())
    lines = [f"kernel {report.kernel}({args})"]
    if report.error:
        where = f"{path}:{report.line}: " if report.line else ""
        lines.append(f"  {where}error: {report.error}")
        return "\n".join(lines)
    grid = dims_text(report.grid) or "1"
    threads = dims_text(report.threads) or "?"
    lines.append(f"  interpreted grid {grid} (blocks of {threads} threads) in {report.seconds:.2f} s")
    for o in report.outputs:
        shape = dims_text(o.shape)
        lines.append(
            f"  {o.name} {shape} {o.dtype}: min {_number(o.minimum)} max {_number(o.maximum)} "
            f"mean {_number(o.mean)}; {o.nan} NaN, {o.inf} Inf, {o.unwritten} never written"
        )
    for f in report.findings:
        lines.append(f"  {path}:{f.describe()}" if f.line else f"  {f.describe()}")
    for c in report.comparisons:
        verdict = "matches" if not c.wrong else f"{c.wrong} of {c.total} elements differ"
        first = f", first at [{', '.join(str(i) for i in c.first_wrong)}]" if c.first_wrong else ""
        lines.append(
            f"  {c.name} vs reference: {verdict}{first} (max abs error {c.max_abs_error:.3g}, "
            f"atol {c.atol:g} rtol {c.rtol:g})"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args)
    options.check_parameters(readable([args.file]))
    with Status(f"tilescope run: interpreting {args.file}"), Analyzer(**options.analyzer_options()) as analyzer:
        report = analyzer.run(
            args.file,
            kernel=options.kernel,
            args=options.args or None,
            inputs=args.inputs,
            compare=args.compare,
            seed=args.seed,
        )
    print(dumps(report, indent=2) if args.json else render(display_path(args.file), report))
    status = "FAILED" if failed(report) else "ok"
    print(f"tilescope run {status}: {report.kernel or args.file}", file=sys.stderr if args.json else sys.stdout)
    return 1 if failed(report) else 0
