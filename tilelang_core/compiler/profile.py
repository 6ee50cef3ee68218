"""How fast a kernel is on this machine's GPU, next to how fast it could be: the typed request every
front end makes (``tilescope profile``, the MCP ``profile`` tool).

The static figures come from the compiler tier with ptxas: every shared access's bank conflicts,
occupancy, the roofline bound. On a machine with an NVIDIA GPU the kernel is then built at the
file's sizes in a supervised worker and timed as the puzzles' grader times (CUDA events, L2 flushed,
warm-up, median); where Nsight Compute is installed, one warm launch is measured (``compiler.ncu``).
Without a GPU it says so and returns the static figures.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tilescope.core.compiler.discovery import instantiations
from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.compiler.ncu import device_kernel_names, measure_with_ncu
from tilescope.core.compiler.service import DEFAULT_MEMORY_MB, Analyzer
from tilescope.core.model import KernelModel, ProfileReport, Timing, to_json
from tilescope.core.perf.peaks import gpu_key
from tilescope.core.static.entry import kernel_choice


@dataclass(frozen=True)
class ProfileQuery:
    """One kernel of one file to profile, and the limits to do it in."""

    file: str
    kernel: str | None = None
    """The kernel's name; when ``None``, the one the file means (``static.entry``: what it builds when run)."""
    args: dict[str, Any] = field(default_factory=lambda: {})
    """Sizes that override the file's own."""
    target: str | None = None
    """``sm_XX`` for the static figures: this GPU's, else sm_90, when ``None``."""
    timeout_s: float = 300.0
    memory_mb: int = DEFAULT_MEMORY_MB
    runs: int = 20
    warmup: int = 3
    ncu: bool = True
    """Measure one launch with Nsight Compute where it is installed."""


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
    request: ProfileQuery, analyzer: Analyzer | None = None, timer: Analyzer | None = None
) -> ProfileReport:
    """Static figures from ``analyzer`` (no GPU), then on a GPU the time from ``timer``'s worker, which sees it,
    and Nsight Compute's figures; workers given are reused, others started for this file (the timer only where
    there is a GPU). The timing worker has no address-space limit, as the puzzles' kernel process: a CUDA
    context reserves far more than it uses."""
    with ExitStack() as own:
        if analyzer is None:
            analyzer = own.enter_context(Analyzer(timeout_s=request.timeout_s, memory_mb=request.memory_mb))
        path = str(Path(request.file).resolve())
        source = Path(path).read_text()
        overrides = request.args or None
        gpu = local_gpu()
        target = request.target or (gpu.arch if gpu and gpu.arch else "sm_90")
        meant = kernel_choice(source, path) if request.kernel is None else None
        wanted = meant.kernel if meant is not None else request.kernel
        analysis = analyzer.analyze(path, source, target=target, kernel=wanted, args=overrides, ptxas=True)
        kernel = analysis.kernels[0] if analysis.kernels else None
        name = kernel.kernel if kernel is not None else (request.kernel or "")
        problems = [d.message for d in analysis.all_diagnostics() if d.severity == "error"]
        base = {"path": path, "kernel": name, "args": kernel.args if kernel else {}, "target": target}
        if kernel is None or problems:
            warnings = [d.message for d in analysis.all_diagnostics() if d.severity == "warning"]
            message = (problems or warnings or ["no kernel lowered"])[0]
            return ProfileReport(
                **base, gpu=gpu.name if gpu else None, message=message, timing=None, roofline_share=None, static=kernel
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
            timer = own.enter_context(Analyzer(timeout_s=request.timeout_s, memory_mb=0, gpu=True))
        payload = kernel_payload(path, source, kernel, overrides, request.warmup, request.runs)
        timing = timer.profile(payload, request.timeout_s)
        ncu = None
        names = device_kernel_names(kernel)
        if request.ncu and timing.error is None and names:
            ncu = measure_with_ncu(payload, names, request.timeout_s)
        message = timing.error or f"timed on {timing.gpu}"
        return ProfileReport(
            **base,
            gpu=gpu.name,
            message=message,
            timing=timing,
            roofline_share=_share(kernel, timing),
            static=kernel,
            ncu=ncu,
        )
