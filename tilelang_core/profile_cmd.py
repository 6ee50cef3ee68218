"""``tilescope profile FILE``: how fast a kernel is on this machine's GPU, next to how fast it could be.

The static figures come from ``check`` (with ptxas): every shared access's bank conflicts,
occupancy, the roofline bound. On a machine with an NVIDIA GPU the kernel is then built at the
file's sizes in the supervised worker and timed as the puzzles' grader times (CUDA events, L2
flushed, warm-up, median); where Nsight Compute (``ncu``) is installed, one warm launch is measured
for bank conflicts, achieved occupancy and its occupancy limit. Without a GPU it says so and
prints the static figures. The report is kept in ``.tilescope/profile.json`` beside the file, where
the editor reads its code lens.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

from tilescope.core.check_cmd import render_kernel
from tilescope.core.discovery import instantiations
from tilescope.core.gpu_run import LAUNCHES
from tilescope.core.kernel_options import KernelOptions, add_kernel_options, readable, target_name
from tilescope.core.model import KernelModel, NcuFigures, ProfileReport, Timing, dumps, to_json
from tilescope.core.peaks import gpu_key
from tilescope.core.perf_render import ncu_lines, static_lines
from tilescope.core.profile_store import save
from tilescope.core.service import Analyzer
from tilescope.core.supervise import Supervised

LOAD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
STORE_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
LOAD_REQUESTS = "smsp__sass_inst_executed_op_shared_ld.sum"
STORE_REQUESTS = "smsp__sass_inst_executed_op_shared_st.sum"
"""A request is one warp's shared-memory instruction. (The L1TEX ``t_requests`` counters for the shared
pipe read ``n/a`` on sm_90: measured on the H200.)"""
WAVEFRONT_BYTES = 128
"""What shared memory serves in one wavefront: an instruction needs at least its bytes over this."""
SHARED_OPS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "load": (
        (
            LOAD_REQUESTS,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "smsp__sass_data_bytes_mem_shared_op_ld.sum",
        ),
        (
            "smsp__sass_inst_executed_op_ldsm.sum",
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
            "smsp__sass_data_bytes_mem_shared_op_ldsm.sum",
        ),
    ),
    "store": (
        (
            STORE_REQUESTS,
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            "smsp__sass_data_bytes_mem_shared_op_st.sum",
        ),
        (
            "smsp__sass_inst_executed_op_shared_stsm.sum",
            "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_stsm.sum",
            "smsp__sass_data_bytes_mem_shared_op_stsm.sum",
        ),
    ),
}
"""Per direction, (instructions, wavefronts, bytes) of LDS/STS and of LDSM/STSM, as ncu attributes them to
each SASS instruction from its addresses. Conflicts per request are the wavefronts beyond each instruction's
fewest, over the instructions: the static figure's ``ways - 1``. The L1TEX bank-conflict counters
(``LOAD_CONFLICTS``) also count data-bank contention with other traffic sharing the banks (L1 fills of
global loads), which no address pattern predicts; they are kept, and used only where the SASS figures are
missing."""
ACHIEVED = "sm__warps_active.avg.pct_of_peak_sustained_active"
OCCUPANCY_LIMITS = (
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
)
METRICS = (
    LOAD_CONFLICTS,
    STORE_CONFLICTS,
    *(name for kinds in SHARED_OPS.values() for kind in kinds for name in kind),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    ACHIEVED,
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__block_size",
    "launch__shared_mem_per_block_dynamic",
    "launch__shared_mem_per_block_static",
    "gpu__time_duration.sum",
    *OCCUPANCY_LIMITS,
)
_KERNEL_NAME = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    add_kernel_options(
        parser, target=False, python=False, timeout_default=300.0, timeout_help="seconds for building and timing"
    )
    parser.add_argument(
        "--target", type=target_name, help="sm_XX for the static figures (default: this GPU's, else sm_90)"
    )
    parser.add_argument("--runs", type=int, default=20, help="timed runs (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--no-ncu", action="store_true", help="do not run Nsight Compute even when installed")
    parser.set_defaults(func=run)


def local_gpu() -> tuple[str, str] | None:
    """``(name, sm_XX)`` of the first NVIDIA GPU, asked of ``nvidia-smi`` (no CUDA context in this process)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        done = subprocess.run(
            [smi, "--query-gpu=name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = done.stdout.strip().splitlines()[:1]
    if done.returncode != 0 or not first or "," not in first[0]:
        return None
    name, cap = (part.strip() for part in first[0].rsplit(",", 1))
    return name, "sm_" + cap.replace(".", "")


def device_kernel_names(kernel: KernelModel) -> list[str]:
    """The ``__global__`` functions of the generated source, in order (a declaration and its definition once)."""
    return list(dict.fromkeys(_KERNEL_NAME.findall(kernel.device_source or "")))


def shared_requests(values: dict[str, float], op: str) -> float | None:
    """Warp instructions of one direction (``"load"`` or ``"store"``) through shared memory, LDSM/STSM included."""
    counts = [values[kind[0]] for kind in SHARED_OPS[op] if kind[0] in values]
    return sum(counts) if counts else None


def measured_conflicts_per_request(values: dict[str, float], op: str) -> float | None:
    """Extra wavefronts per shared-memory instruction of one direction, from ncu's per-instruction figures
    (``SHARED_OPS``); else from the L1TEX counter, which contention with other traffic inflates."""
    instructions = extra = 0.0
    complete = True
    for inst, waves, data in SHARED_OPS[op]:
        if inst not in values or waves not in values:
            complete = False
            continue
        fewest = max(values[inst], values.get(data, 0.0) / WAVEFRONT_BYTES)
        instructions += values[inst]
        extra += max(values[waves] - fewest, 0.0)
    if complete and instructions:
        return round(extra / instructions, 3)
    counter, requests = (LOAD_CONFLICTS, LOAD_REQUESTS) if op == "load" else (STORE_CONFLICTS, STORE_REQUESTS)
    if counter not in values or not values.get(requests):
        return None
    return round(values[counter] / values[requests], 3)


def one_run(launches: list[dict[str, float]]) -> dict[str, float]:
    """One run of a kernel as ncu saw it, from the launch of each device kernel it made, in launch order:
    the counters (``.sum``) added over them, the launch's own figures (block size, registers, occupancy
    limits, achieved occupancy) those of the first, the device kernel ``KernelModel.launch`` describes.
    (The static conflicts cover every device kernel; the static occupancy the first.)"""
    values = dict(launches[0]) if launches else {}
    for other in launches[1:]:
        for name, value in other.items():
            if name.endswith(".sum"):
                values[name] = values.get(name, 0.0) + value
    return values


def ncu_figures(values: dict[str, float]) -> NcuFigures:
    limits = [int(values[k]) for k in OCCUPANCY_LIMITS if k in values]
    achieved = values.get(ACHIEVED)
    return NcuFigures(
        metrics=values,
        load_conflicts_per_request=measured_conflicts_per_request(values, "load"),
        store_conflicts_per_request=measured_conflicts_per_request(values, "store"),
        achieved_occupancy=round(achieved / 100, 4) if achieved is not None else None,
        blocks_per_sm=min(limits) if limits else None,
        error=None if values else "ncu reported no metrics for the kernel",
    )


def _ncu_command(ncu: str, names: list[str], metrics: tuple[str, ...], batch: Path) -> list[str]:
    pattern = "|".join(re.escape(n) for n in sorted(set(names)))
    return [
        ncu,
        "--csv",
        "--print-units",
        "base",
        "--clock-control",
        "none",
        "--kernel-name",
        f"regex:^({pattern})$",
        "--metrics",
        ",".join(metrics),
        sys.executable,
        "-m",
        "tilescope.core.gpu_run",
        str(batch),
    ]


def parse_ncu_launches(text: str) -> list[tuple[str, dict[str, float]]]:
    """Each profiled launch's kernel name and metric values, in launch order, from ``ncu --csv`` output."""
    start = text.find('"ID"')
    if start < 0:
        return []
    launches: dict[str, tuple[str, dict[str, float]]] = {}
    for row in csv.DictReader(io.StringIO(text[start:])):
        name, value, launch = row.get("Metric Name"), row.get("Metric Value"), row.get("ID")
        if not name or value is None or launch is None:
            continue
        entry = launches.setdefault(launch, (row.get("Kernel Name") or "", {}))
        try:
            entry[1][name] = float(value.replace(",", ""))
        except ValueError:
            continue
    return [launches[k] for k in sorted(launches, key=int)]


def measure_batch_with_ncu(
    payloads: list[dict[str, Any]], names: list[list[str]], timeout_s: float, metrics: tuple[str, ...] = METRICS
) -> list[NcuFigures]:
    """Each kernel's second launch under ``ncu``, all in one supervised child (one start-up for the batch).

    ``names[i]`` are the device kernels request ``i`` launches; the launches ncu reports are matched
    to requests in order, two launches of each of its kernels per request that ran.
    """
    failed = [NcuFigures({}, None, None, None, None, error="Nsight Compute (ncu) is not installed")] * len(payloads)
    ncu = shutil.which("ncu")
    if ncu is None:
        return failed
    with tempfile.TemporaryDirectory(prefix="tilescope-ncu-") as tmp:
        batch, manifest = Path(tmp) / "batch.json", Path(tmp) / "manifest.json"
        batch.write_text(json.dumps({"requests": payloads, "manifest": str(manifest)}))
        command = _ncu_command(ncu, [n for group in names for n in group], metrics, batch)
        child = Supervised(command, stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            out, err = child.process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            child.kill()
            return [replace(f, error=f"ncu took over {timeout_s:.0f} s") for f in failed]
        child.kill()
        ran = json.loads(manifest.read_text()) if manifest.exists() else []
    text = out.decode(errors="replace")
    launches = parse_ncu_launches(text)
    if not launches:
        printed = (text + err.decode(errors="replace")).strip().splitlines()
        tail = " / ".join([ln for ln in printed if "==ERROR==" in ln or "Error" in ln][-4:] + printed[-3:])
        return [replace(f, error=f"ncu: {tail or 'no output'}") for f in failed]
    results = list(failed)
    position = 0
    for index in ran:
        kernels = len(names[index])
        count = LAUNCHES * kernels
        mine = launches[position : position + count]
        position += count
        last = one_run([values for _, values in mine[-kernels:]]) if len(mine) == count else {}
        results[index] = ncu_figures(last) if last else replace(failed[index], error="ncu saw fewer launches")
    return results


def measure_with_ncu(payload: dict[str, Any], names: list[str], timeout_s: float) -> NcuFigures:
    """One warm launch of the kernel under ``ncu``, in a supervised child of its own."""
    return measure_batch_with_ncu([payload], [names], timeout_s)[0]


def run_payload(
    path: str, source: str, kernel: str, args: dict[str, Any] | None, warmup: int = 3, runs: int = 20
) -> dict[str, Any]:
    """What the worker (or the ncu child) needs to build and run one kernel: the parent's discovery included."""
    inst = next(i for i in instantiations(source, path) if i.kernel.name == kernel)
    return {
        "path": path,
        "source": source,
        "instantiation": to_json(inst),
        "args": args,
        "warmup": warmup,
        "runs": runs,
    }


def kernel_payload(
    path: str, source: str, kernel: KernelModel, args: dict[str, Any] | None, warmup: int = 3, runs: int = 20
) -> dict[str, Any]:
    """``run_payload`` for a kernel the static figures describe: an autotuned one at the config they are of."""
    tuned = kernel.autotune
    if tuned is not None and tuned.chosen is not None:
        args = {**tuned.configs[tuned.chosen].values, **(args or {})}
    return run_payload(path, source, kernel.kernel, args, warmup, runs)


def _share(kernel: KernelModel | None, timing: Timing | None) -> float | None:
    if kernel is None or kernel.roofline is None or timing is None or timing.error or not timing.time_us:
        return None
    key = gpu_key(timing.gpu)
    bound = next((b for b in kernel.roofline.bounds if b.gpu == key), None)
    return round(bound.best_us / timing.time_us, 4) if bound is not None else None


def profile_file(
    args: argparse.Namespace, analyzer: Analyzer | None = None, timer: Analyzer | None = None
) -> ProfileReport:
    """Static figures from ``analyzer`` (no GPU), then on a GPU the time from ``timer``'s worker, which sees it,
    and Nsight Compute's figures; workers given are reused, others started for this file (the timer only where
    there is a GPU). The timing worker has no address-space limit, as the puzzles' kernel process: a CUDA
    context reserves far more than it uses."""
    with ExitStack() as own:
        options = KernelOptions.from_args(args)
        if analyzer is None:
            analyzer = own.enter_context(Analyzer(timeout_s=args.timeout, memory_mb=options.memory_mb))
        path = str(Path(args.file).resolve())
        source = Path(path).read_text()
        overrides = options.args or None
        gpu = local_gpu()
        target = args.target or (gpu[1] if gpu else "sm_90")
        analysis = analyzer.analyze(path, source, target=target, kernel=options.kernel, args=overrides, ptxas=True)
        kernel = analysis.kernels[0] if analysis.kernels else None
        name = kernel.kernel if kernel is not None else (options.kernel or "")
        problems = [d.message for d in analysis.all_diagnostics() if d.severity == "error"]
        base = {"path": path, "kernel": name, "args": kernel.args if kernel else {}, "target": target}
        if kernel is None or problems:
            warnings = [d.message for d in analysis.all_diagnostics() if d.severity == "warning"]
            message = (problems or warnings or ["no kernel lowered"])[0]
            return ProfileReport(
                **base, gpu=gpu[0] if gpu else None, message=message, timing=None, roofline_share=None, static=kernel
            )
        if gpu is None:
            return ProfileReport(
                **base,
                gpu=None,
                message="no GPU on this machine: static figures only",
                timing=None,
                roofline_share=None,
                static=kernel,
            )
        if timer is None:
            timer = own.enter_context(Analyzer(timeout_s=args.timeout, memory_mb=0, gpu=True))
        payload = kernel_payload(path, source, kernel, overrides, args.warmup, args.runs)
        timing = timer.profile(payload, args.timeout)
        ncu = None
        names = device_kernel_names(kernel)
        if not args.no_ncu and timing.error is None and names:
            ncu = measure_with_ncu(payload, names, args.timeout)
        message = timing.error or f"timed on {timing.gpu}"
        return ProfileReport(
            **base,
            gpu=gpu[0],
            message=message,
            timing=timing,
            roofline_share=_share(kernel, timing),
            static=kernel,
            ncu=ncu,
        )


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
    KernelOptions.from_args(args).check_parameters(readable([args.file]))
    report = profile_file(args)
    if report.timing is not None:
        save(report)
    print(dumps(report, indent=2) if args.json else render(report))
    ok = report.static is not None and (report.timing is None or report.timing.error is None)
    return 0 if ok else 1
