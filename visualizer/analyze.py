"""Ask the core for one kernel's model, and say in one line why there is none."""

from __future__ import annotations

import argparse
import sys

from tilescope.core.check_cmd import parse_args_overrides
from tilescope.core.ide import Analyzer
from tilescope.core.model import FileAnalysis, KernelModel


def kernel_model(args: argparse.Namespace, analyzer: Analyzer) -> tuple[FileAnalysis, KernelModel | None]:
    """Analyse ``args.file`` and pick ``args.kernel`` (or the first kernel); print why when it fails."""
    overrides = parse_args_overrides(args.arg)
    result = analyzer.analyze(
        args.file, kernel=args.kernel, args=overrides or None, target=args.target, timeout_s=args.timeout
    )
    kernel = result.kernel(args.kernel)
    errors = [d for d in result.all_diagnostics() if d.severity == "error"]
    if kernel is None or (errors and not kernel.passes):
        for d in errors:
            print(f"{result.path}:{d.span.line}: error[{d.code}]: {d.message}", file=sys.stderr)
        if not errors:
            names = ", ".join(k.name for k in result.discovered) or "none"
            print(f"{result.path}: no kernel {args.kernel or ''} here (found: {names})", file=sys.stderr)
        return result, None
    return result, kernel
