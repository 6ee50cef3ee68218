"""Every puzzle on the CPU: the reference matches torch on every case, each wrong solution fails for
its declared reason, each untouched starter fails. Reads the puzzle content; changes none of it."""

from __future__ import annotations

import math
import time

import pytest
import torch
from tilescope.puzzles.catalog import Puzzle, puzzles
from tilescope.puzzles.compare import compare, default_tolerance

PUZZLES = puzzles()
GRADING_PROCESS = {"protocol-violation", "child-exit", "out-of-memory", "timeout", "race"}
"""Failures of the grading process itself (a file that exits, forges its report, never loads), not
of what a kernel computes: the interpreter has nothing to say about them."""


def _verdict(p: Puzzle, path: str, case_index: int) -> str | None:
    """The failure kind of one case, judged the way the grader does, or ``None`` when it passes."""
    from tilescope.core.interpret import compile_kernel
    from tilescope.core.worker.loader import load_module

    case = p.cases[case_index]
    try:
        with open(path) as handle:
            namespace = load_module(handle.read(), path)
        kernel = compile_kernel(namespace["kernel"](**case.args), path)
    except Exception:
        return "compile-error"
    ref = p.reference()
    inputs = ref.inputs(case.args, torch.Generator().manual_seed(case_index), case.values, "cpu")
    expected = list(ref.reference(*[t.clone() for t in inputs]))
    declared = [(list(map(int, shape)), dtype) for _, shape, dtype in kernel.buffer_params()]
    given = [(list(t.shape), str(t.dtype).removeprefix("torch.")) for t in [*inputs, *expected]]
    if declared != given:
        return "signature"
    outputs = [torch.full_like(e, math.nan) if e.is_floating_point() else torch.zeros_like(e) for e in expected]
    run = kernel(*inputs, *outputs, outputs=set(p.outputs))
    global_names = {name for name, _, _ in kernel.buffer_params()}
    for f in run.findings:
        if f.kind.startswith("out-of-bounds"):
            return "out-of-bounds" if f.buffer in global_names else "runtime-error"
    for e, o in zip(expected, outputs, strict=True):
        atol, rtol = default_tolerance(e.dtype)
        c = compare(e, o, p.tolerance.get("atol", atol), p.tolerance.get("rtol", rtol))
        if c.ok:
            continue
        if any(run.unwritten.values()):
            return "wrong-values"
        overflow = c.got is not None and not math.isfinite(c.got) and math.isfinite(c.expected or 0.0)
        return "non-finite" if overflow else "wrong-values"
    return None


def _first_failure(p: Puzzle, path: str) -> str | None:
    for i in range(len(p.cases)):
        verdict = _verdict(p, path, i)
        if verdict:
            return verdict
    return None


@pytest.mark.slow
@pytest.mark.parametrize("p", PUZZLES, ids=[p.folder.name for p in PUZZLES])
def test_reference_passes_every_case_and_every_mistake_is_caught(p: Puzzle) -> None:
    start = time.perf_counter()
    for i, case in enumerate(p.cases):
        assert _verdict(p, str(p.solution_path), i) is None, case.name
    for wrong in p.wrong:
        if wrong.expect in GRADING_PROCESS or wrong.gpu_only:
            continue
        path = str(p.folder / wrong.file)
        if wrong.case is not None:
            index = next(i for i, c in enumerate(p.cases) if c.name == wrong.case)
            assert _verdict(p, path, index) == wrong.expect, wrong.file
        else:
            assert _first_failure(p, path) == wrong.expect, wrong.file
    assert _first_failure(p, str(p.starter_path)) is not None
    assert time.perf_counter() - start < 90
