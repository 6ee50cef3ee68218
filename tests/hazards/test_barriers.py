"""The barrier check of the final IR: races between threads that no barrier orders, at the user's line.

The check alone is run on each fixture lowered in this process (the interpreter may report the same
race; here nothing hides a miss of the check), then through the worker on a sample of TileLang's
own examples, which all run correctly upstream and so must get no hazard error.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest
from tilescope.core.codes import HAZARD_CODES
from tilescope.core.compiler.service import Analyzer
from tilescope.core.interpret.hazards.check import merged
from tilescope.core.model import Diagnostic, Related, Span

from tests.hazards.test_fixtures import planted

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "benchmarks" / "hazards" / "fixtures"
PLANTED = [
    "barrier_neighbour_threads",
    "barrier_tree_threads",
    "race_histogram_threads",
    "barrier_shift_threads",
    "race_bound_value",
]
TWINS = [
    "ok_neighbour_threads_synced",
    "ok_tree_threads_synced",
    "ok_histogram_threads_atomic",
    "ok_shift_threads_synced",
    "ok_barrier_neighbour",
]
CORPUS = Path(
    os.environ.get(
        "TILESCOPE_CORPUS", Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "tilelang-examples"
    )
)
SAMPLE = [
    "elementwise/example_elementwise_add.py",
    "norm/layernorm.py",
    "norm/rms_norm.py",
    "gemm/example_gemm.py",
    "gemm/example_gemm_intrinsics.py",
    "gemm/example_gemm_persistent.py",
    "gemm/example_gemm_autotune.py",
    "flash_attention/example_mha_fwd_bhsd.py",
    "flash_attention/example_mha_fwd_bshd.py",
    "flash_attention/example_gqa_fwd_bshd.py",
    "flash_attention/example_mha_bwd_bhsd.py",
    "flash_attention/example_mha_bwd_bshd.py",
    "flash_attention/example_gqa_bwd.py",
    "flash_attention/example_mha_fwd_varlen.py",
    "flash_attention/example_gqa_fwd_varlen.py",
    "gemv/example_gemv.py",
    "online_softmax/online_softmax.py",
    "topk/example_topk.py",
    "gemm_splitk/example_tilelang_gemm_splitk.py",
    "cast/example_per_token_cast_to_fp8.py",
]


def barrier_check(name: str, strip_barriers: bool = False) -> list[Diagnostic]:
    """The barrier check alone on a fixture's kernel at ``M=2 N=64``, lowered for sm_90 in this process;
    ``strip_barriers`` takes every barrier out of the final IR first (what a kernel without them would be)."""
    from tilescope.core.interpret.hazards import barriers
    from tilescope.core.worker import lowering

    path = FIXTURES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module: Any = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lowered = lowering.lower(module.kernel(2, 64), "sm_90")
    names = [p.name for p in lowered.passes]
    modules = list(lowered.modules)
    if strip_barriers:
        index = max(i for i, n in enumerate(names) if n == barriers.THREAD_SYNC)
        modules[index] = _without_barriers(modules[index])
    return barriers.check(modules, names, str(path), "kernel")


def _without_barriers(module: Any) -> Any:
    import tvm
    from tilescope.core.interpret.hazards.barriers import is_barrier
    from tvm import tirx

    def drop(stmt: Any) -> Any:
        return tirx.Evaluate(0) if is_barrier(stmt) else stmt

    return tvm.IRModule(
        {
            gvar: func.with_body(tirx.stmt_functor.ir_transform(func.body, None, drop, ["tirx.Evaluate"]))
            if isinstance(func, tirx.PrimFunc)
            else func
            for gvar, func in module.functions.items()
        }
    )


@pytest.mark.parametrize("name", PLANTED)
def test_the_barrier_check_alone_finds_each_planted_race_at_its_line_naming_both(name: str) -> None:
    found = barrier_check(name)
    ((line, code),) = planted(FIXTURES / f"{name}.py")
    hits = [d for d in found if d.code == code and d.severity == "error" and d.span.line == line]
    assert hits, found
    assert hits[0].related and hits[0].related[0].span.line == line, hits[0]
    assert hits[0].witness and "block (0,)" in hits[0].witness and "thread" in hits[0].witness


@pytest.mark.parametrize("name", TWINS)
def test_the_barrier_check_finds_nothing_where_a_barrier_or_an_atomic_orders_the_threads(name: str) -> None:
    assert barrier_check(name) == []


def test_without_tilelangs_barrier_a_neighbour_read_in_the_next_statement_is_reported_at_both_lines() -> None:
    (d,) = barrier_check("ok_barrier_neighbour", strip_barriers=True)
    assert (d.severity, d.code, d.span.line, d.related[0].span.line) == ("error", "missing-barrier", 18, 17)
    assert "writes S" in d.related[0].message and d.witness and "block (0,)" in d.witness


def test_without_barriers_a_tree_step_races_with_its_own_write_back_and_the_next_step() -> None:
    found = barrier_check("ok_tree_threads_synced", strip_barriers=True)
    assert ("missing-barrier", 28, 25) in {(d.code, d.span.line, d.related[0].span.line) for d in found}, found


def test_a_tree_step_reads_pairs_another_thread_writes_and_the_witness_names_them() -> None:
    (d,) = barrier_check("barrier_tree_threads")
    assert d.code == "missing-barrier" and "Thread 2 writes" in d.message and "thread 1 reads" in d.message


def test_a_histogram_without_atomics_is_one_data_race_not_also_a_missing_barrier() -> None:
    found = barrier_check("race_histogram_threads")
    assert [(d.code, d.span.line) for d in found] == [("data-race", 26)]
    assert "Thread 0 and thread 8 both write" in found[0].message


def test_what_the_interpreter_said_is_not_said_twice() -> None:
    def race(line: int, other: int, code: str = "missing-barrier") -> Diagnostic:
        return Diagnostic("error", "x", Span(line), code, related=[Related(Span(other), "y")])

    out = merged([race(10, 10)], [race(10, 10), race(12, 10), race(10, 10, "data-race")])
    assert [(d.code, d.span.line) for d in out] == [
        ("missing-barrier", 10),
        ("missing-barrier", 12),
        ("data-race", 10),
    ]


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason="the TileLang examples corpus is not beside the repository")
@pytest.mark.parametrize("example", SAMPLE)
def test_tilelangs_own_examples_get_no_hazard_error(analyzer: Analyzer, example: str) -> None:
    result = analyzer.analyze(str(CORPUS / "examples" / example))
    errors = [d for d in result.all_diagnostics() if d.code in HAZARD_CODES and d.severity == "error"]
    assert not errors, errors
