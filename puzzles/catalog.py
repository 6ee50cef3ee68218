"""The puzzle catalogue: each folder under ``content/`` is one puzzle, described by ``puzzle.json``.

Reading the catalogue imports neither torch nor TileLang, so listing puzzles is instant; the torch
reference is loaded only when a solution is graded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

from tilescope.puzzles.manifest import CONTENT, verified_bytes

KERNEL_NAME = "kernel"
"""Every puzzle file defines its kernel factory under this name."""

TIMED = "timed"
"""The performance case: the puzzle's own timed shape, which only a GPU check runs."""
Bound = Literal["memory", "compute", "latency"]
Expect = Literal[
    "wrong-values",
    "out-of-bounds",
    "compile-error",
    "signature",
    "non-finite",
    "runtime-error",
    "race",
    "timeout",
    "child-exit",
    "out-of-memory",
    "protocol-violation",
]


@dataclass(frozen=True)
class Case:
    """One correctness check: the factory's arguments and the kind of input values."""

    name: str
    args: dict[str, int]
    values: str = "normal"


@dataclass(frozen=True)
class PerfSpec:
    args: dict[str, int]
    bound: Bound
    target: float
    """Percent of the roofline for memory/compute-bound puzzles; microseconds for latency-bound ones."""
    baseline: str | None = None
    """A kernel of the puzzle's own (file in its folder) timed in the same run; the target is then a speed-up."""
    speedup: float | None = None
    """How many times faster than ``baseline`` earns three stars (below 1: how much slower may)."""
    requires: str | None = None
    """A storage scope the lesson's technique allocates in (``shared``): without it, at most two stars."""
    torch: str | None = None
    """What a learner would use instead: a lambda over the puzzle's tensors (inputs, then outputs) calling
    torch, timed in the same run; None where torch has no such operation."""
    torch_target: float | None = None
    """The most times torch's time that earns three stars (``1.25``: at most 25% slower than torch); None: torch's
    time is shown, not graded."""
    baseline_name: str = "the naive version"
    """What ``baseline`` is, in the words of a report."""


@dataclass(frozen=True)
class HiddenSpec:
    """Cases drawn afresh for every check: each argument uniform in its range, on its step."""

    count: int
    ranges: dict[str, list[int]]
    """``[low, high]`` (inclusive) per argument, or ``[value]`` for one held fixed."""
    values: list[str]
    step: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class WrongSolution:
    """A deliberately wrong solution kept as a test: the grader must fail it for the stated reason."""

    file: str
    mistake: str
    expect: Expect
    case: str | None = None
    """The case it must fail on (``timed`` is the performance shape), where that is the point."""
    timeout_s: float | None = None
    """A shorter limit for a file that never loads, so that its test does not wait the default."""

    @property
    def gpu_only(self) -> bool:
        """The mistake shows only at the timed shape, which only a GPU check runs."""
        return self.case == TIMED


@dataclass(frozen=True)
class Puzzle:
    number: int
    slug: str
    folder: Path
    title: str
    topic: str
    outputs: list[str]
    hints: list[str]
    cases: list[Case]
    perf: PerfSpec
    wrong: list[WrongSolution]
    seeds: int = 2
    tolerance: dict[str, float] = field(default_factory=dict)
    hidden: HiddenSpec | None = None
    cpu_cases: list[Case] | None = None
    """Smaller cases for the tile interpreter (still ragged, every axis different); None: ``cases``."""
    cpu_hidden: HiddenSpec | None = None
    """Hidden-case ranges for the tile interpreter; None: ``hidden``."""

    @property
    def id(self) -> str:
        return f"{self.number:02d}"

    @property
    def statement_path(self) -> Path:
        return self.folder / "statement.md"

    @property
    def starter_path(self) -> Path:
        return self.folder / "starter.py"

    @property
    def solution_path(self) -> Path:
        return self.folder / "solution.py"

    def statement(self) -> str:
        return self.statement_path.read_text()

    def reference(self) -> ModuleType:
        """The torch reference module (imports torch)."""
        return _load_reference(self.folder / "reference.py")


@cache
def _load_reference(path: Path) -> ModuleType:
    """The reference module, run from bytes just checked against the manifest (``ContentChanged`` if they
    differ), never from a file read again later or from a cached ``.pyc``."""
    code = compile(verified_bytes(path), str(path), "exec", dont_inherit=True)
    module = ModuleType(f"puzzles_reference_{path.parent.name}")
    module.__file__ = str(path)
    exec(code, module.__dict__)
    return module


def _hidden(meta: dict[str, Any]) -> HiddenSpec:
    return HiddenSpec(int(meta["count"]), dict(meta["ranges"]), list(meta["values"]), dict(meta.get("step", {})))


def _cases(items: list[dict[str, Any]]) -> list[Case]:
    return [Case(c["name"], dict(c["args"]), c.get("values", "normal")) for c in items]


def _puzzle(folder: Path) -> Puzzle:
    meta: dict[str, Any] = json.loads((folder / "puzzle.json").read_text())
    number, slug = folder.name.split("_", 1)
    perf = meta["perf"]
    hidden = meta.get("hidden")
    return Puzzle(
        number=int(number),
        slug=slug,
        folder=folder,
        title=meta["title"],
        topic=meta["topic"],
        outputs=list(meta["outputs"]),
        hints=list(meta["hints"]),
        cases=_cases(meta["cases"]),
        perf=PerfSpec(
            dict(perf["args"]),
            perf["bound"],
            float(perf["target"]),
            perf.get("baseline"),
            perf.get("speedup"),
            perf.get("requires"),
            perf.get("torch"),
            perf.get("torch_target"),
            perf.get("baseline_name", "the naive version"),
        ),
        wrong=[
            WrongSolution(
                w["file"],
                w["mistake"],
                w["expect"],
                w.get("case"),
                w.get("timeout_s"),
            )
            for w in meta["wrong"]
        ],
        seeds=int(meta.get("seeds", 2)),
        tolerance=dict(meta.get("tolerance", {})),
        hidden=None if hidden is None else _hidden(hidden),
        cpu_cases=_cases(meta["cpu_cases"]) if "cpu_cases" in meta else None,
        cpu_hidden=_hidden(meta["cpu_hidden"]) if "cpu_hidden" in meta else None,
    )


@cache
def puzzles() -> tuple[Puzzle, ...]:
    """Every puzzle, in order."""
    folders = sorted(p for p in CONTENT.iterdir() if (p / "puzzle.json").is_file())
    return tuple(_puzzle(f) for f in folders)


def get(key: str | int) -> Puzzle:
    """A puzzle by number (``3``, ``"03"``) or slug (``vector_add``)."""
    text = str(key)
    for p in puzzles():
        if (text.isdigit() and int(text) == p.number) or text in (p.slug, p.folder.name):
            return p
    raise KeyError(f"no puzzle {key!r}; `tilescope puzzles list` shows them")
