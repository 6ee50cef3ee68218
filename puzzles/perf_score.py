"""Grading a time: stars against torch's time in the same run, the puzzle's baseline kernel, or the
roofline, and the words a report gives them. Plain arithmetic on figures the grader measured."""

from __future__ import annotations

import math

import torch
from tilescope.puzzles.buffers import dtype_of
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.render import speedup_words
from tilescope.puzzles.report import PerfResult
from tilescope.puzzles.timing import datasheet_roofline, stars
from tilescope.puzzles.verdict import Param


def traffic(params: list[Param]) -> int:
    """Bytes every parameter read or written once: the least any kernel can move."""
    return sum(math.prod(p.shape) * torch.empty((), dtype=dtype_of(p.dtype)).element_size() for p in params)


def perf_result(
    puzzle: Puzzle,
    args: dict[str, int],
    time_us: float,
    n_bytes: int,
    gpu: str,
    baseline_us: float | None,
    scopes: list[str] | None = None,
    torch_us: float | None = None,
) -> PerfResult:
    """Grade a time: against torch's time in the same run where the puzzle names a torch baseline (and
    against the naive version's where it names one, both to be met), else against the roofline. A figure
    above the roofline is a measurement error and earns nothing, and a kernel that does not use the
    lesson's technique (``requires``) earns at most two stars."""
    spec, ref = puzzle.perf, puzzle.reference()
    flops = int(ref.flops(args)) if hasattr(ref, "flops") else 0
    peak = datasheet_roofline(gpu)
    error = None
    achieved, ceiling, percent = time_us, 0.0, None
    if spec.bound != "latency":
        achieved = (flops if spec.bound == "compute" else n_bytes) / (time_us * 1e-6)
        if peak is None:
            error = f"no roofline is known for {gpu}"
        else:
            ceiling = peak.tensor_flops if spec.bound == "compute" else peak.bandwidth
            percent = round(100.0 * achieved / ceiling, 1)
            if percent > 100.0:
                error = f"{percent:.0f}% of the {spec.bound} roofline cannot be: a measurement error, not graded"
    speedup = None if baseline_us is None else round(baseline_us / time_us, 2)
    capped = None
    if spec.requires and scopes is not None and not any(s.startswith(spec.requires) for s in scopes):
        capped = f"the kernel allocates no {spec.requires} memory, the technique this puzzle teaches"
    ratio = None if torch_us is None else round(time_us / torch_us, 3)
    scores = []
    if ratio is not None and spec.torch_target:
        scores.append(spec.torch_target / ratio)
    if speedup is not None and spec.speedup:
        scores.append(speedup / spec.speedup)
    if scores:
        score = min(scores)
    elif spec.bound == "latency":
        score = spec.target / time_us
    else:
        score = (percent or 0.0) / spec.target
    return PerfResult(
        args=args,
        time_us=round(time_us, 2),
        bytes=n_bytes,
        flops=flops,
        bound=spec.bound,
        achieved=achieved,
        roofline=ceiling,
        percent=percent,
        target=spec.speedup if speedup is not None and spec.speedup else spec.target,
        stars=0 if error else min(stars(score), 2) if capped else stars(score),
        gpu=gpu,
        roofline_source="datasheet" if peak else "none",
        error=error,
        baseline_us=None if baseline_us is None else round(baseline_us, 2),
        speedup=speedup,
        capped=capped,
        torch_us=None if torch_us is None else round(torch_us, 2),
        torch_ratio=ratio,
        torch_target=spec.torch_target if ratio is not None else None,
        baseline_name=spec.baseline_name if speedup is not None else None,
    )


def perf_words(p: PerfResult) -> str:
    """A graded time as the summary gives it: the time, what it was judged against, the stars."""
    if p.error:
        return f"{p.time_us:.1f} µs: {p.error}"
    text = "★" * p.stars + "☆" * (3 - p.stars) + (f" ({p.capped})" if p.capped else "")
    if p.torch_ratio is not None:
        share = "" if p.percent is None else f", {p.percent:.0f}% of the {p.bound} roofline"
        name = p.baseline_name or "the baseline"
        naive = "" if p.speedup is None else f", {p.speedup:.2f}× {name}'s speed"
        if naive and not p.torch_target:
            naive += f" (three stars at {speedup_words(p.target, name)})"
        goal = f" (three stars at ≤ {p.torch_target:g}×)" if p.torch_target else ""
        return f"{p.time_us:.1f} µs, {p.torch_ratio:.2f}× torch's {p.torch_us:.1f} µs{goal}{share}{naive} {text}"
    if p.speedup is not None:
        name = p.baseline_name or "the baseline"
        return f"{p.time_us:.1f} µs, {p.speedup:.2f}× {name}'s speed (target {p.target:g}×) {text}"
    if p.percent is None:
        return f"{p.time_us:.1f} µs (target {p.target:g} µs) {text}"
    return f"{p.time_us:.1f} µs, {p.percent:.0f}% of the {p.bound} roofline (target {p.target:g}%) {text}"
