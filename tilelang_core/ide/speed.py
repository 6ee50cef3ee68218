"""The speed figures in editor terms: code-lens titles and the page a lens opens.

Above a kernel: the roofline bound on the H200 ("at best 41 µs on H200, memory-bound") once the
compiler tier has a model, and the last ``tilescope profile`` of it where one was kept beside the
file ("measured 47.1 µs on NVIDIA H200, 87% of the roofline").
"""

from __future__ import annotations

from tilescope.core.model import KernelModel
from tilescope.core.perf.perf_render import roofline_summary, static_lines
from tilescope.core.perf.profile_store import last_profile, profile_summary


def speed_lenses(model: KernelModel, path: str) -> list[str]:
    titles: list[str] = []
    if model.roofline is not None:
        bound = roofline_summary(model.roofline)
        if bound:
            titles.append(bound)
    kept = last_profile(path, model.kernel)
    measured = profile_summary(kept) if kept is not None else None
    if measured:
        titles.append(measured)
    return titles


def speed_markdown(model: KernelModel, path: str) -> str:
    """Bank conflicts, occupancy, roofline and the last profile of one kernel, as a page."""
    lines = [f"# Speed of `{model.kernel}` ({model.target})", "", "```", *(s.strip() for s in static_lines(model))]
    kept = last_profile(path, model.kernel)
    measured = profile_summary(kept) if kept is not None else None
    lines += ["```", "", f"Last profile: {measured}." if measured else "Not profiled yet: `tilescope profile FILE`."]
    return "\n".join(lines) + "\n"
