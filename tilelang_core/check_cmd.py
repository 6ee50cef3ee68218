"""``tilescope check PATH...``: analyse kernels with the real compiler and report.

One file: a compact report per kernel; ``--format json`` prints its ``FileAnalysis`` record
(schema in ``tilelang_core/SCHEMA.md``). Folders are searched recursively and checked by ``-j N``
workers, with a progress bar on a terminal and a summary table; ``json`` is then one object with
every file, and ``sarif`` a SARIF 2.1.0 log for CI. The exit status is 1 when any error was found
(or, for one file, when no kernel lowered).
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

from tilescope.core.batch import analyze_files, python_files
from tilescope.core.display import dims_text, stages_text
from tilescope.core.model import SCHEMA_VERSION, Diagnostic, FileAnalysis, KernelModel, dumps, to_json
from tilescope.core.sarif import to_sarif


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files with TileLang kernels, or folders")
    parser.add_argument("--kernel", help="analyse only this kernel")
    parser.add_argument("--arg", action="append", default=[], metavar="K=V", help="override a kernel argument")
    parser.add_argument("--target", default="sm_90", help="sm_XX (CUDA), gfxNNN (HIP), metal (default sm_90)")
    parser.add_argument("--ptxas", action="store_true", help="compile to a cubin and report registers and spills")
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    parser.add_argument("--json", action="store_true", help="the same as --format json")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="compiler workers in parallel (default 1)")
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
    fmt = "json" if args.json else args.format
    files = python_files(args.paths)
    options = {"kernel": args.kernel, "args": overrides or None, "target": args.target, "ptxas": args.ptxas}
    analyzer_options = {"timeout_s": args.timeout, "memory_mb": args.memory, "python": args.python}
    single = len(args.paths) == 1 and not Path(args.paths[0]).is_dir()
    bar = _progress if sys.stderr.isatty() and not single else None
    results = analyze_files(files, args.jobs, options, analyzer_options, bar)
    if bar is not None:
        print(file=sys.stderr)
    if fmt == "sarif":
        print(json.dumps(to_sarif(results, Path.cwd()), indent=2))
    elif single and fmt == "json":
        print(dumps(results[0], indent=2))
    elif fmt == "json":
        print(json.dumps({"schema_version": SCHEMA_VERSION, "files": [to_json(r) for r in results]}, indent=2))
    elif single:
        print(render(results[0]))
    else:
        for result in results:
            for d in result.all_diagnostics():
                print(_diagnostic(_display(result.path), d).strip())
        print(table(results))
    out = sys.stdout if fmt == "text" else sys.stderr
    if single:
        print(summary(results[0]), file=out)
        return 0 if succeeded(results[0]) else 1
    print(overall(results), file=out)
    return 0 if all(r.ok for r in results) else 1


def _progress(done: int, total: int, file: Path) -> None:
    width = 30
    filled = width * done // max(total, 1)
    name = str(file)[-50:]
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name:<50}")
    sys.stderr.flush()


def _counts(results: list[FileAnalysis]) -> dict[str, int]:
    diagnostics = [d for r in results for d in r.all_diagnostics()]
    return {
        "files": len(results),
        "kernels": sum(len(r.discovered) for r in results),
        "lowered": sum(1 for r in results for k in r.kernels if _lowered(k)),
        "errors": sum(d.severity == "error" for d in diagnostics),
        "warnings": sum(d.severity == "warning" for d in diagnostics),
    }


def table(results: list[FileAnalysis]) -> str:
    """Per folder: files, kernels found, kernels lowered, errors, warnings; then the diagnostic codes seen."""
    groups: dict[str, list[FileAnalysis]] = {}
    for result in results:
        groups.setdefault(_folder(result.path), []).append(result)
    header = ("folder", "files", "kernels", "lowered", "errors", "warnings")
    rows = [(name, *(str(v) for v in _counts(group).values())) for name, group in sorted(groups.items())]
    rows.append(("total", *(str(v) for v in _counts(results).values())))
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [header, *rows]
    ]
    codes: dict[str, int] = {}
    for result in results:
        for d in result.all_diagnostics():
            codes[f"{d.severity}[{d.code}]"] = codes.get(f"{d.severity}[{d.code}]", 0) + 1
    if codes:
        lines.append("diagnostics: " + ", ".join(f"{k} {v}" for k, v in sorted(codes.items(), key=lambda x: -x[1])))
    return "\n".join(lines)


def _display(path: str) -> str:
    """A path relative to where the check runs, when it is below it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def _folder(path: str) -> str:
    return str(Path(_display(path)).parent)


def overall(results: list[FileAnalysis]) -> str:
    counts = _counts(results)
    status = "ok" if all(r.ok for r in results) else "FAILED"
    return (
        f"tilescope check {status}: {counts['lowered']}/{counts['kernels']} kernels lowered in {counts['files']} "
        f"files, {counts['errors']} errors, {counts['warnings']} warnings"
    )


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
        out.append(f"  launch   grid {dims_text(k.launch.grid)} × {k.launch.threads} threads{ws}")
    if k.passes:
        changed = sum(p.changed for p in k.passes)
        out.append(
            f"  compile  {len(k.passes)} passes ({changed} changed the IR) in {k.lower_ms:.0f} ms; "
            f"shared memory {k.shared_bytes} B"
        )
    for p in k.pipelines:
        out.append(f"  pipeline loop {p.loop_var} at line {p.line}: {stages_text(p.num_stages)}")
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
                note = f"  layout {dims_text(layout.input_shape)} → {dims_text(layout.output_shape)} ({layout.swizzle})"
            size = f"{b.bytes} B" if b.bytes is not None else "?"
            out.append(
                f"    {b.name:<{width}}  {dims_text(b.shape):<14} {b.dtype:<8} {b.scope:<15} {size:>10}  "
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
