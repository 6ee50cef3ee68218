"""A worker made without warm-up steps (``warm_up=False``, the puzzle grader's one-check analyzer) stays idle
once ready, where a warm one goes on lowering kernels of its own, and answers all the same."""

from __future__ import annotations

import os
import time

from tilescope.core.compiler.service import Analyzer

TICKS = os.sysconf("SC_CLK_TCK")
GEMM = "examples/gemm.py"


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _idle_cpu_s(analyzer: Analyzer) -> float:
    """The zygote's CPU over the second after it said it was ready."""
    analyzer.start()
    worker = analyzer._worker
    assert worker is not None
    worker.wait_ready()
    before = _cpu_s(worker.process.pid)
    time.sleep(1.0)
    return _cpu_s(worker.process.pid) - before


def test_a_cold_worker_takes_no_warm_up_steps_and_answers_the_same() -> None:
    with Analyzer(timeout_s=120, warm_up=False) as cold, Analyzer(timeout_s=120) as warm:
        assert _idle_cpu_s(cold) < 0.1
        assert _idle_cpu_s(warm) > 0.2  # its steps: the interpreter's imports, a GEMM lowered
        assert cold.analyze(GEMM).kernels[0].buffers == warm.analyze(GEMM).kernels[0].buffers
