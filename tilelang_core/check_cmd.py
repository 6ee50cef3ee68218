"""``tilescope check FILE``: analyse a file's kernels with the real compiler and report.

Human output is a compact report per kernel; ``--json`` prints the ``FileAnalysis`` record
(schema in ``tilelang_core/SCHEMA.md``). The exit status is non-zero when any error was found.
"""

from __future__ import annotations

import argparse
import ast
import sys
from typing import Any

from tilescope.core.model import Diagnostic, FileAnalysis, KernelModel, dumps
from tilescope.core.service import Analyzer


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    parser.add_argument("--kernel", help="analyse only this kernel")
    parser.add_argument("--arg", action="append", default=[], metavar="K=V", help="override a kernel argument")
    parser.add_argument("--target", default="sm_90", help="sm_XX (CUDA), gfxNNN (HIP), metal (default sm_90)")
    parser.add_argument("--ptxas", action="store_true", help="compile to a cubin and report registers and spills")
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel (default 60)")
    parser.add_argument("--memory", type=int, default=6144, help="worker memory limit in MiB (default 6144)")
    parser.add_argument(
        "--python",
        metavar="PATH",
        help="run the compiler in this interpreter (one with TileLang 0.1.10-0.1.15; Tilescope not needed there)",
    )
    parser.set_defaults(func=run)


def parse_args_overrides(pairs: list[str]) -> dict[str, Any]:
    """``["M=1024", "dtype=float16"]`` → ``{"M": 1024, "dtype": "float16"}``."""
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise SystemExit(f"tilescope: --arg expects K=V, got {pair!r}")
        try:
            values[key.strip()] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            values[key.strip()] = text
    return values


def run(args: argparse.Namespace) -> int:
    overrides = parse_args_overrides(args.arg)
    with Analyzer(timeout_s=args.timeout, memory_mb=args.memory, python=args.python) as analyzer:
        result = analyzer.analyze(
            args.file, kernel=args.kernel, args=overrides or None, target=args.target, ptxas=args.ptxas
        )
    if args.json:
        print(dumps(result, indent=2))
    else:
        print(render(result))
    print(summary(result), file=sys.stderr if args.json else sys.stdout)
    return 0 if succeeded(result) else 1


def succeeded(result: FileAnalysis) -> bool:
    """No errors, and at least one kernel lowered: a file with nothing to analyse is a failure too."""
    return result.ok and any(_lowered(k) for k in result.kernels)


def _lowered(kernel: KernelModel) -> bool:
    return bool(kernel.passes) and not any(d.severity == "error" for d in kernel.diagnostics)


def summary(result: FileAnalysis) -> str:
    """One line: how many kernels were analysed and what was found."""
    diagnostics = result.all_diagnostics()
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    lowered = sum(1 for k in result.kernels if _lowered(k))
    status = "ok" if succeeded(result) else "FAILED"
    first = next((d for d in diagnostics if d.severity == "error"), None)
    tail = f": {result.path}:{first.span.line}: {first.message}" if first else ""
    return (
        f"tilescope check {status}: {lowered}/{len(result.discovered)} kernels lowered for {result.target}, "
        f"{errors} errors, {warnings} warnings{tail}"
    )


def _shape(dims: list[int | str]) -> str:
    return "×".join(str(d) for d in dims)


def _diagnostic(path: str, d: Diagnostic) -> str:
    return f"  {path}:{d.span.line}: {d.severity}[{d.code}]: {d.message}"


def render_kernel(k: KernelModel) -> list[str]:
    args = ", ".join(f"{key}={value}" for key, value in k.args.items())
    out = [f"kernel {k.kernel}({args})  target {k.target}"]
    if k.launch:
        ws = (
            f" → {k.launch.threads_after_ws} after warp specialisation"
            if k.launch.threads_after_ws != k.launch.threads
            else ""
        )
        out.append(f"  launch   grid {_shape(k.launch.grid)} × {k.launch.threads} threads{ws}")
    if k.passes:
        changed = sum(p.changed for p in k.passes)
        out.append(
            f"  compile  {len(k.passes)} passes ({changed} changed the IR) in {k.lower_ms:.0f} ms; "
            f"shared memory {k.shared_bytes} B"
        )
    for p in k.pipelines:
        out.append(f"  pipeline loop {p.loop_var} at line {p.line}: {p.num_stages} stages")
    if k.resources:
        r = k.resources
        out.append(
            f"  ptxas    {r.registers} registers/thread, spills {r.spill_store_bytes}/{r.spill_load_bytes} B, "
            f"static smem {r.shared_bytes} B ({r.arch})"
        )
    if k.buffers:
        out.append("  buffers")
        width = max(len(b.name) for b in k.buffers)
        for b in k.buffers:
            layout = k.layout(b.name)
            note = ""
            if layout is not None and layout.kind == "fragment":
                note = (
                    f"  fragment: {layout.thread_extent} threads × {layout.elements_per_thread} elems"
                    f", replicate {layout.replicate}"
                )
            elif layout is not None:
                note = f"  layout {_shape(layout.input_shape)} → {_shape(layout.output_shape)} ({layout.swizzle})"
            size = f"{b.bytes} B" if b.bytes is not None else "?"
            out.append(
                f"    {b.name:<{width}}  {_shape(b.shape):<14} {b.dtype:<8} {b.scope:<15} {size:>10}  "
                f"line {b.line}{note}"
            )
    return out


def render(result: FileAnalysis) -> str:
    lines: list[str] = []
    for d in result.diagnostics:
        lines.append(_diagnostic(result.path, d))
    for k in result.kernels:
        lines.extend(render_kernel(k))
        lines.extend(_diagnostic(result.path, d) for d in k.diagnostics)
    return "\n".join(lines)
