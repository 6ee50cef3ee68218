"""Whether a lowered kernel can run, in one word and a reason: the verdict of a variant or an autotune config.

Pure model logic shared by the worker (autotune configs) and the ``variants`` command. It only reads
what the compiler reported: errors from lowering, the final kernel's threads, ptxas's spills.
"""

from __future__ import annotations

from tilescope.core.model import FitStatus, KernelModel

MAX_THREADS_PER_BLOCK = 1024
"""CUDA's, HIP's and Metal's per-block limit: a launch over it fails on every target Tilescope lowers for."""


def fit(model: KernelModel) -> tuple[FitStatus, str | None, int | None]:
    """(status, reason, line) for one lowered kernel; the first error decides."""
    errors = [d for d in model.diagnostics if d.severity == "error"]
    overflow = next((d for d in errors if d.code == "shared-memory-overflow"), None)
    if overflow is not None:
        return "exceeds-shared-memory", overflow.message, overflow.span.line
    if errors:
        first = errors[0]
        return "fails", first.message, first.span.line
    if not model.passes:
        first = next(iter(model.diagnostics), None)
        return "not-lowered", first.message if first else None, first.span.line if first else None
    launch = model.launch
    if launch is not None and launch.threads_after_ws > MAX_THREADS_PER_BLOCK:
        line = launch.span.line if launch.span else None
        return (
            "exceeds-threads",
            f"{launch.threads_after_ws} threads per block, over the limit of {MAX_THREADS_PER_BLOCK}",
            line,
        )
    spill = next((d for d in model.diagnostics if d.code == "ptxas-spill"), None)
    if spill is not None:
        return "spills", spill.message, spill.span.line
    return "fits", None, None


_SUMMARY_WORDS: dict[str, tuple[str, str]] = {
    "fits": ("fits", "fit"),
    "spills": ("spills registers", "spill registers"),
    "exceeds-shared-memory": ("exceeds shared memory", "exceed shared memory"),
    "exceeds-threads": ("exceeds the thread limit", "exceed the thread limit"),
    "fails": ("fails to lower", "fail to lower"),
    "not-lowered": ("not lowered", "not lowered"),
}


def summary(statuses: list[FitStatus]) -> str:
    """``24 configs: 18 fit, 6 exceed shared memory``, statuses in a fixed order."""
    total = len(statuses)
    parts = []
    for status, (one, many) in _SUMMARY_WORDS.items():
        count = statuses.count(status)  # type: ignore[arg-type]  # the table's keys are FitStatus literals
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    noun = "config" if total == 1 else "configs"
    return f"{total} {noun}: " + ", ".join(parts) if parts else f"{total} {noun}"
