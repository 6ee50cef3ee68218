"""One case, run and judged: the grader lends the kernel process buffers it owns, has it run the kernel
on them, reads back every byte and judges what is there (``verdict``). Nothing the kernel process says
about the values is believed; on the interpreter its access findings are checked too.
"""

from __future__ import annotations

from typing import Any

import torch
from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.cases import PlannedCase
from tilescope.puzzles.catalog import Puzzle
from tilescope.puzzles.children import Child
from tilescope.puzzles.protocol import RunCaseRequest
from tilescope.puzzles.replies import Violation, call
from tilescope.puzzles.report import CaseResult
from tilescope.puzzles.verdict import (
    Param,
    bounds_verdict,
    check_output,
    first_failure,
    judge_inputs,
    judge_output,
    parse_findings,
    signature_problem,
)


def _result(case: PlannedCase, **fields: Any) -> CaseResult:
    return CaseResult(case.name, case.args, case.values, case.seed, **fields)


def run_case(
    puzzle: Puzzle,
    case: PlannedCase,
    params: list[Param],
    executor: Child,
    ws: Workspace,
    device: str,
    timeout_s: float,
    *,
    sanitized: bool = False,
) -> CaseResult:
    """Lend the case's tensors, have the kernel process run it, and judge what it left in them. The kernel
    process first leaves garbage in registers and shared memory (a cuBLAS GEMM) and the buffers have guard
    zones, except in a ``sanitized`` run: compute-sanitizer watches the bounds itself, and should see the
    learner's kernel alone."""
    ref = puzzle.reference()
    on_gpu = case.kind == "timed" and device == "cuda"  # the timed shape's inputs are large: make them there
    gen = torch.Generator(device="cuda" if on_gpu else "cpu").manual_seed(case.data_seed)
    inputs = ref.inputs(case.args, gen, case.values, device if on_gpu else "cpu")
    host = "cpu" if device == "interpret" else device
    expected = list(ref.reference(*[t.clone().to(host) for t in inputs]))
    bug = reference_bug(puzzle.outputs, expected)
    if bug:
        return _result(case, passed=False, failure="reference-bug", problem=bug)
    problem = signature_problem(params, [*inputs, *expected])
    if problem:
        return _result(case, passed=False, failure="signature", problem=problem)
    names = [p.name for p in params]
    in_bufs = [
        ws.buffer(n, tuple(t.shape), t.dtype, case.data_seed + i, guarded=not sanitized)
        for i, (n, t) in enumerate(zip(names, inputs, strict=False))
    ]
    for buf, t in zip(in_bufs, inputs, strict=True):
        buf.fill(t)
    out_bufs = [
        ws.buffer(n, tuple(e.shape), e.dtype, case.data_seed + 100 + i, guarded=not sanitized)
        for i, (n, e) in enumerate(zip(names[len(inputs) :], expected, strict=True))
    ]
    for buf in out_bufs:
        buf.poison_body()
    specs = [b.spec.to_json() for b in (*in_bufs, *out_bufs)]
    request: RunCaseRequest = {"op": "run", "key": case.key, "buffers": specs, "device": device, "dirty": not sanitized}
    if device == "interpret":
        request["outputs"] = names[len(inputs) :]
    reply = call(executor, request, timeout_s, {"ran", "run-error"})
    if reply["op"] == "run-error":
        problem = f"The kernel failed: {reply.get('message')}"
        return _result(case, passed=False, failure="runtime-error", problem=problem)
    for buf in (*in_bufs, *out_bufs):
        buf.load(host)
    if device == "interpret":
        try:
            findings = parse_findings(reply.get("findings"))
        except (ValueError, TypeError, KeyError) as err:
            raise Violation(f"an interpreted run's answer with {err}") from err
        verdict = bounds_verdict(findings, set(names))
        if verdict:
            return _result(case, passed=False, failure=verdict[0], problem=verdict[1])
    checks = [
        check_output(n, e, b, puzzle.tolerance) for n, e, b in zip(puzzle.outputs, expected, out_bufs, strict=True)
    ]
    verdict = first_failure([v for c in checks if (v := judge_output(c))]) or judge_inputs(
        names[: len(inputs)], in_bufs, inputs
    )
    if verdict:
        return _result(case, passed=False, outputs=checks, failure=verdict[0], problem=verdict[1])
    return _result(case, passed=True, outputs=checks)


def reference_bug(names: list[str], expected: list[torch.Tensor]) -> str | None:
    """A NaN in the reference's own output: the puzzle's bug, never a learner's pass (NaN is the poison)."""
    for name, tensor in zip(names, expected, strict=False):
        if tensor.is_floating_point() and bool(tensor.isnan().any()):
            where = ", ".join(str(int(i)) for i in torch.nonzero(tensor.isnan())[0])
            count = int(tensor.isnan().sum())
            return (
                f"The puzzle's reference computed NaN for {name}[{where}] ({count} of {tensor.numel()} elements): "
                "a bug in the reference, not in your kernel; this case cannot be graded."
            )
    return None
