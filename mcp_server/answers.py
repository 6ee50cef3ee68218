"""Answers sized for an agent: a few levels of detail, and truncation that says what it left out.

An agent pays for every token it reads, so a tool answers compactly unless asked for more:
``brief`` caps every list at a few items, ``normal`` at more, ``full`` keeps everything (the same
record ``tilescope ... --json`` prints). Whatever is cut is named in ``omitted`` ("kernels[0].buffers:
12 more of 20"), and an answer that is still over its character budget is cut harder, never silently.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Literal

Detail = Literal["brief", "normal", "full"]

LIST_CAPS: dict[str, int | None] = {"brief": 6, "normal": 32, "full": None}
MAX_CHARS = 40_000
"""Default budget of one answer's JSON text (about 10k tokens)."""


def cap_lists(value: Any, limit: int | None, where: str = "") -> tuple[Any, list[str]]:
    """``value`` with every list cut to ``limit`` items, and one note per cut."""
    omitted: list[str] = []

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, f"{path}.{k}" if path else k) for k, v in node.items()}
        if isinstance(node, list):
            kept = node if limit is None or len(node) <= limit else node[:limit]
            if len(kept) < len(node):
                omitted.append(f"{path}: {len(node) - len(kept)} more of {len(node)}")
            return [walk(item, f"{path}[{i}]") for i, item in enumerate(kept)]
        return node

    return walk(value, where), _collapsed(omitted)


def _collapsed(notes: list[str]) -> list[str]:
    """Sibling cuts said once: ``rows[*]: 96 more of 128 (in each of 6)`` rather than six lines."""
    counts = Counter(re.sub(r"\[\d+\]", "[*]", note) for note in notes)
    said: set[str] = set()
    out: list[str] = []
    for note in notes:
        general = re.sub(r"\[\d+\]", "[*]", note)
        if counts[general] == 1:
            out.append(note)
        elif general not in said:
            said.add(general)
            out.append(f"{general} (in each of {counts[general]})")
    return out


def sized(answer: dict[str, Any], detail: Detail, max_chars: int = MAX_CHARS) -> dict[str, Any]:
    """``answer`` cut to ``detail``'s list cap, then harder until its JSON fits ``max_chars``.

    The ``full`` record (key ``full``, present only at that detail) is dropped before anything else
    is cut further, with a note saying so.
    """
    limit = LIST_CAPS[detail]
    body = {k: v for k, v in answer.items() if k != "full"}
    capped, omitted = cap_lists(body, limit)
    result: dict[str, Any] = {"detail": detail, **capped}
    if detail == "full" and "full" in answer:
        result["full"] = answer["full"]
    if len(json.dumps(result)) > max_chars and "full" in result:
        del result["full"]
        omitted.append(f"full: the complete record is over {max_chars:,} characters; ask with a larger max_chars")
    for tighter in (32, 8, 3, 1):
        if len(json.dumps(result)) <= max_chars:
            break
        if limit is not None and tighter >= limit:
            continue
        capped, omitted_now = cap_lists(body, tighter)
        result = {"detail": detail, **capped}
        omitted = [*omitted_now, *(o for o in omitted if o.startswith("full:"))]
    result["omitted"] = omitted
    return result
