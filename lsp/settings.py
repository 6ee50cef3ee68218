"""Server settings, from ``initializationOptions`` and ``workspace/didChangeConfiguration``.

Shape of both (the latter may wrap it in a ``tilescope`` section)::

    {"target": "sm_90", "timeout": 60, "python": "/path/to/python", "ptxas": false, "idle": 0.5, "dryRun": true,
     "hints": {"buffers": true, "parameters": true, "launch": true, "layouts": true, "pipelines": true}}

Trust is not among them: editors fill settings from files inside the project, so a ``trusted``
setting would let a repository trust itself (see ``configuration.py`` for where trust comes from).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from tilescope.core.ide import HINT_KINDS

SECTION = "tilescope"


@dataclass(frozen=True)
class Settings:
    trusted: bool = False
    """Whether kernel code may run (the compiler tier imports and builds the user's file): set only
    by ``configuration.py`` from the editor's own trust or the user's trust list, never by :func:`merged`."""
    target: str = "sm_90"
    timeout: float = 60.0
    python: str | None = None
    hints: frozenset[str] = field(default_factory=lambda: frozenset(HINT_KINDS))
    idle_s: float = 0.5
    """How long a document must rest before the compiler tier analyses it."""
    ptxas: bool = False
    """Also compile the device code with ptxas (seconds per kernel) for registers and spills."""
    dry_run: bool = True
    """Where the source leaves sizes unknown, learn them by running the file's ``__main__`` with stand-in
    kernels (``tilescope.core.record.dry_run``); only ever while ``trusted``."""


@dataclass(frozen=True)
class Option:
    """One setting as editors offer it, under the ``tilescope.`` section (``hints.layouts``).

    The VS Code extension's ``contributes.configuration`` is tested against :data:`OPTIONS`.
    """

    key: str
    type: Literal["boolean", "number", "string"]
    default: bool | float | str
    description: str
    minimum: float | None = None


_HINT_WORDS = {
    "buffers": "shape · dtype · scope after each T.alloc_*.",
    "parameters": "shape · dtype on T.Tensor parameters.",
    "launch": "launch geometry on T.Kernel (grid × threads, shared bytes).",
    "layouts": "inferred fragment layouts (thread extent, elements per thread, replicate).",
    "pipelines": "stages on T.Pipelined.",
}
_DEFAULTS = Settings()
OPTIONS: tuple[Option, ...] = (
    Option(
        "target",
        "string",
        _DEFAULTS.target,
        "Target architecture the compiler tier lowers for (sm_80, sm_90, sm_100, gfx942, ascend...); a kernel "
        "that declares its own (@tilelang.jit(target=...), the Ascend dialect) is lowered for that one.",
    ),
    *(Option(f"hints.{kind}", "boolean", True, f"Inlay hints: {_HINT_WORDS[kind]}") for kind in HINT_KINDS),
    Option(
        "timeout",
        "number",
        _DEFAULTS.timeout,
        "Seconds the compiler tier may spend on one file before it is stopped.",
        minimum=1,
    ),
    Option(
        "ptxas",
        "boolean",
        _DEFAULTS.ptxas,
        "Also compile the device code with ptxas (a few seconds per kernel) to report registers, spills and "
        'shared memory. Needs ptxas (pip install "tilelang[nvcc]").',
    ),
    Option(
        "dryRun",
        "boolean",
        _DEFAULTS.dry_run,
        "In a trusted workspace, when the source does not give every size of a kernel, learn them by running the "
        "file's __main__ (or a test that imports it) once, supervised, with kernels replaced by stand-ins: no GPU, "
        "no timing, no autotuning.",
    ),
    Option(
        "idle",
        "number",
        _DEFAULTS.idle_s,
        "Seconds a document must rest before the compiler tier analyses it.",
        minimum=0,
    ),
)
"""What an editor lets the user set; trust comes from the editor's workspace trust, not a setting."""


def _section(raw: Any) -> dict[str, Any]:
    """The client's settings object, unwrapped from its ``tilescope`` section if it has one."""
    if not isinstance(raw, dict):
        return {}
    raw = cast("dict[str, Any]", raw)  # JSON from the client: each value is checked by its reader
    return cast("dict[str, Any]", raw[SECTION]) if isinstance(raw.get(SECTION), dict) else raw


def asks_for_trust(raw: Any) -> bool:
    """Whether the client sent a ``trusted`` setting (ignored: the server says once how to trust)."""
    return "trusted" in _section(raw)


def merged(settings: Settings, raw: Any) -> Settings:
    """``settings`` updated with whatever a client sent; unknown or ill-typed values, and ``trusted``, are ignored."""
    raw = _section(raw)
    changes: dict[str, Any] = {}
    if isinstance(raw.get("target"), str) and raw["target"]:
        changes["target"] = raw["target"]
    if isinstance(raw.get("timeout"), int | float) and raw["timeout"] > 0:
        changes["timeout"] = float(raw["timeout"])
    if isinstance(raw.get("python"), str):
        changes["python"] = raw["python"] or None
    if isinstance(raw.get("ptxas"), bool):
        changes["ptxas"] = raw["ptxas"]
    if isinstance(raw.get("dryRun"), bool):
        changes["dry_run"] = raw["dryRun"]
    if isinstance(raw.get("idle"), int | float) and raw["idle"] >= 0:
        changes["idle_s"] = float(raw["idle"])
    hints = raw.get("hints")
    if isinstance(hints, dict):
        hints = cast("dict[str, Any]", hints)
        enabled = set(settings.hints)
        for kind in HINT_KINDS:
            if isinstance(hints.get(kind), bool):
                (enabled.add if hints[kind] else enabled.discard)(kind)
        changes["hints"] = frozenset(enabled)
    return replace(settings, **changes)
