"""``tilescope profile FILE``: how fast a kernel is on this machine's GPU, next to how fast it could be.

The work is ``compiler.profile``'s (static figures, then time and Nsight Compute's on a GPU); this
module parses the options, prints the report and keeps it in ``.tilescope/profile.json`` beside the
file, where the editor reads its code lens.
"""

from __future__ import annotations

import argparse

from tilescope.core.cli.check_cmd import render_kernel
from tilescope.core.cli.kernel_options import KernelOptions, add_kernel_options, readable, target_name
from tilescope.core.compiler.profile import ProfileQuery, profile_file
from tilescope.core.model import ProfileReport, dumps
from tilescope.core.perf.perf_render import ncu_lines, static_lines
from tilescope.core.perf.profile_store import save


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    add_kernel_options(
        parser,
        one_kernel=True,
        target=False,
        python=False,
        timeout_default=300.0,
        timeout_help="seconds for building and timing",
    )
    parser.add_argument(
        "--target", type=target_name, help="sm_XX for the static figures (default: this GPU's, else sm_90)"
    )
    parser.add_argument("--runs", type=int, default=20, help="timed runs (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--no-ncu", action="store_true", help="do not run Nsight Compute even when installed")
    parser.set_defaults(func=run)


def render(report: ProfileReport) -> str:
    lines = []
    if report.static is not None:
        lines.extend(render_kernel(report.static)[:2])
        lines.extend(static_lines(report.static))
    t = report.timing
    if t is not None and t.error is None:
        share = f", {report.roofline_share:.0%} of the roofline bound" if report.roofline_share is not None else ""
        lines.append(f"  measured {t.time_us:g} µs median of {len(t.times_us)} on {t.gpu}{share}")
    if report.ncu is not None:
        lines.extend(ncu_lines(report.static, report.ncu))
    lines.append(f"  {report.message}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args).choose(args.file, "profile")
    options.check_parameters(readable([args.file]))
    request = ProfileQuery(
        file=args.file,
        kernel=options.kernel,
        args=dict(options.args),
        target=args.target,
        timeout_s=args.timeout,
        memory_mb=options.memory_mb,
        runs=args.runs,
        warmup=args.warmup,
        ncu=not args.no_ncu,
    )
    report = profile_file(request)
    if report.timing is not None:
        save(report)
    print(dumps(report, indent=2) if args.json else render(report))
    ok = report.static is not None and (report.timing is None or report.timing.error is None)
    return 0 if ok else 1
