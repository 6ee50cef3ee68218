"""Which cases one check runs: the puzzle's fixed cases (every seed), hidden cases drawn from its
shape ranges with a fresh seed, and on a GPU the performance shape itself, checked before it is timed."""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from typing import Literal

from tilescope.puzzles.catalog import TIMED, HiddenSpec, Puzzle
from tilescope.puzzles.report import CaseId

CaseKind = Literal["fixed", "hidden", "timed"]


@dataclass(frozen=True)
class PlannedCase(CaseId):
    data_seed: int
    """The generator seed for the inputs."""
    kind: CaseKind

    @property
    def key(self) -> str:
        return repr(sorted(self.args.items()))


def args_text(args: dict[str, int]) -> str:
    """``M=128 N=64``: a case's arguments as every report names them."""
    return " ".join(f"{k}={v}" for k, v in args.items())


def fresh_seed() -> int:
    return secrets.randbelow(1 << 31)


def _draw(spec: HiddenSpec, rng: random.Random) -> dict[str, int]:
    args = {}
    for name, bounds in spec.ranges.items():
        if len(bounds) == 1:
            args[name] = int(bounds[0])
            continue
        step = spec.step.get(name, 1)
        low, high = -(-int(bounds[0]) // step), int(bounds[1]) // step
        args[name] = rng.randint(low, high) * step
    return args


def plan(puzzle: Puzzle, seed: int, *, timed: bool, interpret: bool = False) -> list[PlannedCase]:
    """The cases in the order they run: fixed, then hidden, then the timed shape; ``interpret`` takes
    the puzzle's smaller interpreter cases where it has them."""
    fixed = puzzle.cpu_cases if interpret and puzzle.cpu_cases is not None else puzzle.cases
    hidden = puzzle.cpu_hidden if interpret and puzzle.cpu_hidden is not None else puzzle.hidden
    cases = [
        PlannedCase(c.name, c.args, c.values, s, 1000 * s + i, "fixed")
        for i, c in enumerate(fixed)
        for s in range(puzzle.seeds)
    ]
    if hidden is not None:
        rng = random.Random(seed)
        for i in range(hidden.count):
            values = hidden.values[i % len(hidden.values)]
            cases.append(PlannedCase(f"hidden-{i + 1}", _draw(hidden, rng), values, seed, seed + i, "hidden"))
    if timed:
        cases.append(PlannedCase(TIMED, puzzle.perf.args, "normal", 0, 7, "timed"))
    return cases
