"""Nsight Compute's figures for a kernel: the metrics asked, one supervised ``ncu`` child per batch of
kernels, and its CSV read back into ``NcuFigures`` (bank conflicts per warp request, achieved occupancy
and its limit). Host side: ``ncu`` runs ``worker.gpu_run`` as a module, never imported here.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from tilescope.core.model import KernelModel, NcuFigures
from tilescope.core.protocol import PROFILE_LAUNCHES
from tilescope.core.sandbox.private_files import private_prefix
from tilescope.core.sandbox.supervise import Supervised

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
        "tilescope.core.worker.gpu_run",
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
    with tempfile.TemporaryDirectory(prefix=private_prefix("ncu")) as tmp:
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
        count = PROFILE_LAUNCHES * kernels
        mine = launches[position : position + count]
        position += count
        last = one_run([values for _, values in mine[-kernels:]]) if len(mine) == count else {}
        results[index] = ncu_figures(last) if last else replace(failed[index], error="ncu saw fewer launches")
    return results


def measure_with_ncu(payload: dict[str, Any], names: list[str], timeout_s: float) -> NcuFigures:
    """One warm launch of the kernel under ``ncu``, in a supervised child of its own."""
    return measure_batch_with_ncu([payload], [names], timeout_s)[0]
