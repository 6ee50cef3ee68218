"""The last ``tilescope profile`` of each kernel, kept in ``.tilescope/profile.json`` beside its file.

The editor shows it as a code lens without running anything: the file is written only by the
``profile`` command, on a machine with a GPU, and read here as plain JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tilescope.core.model import ProfileReport, to_json

PROFILE_FILE = Path(".tilescope") / "profile.json"
_KEPT_STATIC = ("kernel", "shared_accesses", "occupancy", "roofline")


def save(report: ProfileReport) -> Path:
    """Keep ``report`` (its static part trimmed to the speed figures) by file and kernel."""
    where = Path(report.path).parent / PROFILE_FILE
    try:
        kept = json.loads(where.read_text()) if where.exists() else {}
    except (OSError, ValueError):
        kept = {}
    summary = to_json(report)
    if summary.get("static"):
        summary["static"] = {k: summary["static"][k] for k in _KEPT_STATIC}
    kept.setdefault(report.path, {})[report.kernel] = summary
    where.parent.mkdir(exist_ok=True)
    where.write_text(json.dumps(kept, indent=1))
    return where


def last_profile(path: str, kernel: str) -> dict[str, Any] | None:
    """The kept report of ``kernel`` in the file at ``path``, as saved; ``None`` when never profiled."""
    resolved = Path(path).resolve()
    try:
        return json.loads((resolved.parent / PROFILE_FILE).read_text()).get(str(resolved), {}).get(kernel)
    except (OSError, ValueError, AttributeError):
        return None


def profile_summary(kept: dict[str, Any]) -> str | None:
    """``measured 132.7 µs on NVIDIA H200, 84% of the roofline``: the lens's words for a kept report."""
    timing = kept.get("timing") or {}
    if not timing.get("time_us") or timing.get("error"):
        return None
    share = kept.get("roofline_share")
    tail = f", {share:.0%} of the roofline" if isinstance(share, int | float) else ""
    return f"measured {timing['time_us']:g} µs on {timing.get('gpu', 'the GPU')}{tail}"
