"""Colours shared by the image and terminal layout views, so a thread looks the same in both.

A warp gets a hue; lanes within it step through lightness. Neighbouring warps therefore stand apart
at a glance, and within a warp the lane order is still visible.
"""

from __future__ import annotations

import colorsys

import numpy as np

WARP = 32
_WARP_HUES = (0.58, 0.07, 0.33, 0.88, 0.14, 0.47, 0.0, 0.74)
"""Blue, orange, green, magenta, gold, teal, red, violet: eight warps before a hue repeats."""
BANK_GROUP_COLOURS = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#9c755f",
)
"""One colour per 16-byte slot of a 128-byte line (four banks each)."""


def warp_rgb(warp: int) -> tuple[float, float, float]:
    """The base colour of a warp (lane 0)."""
    return colorsys.hsv_to_rgb(_WARP_HUES[warp % len(_WARP_HUES)], 0.75, 0.85)


def thread_rgb(threads: np.ndarray) -> np.ndarray:
    """RGB in [0, 1] for every thread id in ``threads`` (any shape → shape + (3,))."""
    threads = np.asarray(threads)
    ids, inverse = np.unique(threads, return_inverse=True)
    table = np.array([_thread_colour(int(t)) for t in ids], dtype=float)
    return table[inverse.reshape(threads.shape)]


def _thread_colour(thread: int) -> tuple[float, float, float]:
    lane = (thread % WARP) / (WARP - 1)
    hue = _WARP_HUES[(thread // WARP) % len(_WARP_HUES)]
    return colorsys.hsv_to_rgb(hue, 0.35 + 0.55 * lane, 0.98 - 0.25 * lane)


def hex_colour(rgb: tuple[float, float, float] | np.ndarray) -> str:
    r, g, b = (round(255 * float(x)) for x in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"
