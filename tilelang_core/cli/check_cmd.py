"""``tilescope check PATH...``: analyse kernels with the real compiler and report.

One file: a compact report per kernel; ``--format json`` prints its ``FileAnalysis`` record
(schema in ``tilelang_core/SCHEMA.md``). Folders are searched recursively and checked by ``-j N``
workers, with a progress bar on a terminal and a summary table; ``json`` is then one object with
every file, and ``sarif`` a SARIF 2.1.0 log for CI. The exit status is 1 when any error was found
(or, for one file, when no kernel lowered).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from tilescope.core.cli.kernel_options import KernelOptions, UsageError, add_kernel_options, process_started, readable
from tilescope.core.cli.sarif import to_sarif
from tilescope.core.cli.terminal import Status, display_path, painter
from tilescope.core.codes import HAZARD_CODES, diagnostic
from tilescope.core.compat import releases
from tilescope.core.compiler.batch import analyze_files, python_files
from tilescope.core.compiler.service import HAZARD_BUDGET_S, NO_KERNELS
from tilescope.core.display import dims_text, stages_text
from tilescope.core.environment import require_extra
from tilescope.core.lines import SourceError, read_source
from tilescope.core.model import SCHEMA_VERSION, Diagnostic, FileAnalysis, KernelModel, Span, from_dry_run, to_json
from tilescope.core.perf.perf_render import static_lines
from tilescope.core.static import analyze_source, catalog

Paint = Callable[[str, str], str]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files with TileLang kernels, or folders")
    add_kernel_options(parser, jobs=1, ray="the files")
    parser.add_argument("--ptxas", action="store_true", help="compile to a cubin and report registers and spills")
    parser.add_argument("--format", choices=["text", "json", "sarif"], default="text", help="output format")
    parser.add_argument(
        "--no-dry-run",
        dest="dry_run",
        action="store_false",
        help="never run a file's __main__ (with stand-in kernels) to learn sizes the source does not give",
    )
    parser.add_argument(
        "--static",
        action="store_true",
        help="read the source only (no compiler, nothing runs; TileLang not needed here)",
    )
    parser.add_argument(
        "--hazard-budget",
        type=float,
        default=HAZARD_BUDGET_S,
        metavar="S",
        help="seconds per kernel to interpret a few blocks on the CPU, looking for races, missing barriers, "
        f"out-of-bounds and uninitialised reads (default {HAZARD_BUDGET_S:g}; 0 turns it off)",
    )
    parser.set_defaults(func=run)


_TEST_FILE = re.compile(r"(test_.*|.*_test|conftest)\.py")
_KERNEL_SYNTAX = re.compile(r"T\.Kernel\(|prim_func|(?<!triton\.)\bjit\b")
"""What a file that means to define a kernel writes: a launch, ``@T.prim_func`` or ``@tilelang.jit``
(not Triton's ``@triton.jit``, which TileLang's benchmarks compare against)."""


def run(args: argparse.Namespace) -> int:
    options = KernelOptions.from_args(args)
    fmt = "json" if args.json else args.format
    files = python_files(args.paths)
    named = {Path(p) for p in args.paths if not Path(p).is_dir()}
    options.check_parameters(readable(files))
    single = len(args.paths) == 1 and not Path(args.paths[0]).is_dir()
    if args.static:
        tilelang = catalog.use_interpreter(options.python).version
        with Status(f"tilescope check: reading {len(files)} files"):
            results = [_static(file, options) for file in files]
    else:
        tilelang = _compiler_release(options.python)
        catalog.use_interpreter(options.python)  # the static checks merged in speak of the same release
        request = {
            "kernel": options.kernel,
            "args": options.args or None,
            "target": options.target,
            "ptxas": args.ptxas,
            "hazards_s": args.hazard_budget,
        }
        bar = _progress if sys.stderr.isatty() and not single else None
        status = Status(f"tilescope check: analysing {display_path(str(files[0]))}") if single else nullcontext()
        with status:
            analyzer = {**options.analyzer_options(), "dry_run": args.dry_run}
            results = _analyze(files, args, request, analyzer, bar)
        if bar is not None:
            print(file=sys.stderr)
    results = [_relative(r, keep_no_kernels=Path(r.path) in named or _means_kernels(Path(r.path))) for r in results]
    header = f"tilescope check: TileLang {tilelang or 'not installed'}, target {options.target}" + (
        ", static tier only" if args.static else ""
    )
    paint = painter(sys.stdout)
    if fmt == "sarif":
        print(json.dumps(to_sarif(results, Path.cwd(), tilelang), indent=2))
    elif fmt == "json":
        print(json.dumps(report_json(results, tilelang, args.static), indent=2))
    else:
        print(paint(header, "dim"))
        if single:
            print(render(results[0], paint))
        else:
            for result in results:
                for d in result.all_diagnostics():
                    print(_diagnostic(result.path, d, paint).strip())
            print(table(results))
    out = sys.stdout if fmt == "text" else sys.stderr
    paint = painter(out)
    failed = not all(r.ok for r in results) or (single and not args.static and not succeeded(results[0]))
    line = summary(results[0], args.static) if single else overall(results, args.static)
    line += "" if args.static else _device_code(args.ptxas, results)
    print(paint(line, "error" if failed else "ok") if fmt == "text" else line, file=out)
    return 1 if failed else 0


def report_json(results: list[FileAnalysis], tilelang: str | None, static: bool) -> dict[str, Any]:
    """The one shape of ``check --json``, for one file or many."""
    return {
        "schema_version": SCHEMA_VERSION,
        "tilelang_version": tilelang,
        "tier": "static" if static else "compiler",
        "files": [to_json(r) for r in results],
    }


def _compiler_release(python: str | None) -> str | None:
    """The TileLang the compiler tier will use; ``UsageError`` when there is none to use."""
    try:
        found = releases.interpreter_version(python) if python else releases.installed_version()
    except OSError as err:
        raise UsageError(f"argument --python: cannot ask {python}: {err}") from None
    if found is None:
        where = python or sys.executable
        raise UsageError(
            f"no TileLang in {where}: give --python an interpreter that has it (your project's), "
            "install tilescope[compiler], or use --static to read the source only"
        )
    problem = releases.problem(found)
    if problem:
        raise UsageError(problem)
    return found


def _static(file: Path, options: KernelOptions) -> FileAnalysis:
    """What the static tier finds in one file, as the compiler tier's record (no kernel models)."""
    path = str(file)
    try:
        text = read_source(file)
    except SourceError as err:
        return FileAnalysis(path, options.target, [], [], [diagnostic("io-error", Span(err.line), problem=str(err))])
    found = analyze_source(text, path, target=options.target)
    kernels = [k for k in found.kernels if options.kernel is None or k.ref.name == options.kernel]
    diagnostics = [d for d in found.diagnostics if options.kernel is None or d.kernel in (None, options.kernel)]
    if not found.kernels and not any(d.severity == "error" for d in diagnostics):
        diagnostics.append(NO_KERNELS)
    return FileAnalysis(path, options.target, [], [k.ref for k in kernels], diagnostics)


def _means_kernels(path: Path) -> bool:
    """Whether a file a folder search found is one that should hold a kernel: not a test (tests call
    kernels, they rarely define them), and writing a launch, ``prim_func`` or ``jit`` (a regression
    runner or a utility module beside the kernels defines none, and is not wrong for it)."""
    if _TEST_FILE.fullmatch(path.name):
        return False
    try:
        return _KERNEL_SYNTAX.search(read_source(path)) is not None
    except SourceError:
        return True


def _relative(result: FileAnalysis, keep_no_kernels: bool) -> FileAnalysis:
    """The record with its path as the user would type it, and without the ``no-kernels`` warning on a
    file a folder search found that does not mean to define one (``_means_kernels``)."""
    diagnostics = result.diagnostics if keep_no_kernels else [d for d in result.diagnostics if d.code != "no-kernels"]
    return replace(result, path=display_path(result.path), diagnostics=diagnostics)


def _analyze(
    files: list[Path],
    args: argparse.Namespace,
    request: dict[str, Any],
    analyzer_options: dict[str, Any],
    bar: Callable[[int, int, Path], None] | None,
) -> list[FileAnalysis]:
    """On this machine's ``-j`` workers, or on a Ray cluster's (``--ray``), in the files' order either way."""
    if not args.ray:  # this machine's clock: the first kernel's timeout counts from the command's start
        return analyze_files(files, args.jobs, request, {**analyzer_options, "clock_started": process_started()}, bar)
    require_extra("cluster", "check --ray")
    from tilescope.core.compiler import cluster

    address = KernelOptions.from_args(args).ray_address()
    return cluster.analyze_files(files, args.jobs if args.jobs > 1 else None, request, analyzer_options, address, bar)


def _device_code(compiled: bool, results: list[FileAnalysis]) -> str:
    """Said plainly: lowering passing is not nvcc accepting the CUDA. Compiling it costs several times the
    lowering per kernel (``benchmarks/bench_device_compile.py``), so it is asked for with ``--ptxas``."""
    if compiled or not any(k.device_source and k.target.startswith("sm_") for r in results for k in r.kernels):
        return ""  # nvcc compiles CUDA only: AscendC would need the CANN toolkit's bisheng
    return "; device code not compiled (nvcc not run: --ptxas compiles it and reports what nvcc rejects)"


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


def _folder(path: str) -> str:
    return str(Path(display_path(path)).parent)


def overall(results: list[FileAnalysis], static: bool = False) -> str:
    counts = _counts(results)
    status = "ok" if all(r.ok for r in results) else "FAILED"
    done = f"{counts['kernels']} kernels read" if static else f"{counts['lowered']}/{counts['kernels']} kernels lowered"
    return (
        f"tilescope check {status}: {done} in {counts['files']} "
        f"files, {counts['errors']} errors, {counts['warnings']} warnings"
    )


def succeeded(result: FileAnalysis) -> bool:
    """No errors, and at least one kernel lowered: a file with nothing to analyse is a failure too."""
    return result.ok and any(_lowered(k) for k in result.kernels)


_FAILED_LOWERING = {"compile-error", "layout-inference"}
"""Lowering failures, whatever their severity (a warning where the build assumed the device)."""


def _lowered(kernel: KernelModel) -> bool:
    """Lowered without a compile error (a hazard the interpreter found is an error of the program, not of lowering;
    a lowering failure is one whatever its severity, a warning where the build assumed the device)."""
    return bool(kernel.passes) and not any(
        (d.severity == "error" and d.code not in HAZARD_CODES) or d.code in _FAILED_LOWERING for d in kernel.diagnostics
    )


def summary(result: FileAnalysis, static: bool = False) -> str:
    """One line: how many kernels were analysed and what was found."""
    diagnostics = result.all_diagnostics()
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = sum(d.severity == "warning" for d in diagnostics)
    lowered = sum(1 for k in result.kernels if _lowered(k))
    status = "ok" if (result.ok if static else succeeded(result)) else "FAILED"
    first = next((d for d in diagnostics if d.severity == "error"), None)
    tail = f": {result.path}:{first.span.line}: {first.message}" if first else ""
    done = (
        f"{len(result.discovered)} kernels read" if static else (f"{lowered}/{len(result.discovered)} kernels lowered")
    )
    targets = ", ".join(sorted({k.target for k in result.kernels})) or result.target  # a kernel's own target wins
    return f"tilescope check {status}: {done} for {targets}, {errors} errors, {warnings} warnings{tail}"


def _plain(text: str, style: str) -> str:
    return text


def _diagnostic(path: str, d: Diagnostic, paint: Paint = _plain) -> str:
    lines = [f"  {path}:{d.span.line}: {paint(f'{d.severity}[{d.code}]', d.severity)}: {d.message}"]
    lines.extend(f"    {path}:{r.span.line}: note: {r.message}" for r in d.related)
    if d.witness:
        lines.append(f"    witness: {d.witness}")
    return "\n".join(lines)


def render_kernel(k: KernelModel) -> list[str]:
    args = ", ".join(f"{key}={value}" for key, value in k.args.items())
    out = [f"kernel {k.kernel}({args})  target {k.target}"]
    ran: dict[str, list[str]] = {}
    for name in k.args:
        source = k.arg_sources.get(name, "")
        if from_dry_run(source):
            ran.setdefault(source, []).append(name)
    for source, names in ran.items():
        out.append(f"  sizes    {', '.join(names)} from a {source}")
    if k.launch:
        ws = (
            f" → {k.launch.threads_after_ws} after warp specialisation"
            if k.launch.threads_after_ws != k.launch.threads
            else ""
        )
        out.append(f"  launch   grid {dims_text(k.launch.grid_dims())} × {k.launch.threads} threads{ws}")
    if k.passes and k.ascend is not None:
        changed = sum(p.changed for p in k.passes)
        plan = k.ascend
        out.append(
            f"  compile  {len(k.passes)} passes ({changed} changed the IR) in {k.lower_ms:.0f} ms; {plan.kernel_kind} "
            f"kernel, {len(plan.flags)} flags ({', '.join(f'{c} {s.flags}' for c, s in sorted(plan.sections.items()))})"
        )
        for level in plan.memory:
            over = "" if level.fits else "  over capacity"
            out.append(f"  {level.level:8} {level.used} of {level.capacity} B: {', '.join(level.buffers)}{over}")
    elif k.passes:
        changed = sum(p.changed for p in k.passes)
        out.append(
            f"  compile  {len(k.passes)} passes ({changed} changed the IR) in {k.lower_ms:.0f} ms; "
            f"shared memory {k.shared_bytes} B"
        )
    for p in k.pipelines:
        out.append(f"  pipeline loop {p.loop_var} at line {p.line}: {stages_text(p.num_stages)}")
    if k.hazard_check is not None:
        h = k.hazard_check
        blocks_ran = ", ".join(str(tuple(b)) for b in h.blocks) or "no blocks"
        stopped = f"; {h.stopped}" if h.stopped else ""
        out.append(
            f"  hazards  interpreted {blocks_ran} of grid {dims_text(h.grid)} on the CPU in {h.seconds:.2f} s{stopped}"
        )
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
    out.extend(static_lines(k))
    return out


def render(result: FileAnalysis, paint: Paint = _plain) -> str:
    lines: list[str] = []
    for d in result.diagnostics:
        lines.append(_diagnostic(result.path, d, paint))
    for k in result.kernels:
        lines.extend(render_kernel(k))
        lines.extend(_diagnostic(result.path, d, paint) for d in k.diagnostics)
    return "\n".join(lines)
