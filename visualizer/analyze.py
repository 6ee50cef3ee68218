"""Ask the core for one kernel's model, and say in one line why there is none."""

from __future__ import annotations

import argparse
import sys

from tilescope.core.cli.kernel_options import KernelOptions, readable
from tilescope.core.cli.terminal import Status, display_path
from tilescope.core.compiler.service import Analyzer
from tilescope.core.model import FileAnalysis, KernelModel


def open_analyzer(args: argparse.Namespace) -> Analyzer:
    """The compiler tier with the command's ``--timeout``, ``--memory`` and ``--python``."""
    return Analyzer(**KernelOptions.from_args(args).analyzer_options())


def kernel_model(args: argparse.Namespace, analyzer: Analyzer) -> tuple[FileAnalysis, KernelModel | None]:
    """Analyse the kernel ``args.kernel`` names, or the one the file means (``KernelOptions.choose``,
    which says which and why); print why when it fails."""
    options = KernelOptions.from_args(args).choose(args.file, args.command)
    options.check_parameters(readable([args.file]))
    with Status(f"tilescope {args.command}: compiling {args.file}"):
        result = analyzer.analyze(
            args.file, kernel=options.kernel, args=options.args or None, target=options.target, timeout_s=args.timeout
        )
    kernel = result.kernel(options.kernel)
    errors = [d for d in result.all_diagnostics() if d.severity == "error"]
    if kernel is None or (errors and not kernel.passes):
        for d in errors:
            print(f"{display_path(result.path)}:{d.span.line}: error[{d.code}]: {d.message}", file=sys.stderr)
        if not errors:
            names = ", ".join(k.name for k in result.discovered) or "none"
            print(
                f"{display_path(result.path)}: no kernel {options.kernel or ''} here (found: {names})", file=sys.stderr
            )
        return result, None
    return result, kernel
