"""The one colour scheme of every layout drawing, as hex strings any renderer can use.

A warp gets a hue; lanes within it step through lightness, so neighbouring warps stand apart and
the lane order inside a warp stays visible. Registers run light to dark; the eight 16-byte slots of
a 128-byte line have one categorical colour each; conflict degrees go green to dark red in the
bins 1, 2, 3–4, 5–8, 9–16, 17–32.
"""

from __future__ import annotations

import colorsys

WARP = 32
_WARP_HUES = (0.58, 0.07, 0.33, 0.88, 0.14, 0.47, 0.0, 0.74)
"""Blue, orange, green, magenta, gold, teal, red, violet: eight warps before a hue repeats."""
SLOT_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f")
"""One colour per 16-byte slot of a 128-byte line (four banks each)."""
DEGREE_BINS: tuple[tuple[int, str, str], ...] = (
    (1, "1", "#d9f0d3"),
    (2, "2", "#fee08b"),
    (4, "3–4", "#fdae61"),
    (8, "5–8", "#f46d43"),
    (16, "9–16", "#d73027"),
    (32, "17–32", "#7f0000"),
)
"""(highest degree in the bin, its name, its colour), conflict-free first."""


def hex_colour(rgb: tuple[float, float, float]) -> str:
    r, g, b = (round(255 * float(x)) for x in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


def warp_colour(warp: int) -> str:
    """The base colour of a warp, for legends."""
    return hex_colour(colorsys.hsv_to_rgb(_WARP_HUES[warp % len(_WARP_HUES)], 0.75, 0.85))


def thread_colour(thread: int) -> str:
    lane = (thread % WARP) / (WARP - 1)
    hue = _WARP_HUES[(thread // WARP) % len(_WARP_HUES)]
    return hex_colour(colorsys.hsv_to_rgb(hue, 0.35 + 0.55 * lane, 0.98 - 0.25 * lane))


def register_colour(register: int, count: int) -> str:
    """Register ``register`` of ``count``: pale blue for the first, deep blue for the last."""
    t = register / max(1, count - 1)
    return hex_colour(colorsys.hsv_to_rgb(0.6, 0.15 + 0.7 * t, 0.97 - 0.45 * t))


def degree_colour(degree: int) -> str:
    return next((colour for limit, _, colour in DEGREE_BINS if degree <= limit), DEGREE_BINS[-1][2])
