"""Static speed figures against the GPU's own: bank conflicts (ncu), occupancy (CUDA's calculator), time (grader).

On a machine with an NVIDIA GPU, for the bundled examples, kernels of TileLang's examples
(``benchmarks/gpu/kernels``), the bank-conflict fixture and the puzzles' reference solutions:

1. static figures and warm caches, in parallel: ``tilescope check --ptxas --json`` per kernel (its
   cubins stay in Tilescope's cache) and TileLang's own build of each kernel;
2. ``tilescope profile`` of each kernel, one worker for all (Nsight Compute on the examples);
3. one Nsight Compute run over every kernel: shared-memory bank conflicts and requests (loads,
   stores), achieved occupancy, occupancy limits;
4. ``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` on each kernel's cubin (ctypes, libcudart);
5. the puzzles' grader on the references, for its time.

Writes ``slow-results.json`` (everything) and ``slow-summary.md`` (the comparison) under ``--out``.

    python benchmarks/gpu/slow_compare.py --out /tmp/out      # on a GPU machine
    python benchmarks/gpu/slow_compare.py --out /tmp/out --dry  # here: the static half only
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import ctypes
import ctypes.util
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "kernels"
HAZARD_FIXTURES = ROOT / "benchmarks" / "hazards" / "fixtures"
PUZZLES = ROOT / "puzzles" / "content"
PUZZLE_IDS = ("03", "07", "10", "13")
GRADER_IDS = ("07", "10")
NO_SHARED_ACCESSES = {"gemm.py", "elementwise_add.py", "flash_attention.py"}
START = time.monotonic()


def elapsed() -> float:
    return time.monotonic() - START


def log(text: str) -> None:
    print(f"[{elapsed():6.1f}s] {text}", flush=True)


def jobs() -> list[dict[str, Any]]:
    """Every kernel to measure: file, kernel name (None: the file's first), arguments, group."""
    found: list[dict[str, Any]] = []
    for pad in (0, 1):
        fixture = ROOT / "tests" / "core" / "fixtures" / "bank_kernels.py"
        found.append({"file": fixture, "kernel": "transpose", "args": {"pad": pad}, "group": "fixture"})
        found.append({"file": fixture, "kernel": "transpose_by_thread", "args": {"pad": pad}, "group": "threads"})
    for path in sorted(HAZARD_FIXTURES.glob("ok_*threads*.py")):  # correct kernels written with thread indices
        found.append({"file": path, "kernel": None, "args": {}, "group": "threads"})
    for name in ("gemm", "softmax", "elementwise_add", "flash_attention", "dequant_gemm"):
        found.append({"file": ROOT / "examples" / f"{name}.py", "kernel": None, "args": {}, "group": "example"})
    for path in sorted(KERNELS.glob("*.py")):
        for kernel in _kernels_in(path):
            found.append({"file": path, "kernel": kernel, "args": {}, "group": "corpus"})
    for ident in PUZZLE_IDS:
        folder = next(PUZZLES.glob(f"{ident}_*"))
        perf = json.loads((folder / "puzzle.json").read_text())["perf"]["args"]
        found.append({"file": folder / "solution.py", "kernel": None, "args": perf, "group": "puzzle", "id": ident})
    for i, job in enumerate(found):
        job["index"] = i
        job["file"] = str(job["file"])
    return found


def _kernels_in(path: Path) -> list[str]:
    """Kernels a copied example lists in its ``# KERNELS:`` line (the ones measured)."""
    for line in path.read_text().splitlines()[:3]:
        if line.startswith("# KERNELS: "):
            return list(json.loads(line.removeprefix("# KERNELS: ")))
    return []


def _arg_flags(job: dict[str, Any]) -> list[str]:
    flags = ["--kernel", job["kernel"]] if job["kernel"] else []
    for key, value in job["args"].items():
        flags += ["--arg", f"{key}={value}"]
    return flags


def _tilescope(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tilescope", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def static_check(job: dict[str, Any], target: str) -> dict[str, Any]:
    """``tilescope check --ptxas --json`` of one kernel: its model, and a warm cubin cache."""
    try:
        done = _tilescope("check", job["file"], "--ptxas", "--json", "--target", target, *_arg_flags(job), timeout=400)
        data = json.loads(done.stdout)["files"][0]  # check --json: {schema_version, ..., files: [one]}
        return {"kernels": data.get("kernels", []), "diagnostics": data.get("diagnostics", [])}
    except Exception as err:
        return {"error": f"{type(err).__name__}: {err}"}


def warm_build(job: dict[str, Any]) -> str | None:
    """TileLang's own build of the kernel, so later builds hit its cache."""
    code = (
        "import json,sys\n"
        "from tilescope.core.compiler.profile import run_payload\n"
        "from tilescope.core.worker import gpu_run\n"
        "from pathlib import Path\n"
        "job=json.loads(sys.argv[1]); src=Path(job['file']).read_text()\n"
        "from tilescope.core.compiler.discovery import instantiations\n"
        "name=job['kernel'] or instantiations(src, job['file'])[0].kernel.name\n"
        "gpu_run.build(run_payload(job['file'], src, name, job['args'] or None))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, json.dumps(job)], capture_output=True, text=True, timeout=400, check=False
        )
        return None if done.returncode == 0 else done.stderr.strip().splitlines()[-1:][0][:300]
    except Exception as err:
        return f"{type(err).__name__}: {err}"


def profile_all(todo: list[dict[str, Any]], with_ncu: set[int], stop_at: float) -> None:
    from tilescope.core.compiler.profile import ProfileQuery, profile_file
    from tilescope.core.compiler.service import Analyzer
    from tilescope.core.model import to_json
    from tilescope.core.perf.profile_store import save

    with Analyzer(timeout_s=400, memory_mb=65536) as analyzer, Analyzer(400, 0, gpu=True) as timer:
        for job in todo:
            if elapsed() > stop_at:
                job["profile_error"] = "skipped: time budget"
                continue
            query = ProfileQuery(
                file=job["file"],
                kernel=job["kernel"],
                args=dict(job["args"]),
                runs=20,
                warmup=3,
                ncu=job["index"] in with_ncu,
                timeout_s=400.0,
                memory_mb=65536,
            )
            try:
                report = profile_file(query, analyzer, timer)
                if report.timing is not None:
                    save(report)
                job["profile"] = to_json(report)
                t = report.timing
                log(f"profile {Path(job['file']).name}:{report.kernel} {t.time_us if t else '-'} us {report.message}")
            except Exception as err:
                job["profile_error"] = f"{type(err).__name__}: {err}"
                log(f"profile {job['file']} failed: {job['profile_error']}")


def static_of(job: dict[str, Any]) -> dict[str, Any] | None:
    """The kernel's model: from its profile, else from its ``check``."""
    found = (job.get("profile") or {}).get("static")
    kernels = (job.get("check") or {}).get("kernels") or []
    return found or (kernels[0] if kernels else None)


def ncu_all(todo: list[dict[str, Any]], timeout_s: float) -> None:
    from tilescope.core.compiler.ncu import METRICS, device_kernel_names, measure_batch_with_ncu
    from tilescope.core.compiler.profile import kernel_payload
    from tilescope.core.model import KernelModel, from_json, to_json

    ready = []
    for job in todo:
        static = static_of(job)
        if not static or not static.get("device_source"):
            continue
        kernel = from_json(KernelModel, static)
        names = device_kernel_names(kernel)
        if not names:
            continue
        source = Path(job["file"]).read_text()
        ready.append((job, kernel_payload(job["file"], source, kernel, job["args"] or None), names))
    if not ready:
        return
    for metrics in (METRICS, METRICS[:7]):
        figures = measure_batch_with_ncu([p for _, p, _ in ready], [n for _, _, n in ready], timeout_s, metrics)
        if any(f.error is None for f in figures):
            break
        log(f"ncu gave nothing with {len(metrics)} metrics: {figures[0].error}")
    for (job, _, _), found in zip(ready, figures, strict=True):
        job["ncu"] = to_json(found)


class Runtime:
    """``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` and friends on a cubin, through libcudart (ctypes)."""

    def __init__(self) -> None:
        import torch

        torch.cuda.init()
        self.lib = self._load()

    @staticmethod
    def _load() -> ctypes.CDLL:
        names = ["libcudart.so.13", "libcudart.so.12", "libcudart.so"]
        for site in sys.path:
            names += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", "libcudart.so*")))
            names += sorted(glob.glob(os.path.join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so*")))
        found = ctypes.util.find_library("cudart")
        if found:
            names.append(found)
        for name in names:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
        raise OSError("libcudart not found")

    def occupancy(self, cubin: bytes, name: str, threads: int, dynamic: int) -> dict[str, Any]:
        lib = self.lib
        library, kernel = ctypes.c_void_p(), ctypes.c_void_p()
        buffer = ctypes.create_string_buffer(cubin, len(cubin))
        status = lib.cudaLibraryLoadData(
            ctypes.byref(library), buffer, None, None, ctypes.c_uint(0), None, None, ctypes.c_uint(0)
        )
        if status:
            return {"error": f"cudaLibraryLoadData: {status}"}
        status = lib.cudaLibraryGetKernel(ctypes.byref(kernel), library, name.encode())
        if status:
            return {"error": f"cudaLibraryGetKernel({name}): {status}"}
        attrs = (ctypes.c_byte * 512)()
        lib.cudaFuncGetAttributes(attrs, kernel)
        # cudaFuncAttributes: sharedSizeBytes, constSizeBytes, localSizeBytes (size_t), maxThreadsPerBlock, numRegs
        static_shared = ctypes.c_size_t.from_buffer(attrs, 0).value
        registers = ctypes.c_int.from_buffer(attrs, 3 * ctypes.sizeof(ctypes.c_size_t) + 4).value
        max_dynamic_attr = 8  # cudaFuncAttributeMaxDynamicSharedMemorySize
        lib.cudaFuncSetAttribute(kernel, ctypes.c_int(max_dynamic_attr), ctypes.c_int(dynamic))
        blocks = ctypes.c_int()
        status = lib.cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(blocks), kernel, ctypes.c_int(threads), ctypes.c_size_t(dynamic)
        )
        lib.cudaLibraryUnload(library)
        if status:
            return {"error": f"cudaOccupancyMaxActiveBlocksPerMultiprocessor: {status}"}
        return {"blocks_per_sm": blocks.value, "registers": registers, "static_shared": static_shared}


def occupancy_all(todo: list[dict[str, Any]], arch: str) -> None:
    from tilescope.core.compiler.ncu import device_kernel_names
    from tilescope.core.perf import occupancy
    from tilescope.core.worker import ptxas

    try:
        runtime = Runtime()
    except Exception as err:
        log(f"no CUDA runtime for occupancy: {err}")
        return
    from tilescope.core.model import KernelModel, from_json

    for job in todo:
        static = static_of(job)
        if not static or not static.get("device_source") or not static.get("launch"):
            continue

        kernel = from_json(KernelModel, static)
        names = device_kernel_names(kernel)
        compiled = ptxas.compile_cubin(kernel.device_source or "", arch)
        if not names or compiled is None or not compiled.cubin:
            job["runtime_occupancy"] = {"error": "no cubin"}
            continue
        metrics = (job.get("ncu") or {}).get("metrics") or {}
        threads = kernel.launch.threads_after_ws if kernel.launch else 0
        result = runtime.occupancy(compiled.cubin, names[0], threads, 0)
        if "error" in result:
            job["runtime_occupancy"] = result
            continue
        dynamic = int(
            metrics.get("launch__shared_mem_per_block_dynamic", max(kernel.shared_bytes - result["static_shared"], 0))
        )
        result = runtime.occupancy(compiled.cubin, names[0], threads, dynamic)
        result["dynamic_shared"] = dynamic
        with_cubin_registers = occupancy.occupancy(
            arch, threads, result.get("registers"), result.get("static_shared", 0) + dynamic
        )
        result["static_with_cubin_registers"] = with_cubin_registers.blocks_per_sm if with_cubin_registers else None
        job["runtime_occupancy"] = result


def grader_all(todo: list[dict[str, Any]], budget: float) -> None:
    for job in todo:
        if job["group"] != "puzzle" or job.get("id") not in GRADER_IDS:
            continue
        if elapsed() > budget:
            job["grader"] = {"error": "skipped: time budget"}
            continue
        try:
            done = subprocess.run(
                [sys.executable, "-m", "tilescope", "puzzles", "check", job["id"], job["file"], "--json"],
                capture_output=True,
                text=True,
                timeout=max(budget - elapsed(), 30),
                check=False,
            )
            report = json.loads(done.stdout)
            job["grader"] = {"perf": report.get("perf"), "verdict": report.get("verdict")}
            log(f"grader {job['id']}: {(report.get('perf') or {}).get('time_us')} us")
        except Exception as err:
            job["grader"] = {"error": f"{type(err).__name__}: {err}"}


def committed_grader_times() -> dict[str, float]:
    """The references' times in the committed H200 run of the puzzles' benchmark."""
    path = ROOT / "benchmarks" / "results" / "puzzles-h200.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    found = {}
    for row in data.get("rows", []):
        perf = (row.get("reference") or {}).get("perf") or {}
        if perf.get("time_us"):
            found[str(row["puzzle"])] = float(perf["time_us"])
    return found


def summarize(todo: list[dict[str, Any]]) -> str:
    from tilescope.core.compiler.ncu import shared_requests
    from tilescope.core.model import KernelModel, from_json
    from tilescope.core.perf.perf_render import LSU_LOADS, LSU_STORES, conflicts_per_request

    lines = ["# Static speed figures against the H200's", ""]
    lines += ["## Bank conflicts (ncu conflicts per request, loads and stores)", ""]
    lines += ["| kernel | op | accesses (static ways) | static | ncu | static requests | ncu requests | agree |"]
    lines += ["| --- | --- | --- | --- | --- | --- | --- | --- |"]
    agree_accesses = total_accesses = 0
    occ_rows, time_rows = [], []
    for job in todo:
        static = static_of(job)
        if not static:
            continue
        kernel = from_json(KernelModel, static)
        label = f"{Path(job['file']).name}:{kernel.kernel}" + (f" {job['args']}" if job["args"] else "")
        ncu = job.get("ncu") or {}
        metrics = ncu.get("metrics") or {}
        grid = 1
        for g in kernel.launch.grid if kernel.launch else []:
            grid *= int(g) if isinstance(g, int) else 1
        for op, kinds, key, direction in (
            ("load", LSU_LOADS, "load_conflicts_per_request", "load"),
            ("store", LSU_STORES, "store_conflicts_per_request", "store"),
        ):
            mine = [a for a in kernel.shared_accesses if a.instruction in kinds]
            predicted = conflicts_per_request(mine, kinds) or 0.0
            measured = ncu.get(key)
            requests = sum(a.requests_per_block for a in mine) * grid
            measured_requests = shared_requests(metrics, direction)
            if not mine and not measured_requests:
                continue
            same = measured is not None and abs(predicted - measured) <= max(0.05, 0.05 * measured)
            if measured is not None and mine:
                total_accesses += len(mine)
                agree_accesses += len(mine) if same else 0
            ways = ", ".join(f"{a.buffer}@{a.line}:{a.instruction} {a.ways}" for a in mine) or "none found"
            lines.append(
                f"| {label} | {op} | {ways} | {predicted:g} | {measured if measured is not None else '-'} | "
                f"{requests} | {measured_requests if measured_requests is not None else '-'} | "
                f"{'yes' if same else 'NO' if measured is not None else '-'} |"
            )
        runtime = job.get("runtime_occupancy") or {}
        occ = kernel.occupancy
        if occ is not None:
            occ_rows.append(
                f"| {label} | {occ.threads} | {occ.registers} | {runtime.get('registers', '-')} | {occ.shared_bytes} | "
                f"{occ.blocks_per_sm} | {runtime.get('static_with_cubin_registers', '-')} | "
                f"{runtime.get('blocks_per_sm', runtime.get('error', '-'))} | {ncu.get('blocks_per_sm', '-')} | "
                f"{ncu.get('achieved_occupancy', '-')} | {occ.occupancy} |"
            )
        profile = job.get("profile") or {}
        timing = profile.get("timing") or {}
        grader = ((job.get("grader") or {}).get("perf") or {}).get("time_us")
        committed = committed_grader_times().get(job.get("id", ""))
        if job["group"] == "puzzle" or timing:
            ratio = f"{timing.get('time_us', 0) / grader:.3f}" if grader and timing.get("time_us") else "-"
            time_rows.append(
                f"| {label} | {timing.get('time_us', '-')} | {grader or '-'} | {ratio} | {committed or '-'} | "
                f"{profile.get('roofline_share', '-')} |"
            )
    lines += ["", f"Accesses whose kernel's measured conflicts agree: {agree_accesses}/{total_accesses}", ""]
    lines += ["## Occupancy (blocks per SM)", ""]
    lines += [
        "| kernel | threads | registers (ptxas) | registers (cubin) | shared B | static | static, cubin registers "
        "| cudaOccupancyMaxActiveBlocksPerMultiprocessor | ncu limit | ncu achieved | static bound |"
    ]
    lines += ["| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *occ_rows]
    lines += [
        "",
        "## Time (µs)",
        "",
        "| kernel | profile | grader now | profile / grader | grader (committed run) | share of roofline |",
    ]
    lines += ["| --- | --- | --- | --- | --- | --- |", *time_rows]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--dry", action="store_true", help="static figures only (no GPU)")
    parser.add_argument("--budget-s", type=float, default=390.0, help="stop starting new steps after this")
    parser.add_argument("-j", "--jobs", type=int, default=12)
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="only the kernels with shared accesses, and only static figures and ncu (a short second run)",
    )
    options = parser.parse_args()
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    todo = jobs()
    if options.rerun:  # the first H200 run found no load/store-unit shared accesses in these
        todo = [j for j in todo if Path(j["file"]).name not in NO_SHARED_ACCESSES and j.get("id") != "03"]
    log(f"{len(todo)} kernels")
    arch = "sm_90"
    with cf.ThreadPoolExecutor(options.jobs) as pool:
        checks = {pool.submit(static_check, job, arch): job for job in todo}
        builds = {} if options.dry else {pool.submit(warm_build, job): job for job in todo}
        for future in cf.as_completed(checks):
            checks[future]["check"] = future.result()
        for future in cf.as_completed(builds):
            builds[future]["warm_build_error"] = future.result()
    log("static checks and warm builds done")
    if options.rerun:
        todo = [job for job in todo if (static_of(job) or {}).get("shared_accesses")]
        log(f"{len(todo)} kernels with shared accesses")
        ncu_all(todo, timeout_s=max(options.budget_s - elapsed(), 30))
        log("ncu done")
    elif not options.dry:
        examples = sorted(job["index"] for job in todo if job["group"] == "example")
        profile_all(todo, with_ncu=set(examples[:2]), stop_at=options.budget_s * 0.6)
        log("profiles done")
        dump(out, todo)
        ncu_all(todo, timeout_s=max(options.budget_s * 0.9 - elapsed(), 60))
        log("ncu done")
        dump(out, todo)
        occupancy_all(todo, arch)
        log("occupancy done")
        dump(out, todo)
        grader_all(todo, options.budget_s)
        log("grader done")
    dump(out, todo)
    print((out / "slow-summary.md").read_text())
    return 0


def dump(out: Path, todo: list[dict[str, Any]]) -> None:
    """Everything so far, so a run cut short still leaves its figures."""
    (out / "slow-results.json").write_text(json.dumps(todo, indent=1, default=str))
    try:
        (out / "slow-summary.md").write_text(summarize(todo))
    except Exception as err:
        (out / "slow-summary.md").write_text(f"summary failed: {type(err).__name__}: {err}\n")


if __name__ == "__main__":
    sys.exit(main())
