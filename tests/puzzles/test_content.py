"""Every puzzle is complete: statement, starter, reference solution, torch reference, hints, a
performance target, test cases that include tiny and ragged sizes, and wrong solutions."""

from __future__ import annotations

import ast
import json
import typing

import pytest
import torch
from tilescope.puzzles import catalog
from tilescope.puzzles.catalog import KERNEL_NAME
from tilescope.puzzles.tensors import VALUE_KINDS

PUZZLES = catalog.puzzles()
EXPECTS = set(typing.get_args(catalog.Expect))
REDUCTION_AXIS = {
    "06": "N",
    "07": "N",
    "08": "N",
    "09": "N",
    "11": "K",
    "12": "K",
    "13": "K",
    "14": "K",
    "16": "seq_len",
    "17": "K",
}
SOFTMAX_LIKE = {"07", "08", "16"}


def test_there_are_at_least_sixteen_puzzles_numbered_in_order() -> None:
    assert len(PUZZLES) >= 16
    assert [p.number for p in PUZZLES] == list(range(1, len(PUZZLES) + 1))


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_puzzle_has_every_part(puzzle: catalog.Puzzle) -> None:
    for name in ("statement.md", "starter.py", "solution.py", "reference.py", "puzzle.json"):
        assert (puzzle.folder / name).is_file(), name
    assert puzzle.statement().startswith(f"# {puzzle.id} ·")
    assert len(puzzle.hints) >= 3 and all(h.strip() for h in puzzle.hints)
    assert puzzle.perf.target > 0 and puzzle.perf.bound in ("memory", "compute", "latency")
    assert puzzle.wrong, "needs at least one deliberately wrong solution"
    for w in puzzle.wrong:
        assert (puzzle.folder / w.file).is_file(), w.file
        assert w.expect in EXPECTS
    ref = puzzle.reference()
    assert callable(ref.inputs) and callable(ref.reference)
    if puzzle.perf.bound == "compute":
        assert ref.flops(puzzle.perf.args) > 0


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_kernel_files_define_the_factory_with_a_directive(puzzle: catalog.Puzzle) -> None:
    files = [puzzle.starter_path, puzzle.solution_path, *(puzzle.folder / w.file for w in puzzle.wrong)]
    for path in files:
        source = path.read_text()
        tree = ast.parse(source)
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert KERNEL_NAME in names, path
        assert "# tilescope:" in source, path
    assert puzzle.starter_path.read_text() != puzzle.solution_path.read_text()


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_cases_cover_tiny_sizes_and_special_values(puzzle: catalog.Puzzle) -> None:
    sizes = [min(c.args.values()) for c in puzzle.cases]
    assert min(sizes) <= 8, "a tiny case"
    assert any(any(v % 8 for v in c.args.values()) or any(v % 64 for v in c.args.values()) for c in puzzle.cases)
    assert {c.values for c in puzzle.cases} <= set(VALUE_KINDS)
    assert len({c.values for c in puzzle.cases}) >= 2, "special values beyond plain normal data"
    assert puzzle.seeds >= 2


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_reference_runs_on_the_cpu_for_the_smallest_case(puzzle: catalog.Puzzle) -> None:
    case = min(puzzle.cases, key=lambda c: sum(c.args.values()))
    ref = puzzle.reference()
    inputs = ref.inputs(case.args, torch.Generator().manual_seed(0), case.values, "cpu")
    outputs = ref.reference(*inputs)
    assert len(outputs) == len(puzzle.outputs)
    assert all(torch.isfinite(o.float()).all() for o in outputs)


def test_puzzle_json_has_no_unknown_keys() -> None:
    known = {"title", "topic", "outputs", "hints", "cases", "perf", "wrong", "tolerance", "seeds", "hidden"}
    known |= {"cpu_cases", "cpu_hidden"}
    for p in PUZZLES:
        assert set(json.loads((p.folder / "puzzle.json").read_text())) <= known, p.id


def test_lookup_by_number_and_slug() -> None:
    assert catalog.get(3).slug == "vector_add"
    assert catalog.get("03").number == 3
    assert catalog.get("vector_add").number == 3
    with pytest.raises(KeyError):
        catalog.get(999)


@pytest.mark.parametrize("puzzle", [p for p in PUZZLES if len(p.cases[0].args) > 1], ids=lambda p: p.id)
def test_a_case_differs_along_every_axis_with_the_reduction_axis_largest(puzzle: catalog.Puzzle) -> None:
    varying = [k for k in puzzle.cases[0].args if len({c.args[k] for c in puzzle.cases}) > 1]
    reduction = REDUCTION_AXIS.get(puzzle.id)

    def uneven(case: catalog.Case) -> bool:
        sizes = [case.args[k] for k in varying]
        largest = reduction is None or case.args[reduction] == max(sizes)
        return len(set(sizes)) == len(sizes) and largest

    assert any(uneven(c) for c in puzzle.cases), varying


@pytest.mark.parametrize("puzzle", [p for p in PUZZLES if p.id in SOFTMAX_LIKE], ids=lambda p: p.id)
def test_softmax_like_puzzles_have_a_large_values_case(puzzle: catalog.Puzzle) -> None:
    assert any(c.values == "large" for c in puzzle.cases)


@pytest.mark.parametrize("puzzle", PUZZLES, ids=lambda p: p.id)
def test_hidden_cases_draw_every_factory_argument(puzzle: catalog.Puzzle) -> None:
    assert puzzle.hidden is not None and puzzle.hidden.count >= 1
    assert set(puzzle.hidden.ranges) == set(puzzle.cases[0].args)
    assert all(len(r) in (1, 2) and r[0] >= 1 and r[-1] >= r[0] for r in puzzle.hidden.ranges.values())
    assert set(puzzle.hidden.values) <= set(VALUE_KINDS)
    if puzzle.perf.baseline:
        assert (puzzle.folder / puzzle.perf.baseline).is_file() and puzzle.perf.speedup


@pytest.mark.parametrize("puzzle", [p for p in PUZZLES if p.perf.torch], ids=lambda p: p.id)
def test_the_torch_baseline_computes_what_the_kernel_must(puzzle: catalog.Puzzle) -> None:
    """Stars are graded against this call: it must be the same operation, on the same tensors in order."""
    from tilescope.puzzles.timing import torch_baseline

    case = min(puzzle.cases, key=lambda c: (any(v == 1 for v in c.args.values()), sum(c.args.values())))
    ref = puzzle.reference()
    inputs = ref.inputs(case.args, torch.Generator().manual_seed(0), "normal", "cpu")
    expected = ref.reference(*[t.clone() for t in inputs])
    outputs = [torch.full_like(e, float("nan")) for e in expected]
    returned = torch_baseline(puzzle.perf.torch)(*inputs, *outputs)
    if isinstance(returned, torch.Tensor):
        returned = (returned,)
    got = [r for r in returned if isinstance(r, torch.Tensor)] if returned is not None else outputs
    for g, e in zip(got, expected, strict=True):
        if g.dim() == 4 and g.shape != e.shape:  # SDPA: (batch, heads, seq, dim); the puzzle: (batch, seq, heads, dim)
            g = g.transpose(1, 2)
        g = g.reshape(e.shape)  # conv1d keeps its channel axis
        torch.testing.assert_close(g.float(), e.float(), atol=2e-2, rtol=2e-2)
