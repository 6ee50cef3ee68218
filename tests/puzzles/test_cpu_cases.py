"""The interpreter's smaller cases keep what makes the GPU cases worth running: the same case names
and value kinds (so a wrong solution's named case exists), ragged sizes that are not multiples of a
tile, a case that differs along every axis, and hidden draws over every factory argument."""

from __future__ import annotations

import pytest
from tilescope.puzzles import catalog

PUZZLES = [p for p in catalog.puzzles() if p.cpu_cases is not None]


def test_the_large_puzzles_have_interpreter_cases() -> None:
    assert {p.id for p in PUZZLES} >= {"04", "07", "12", "15", "17"}


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_cpu_cases_mirror_the_gpu_cases(puzzle: catalog.Puzzle) -> None:
    assert puzzle.cpu_cases is not None
    assert [(c.name, c.values) for c in puzzle.cpu_cases] == [(c.name, c.values) for c in puzzle.cases]
    assert all(set(c.args) == set(puzzle.cases[0].args) for c in puzzle.cpu_cases)
    ragged = next(c for c in puzzle.cpu_cases if c.name == "ragged")
    assert any(v % 64 for v in ragged.args.values()), ragged.args


@pytest.mark.parametrize("puzzle", [p for p in PUZZLES if len(p.cases[0].args) > 1], ids=lambda p: p.id)
def test_a_cpu_case_differs_along_every_axis(puzzle: catalog.Puzzle) -> None:
    assert puzzle.cpu_cases is not None
    varying = [k for k in puzzle.cases[0].args if len({c.args[k] for c in puzzle.cases}) > 1]
    assert any(len({c.args[k] for k in varying}) == len(varying) for c in puzzle.cpu_cases)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_cpu_hidden_cases_draw_every_factory_argument(puzzle: catalog.Puzzle) -> None:
    hidden = puzzle.cpu_hidden
    assert hidden is not None and puzzle.hidden is not None and hidden.count >= 1
    assert set(hidden.ranges) == set(puzzle.hidden.ranges)
    assert hidden.values == puzzle.hidden.values and hidden.step == puzzle.hidden.step


def test_every_puzzle_keeps_a_mistake_for_the_cpu_check() -> None:
    """A mistake aimed at the timed shape is left to the GPU check; each puzzle has others the CPU catches."""
    assert any(w.gpu_only for p in catalog.puzzles() for w in p.wrong)
    assert all(any(not w.gpu_only for w in p.wrong) for p in catalog.puzzles())
