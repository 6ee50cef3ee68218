"""The hazard check's pure parts: which blocks run, and reading TileLang's race-check report."""

from __future__ import annotations

import pytest
from tilescope.core.interpret.context import Stop
from tilescope.core.interpret.hazards.diagnose import Suspicion
from tilescope.core.interpret.hazards.plan import Plan, chosen
from tilescope.core.interpret.hazards.tilelang_check import parse

REPORT = """[22:12:25] : Warning: Data race detected: 1 potential race(s)
  [1] `hist(A[bx * 64 + i] % 8,)` is written by multiple threads in loop (i,)
  --> /k/race.py:20:1
  Example:
  i = 1
  [2] `S(i,)` is written by multiple threads in loop (j,)
  --> /elsewhere/other.py:7:1
If you believe this is a false positive, disable the check by setting ...
"""


def test_the_plan_runs_the_first_blocks_and_the_tail() -> None:
    assert chosen(0, 1) == [0]
    assert chosen(0, 3) == [0, 1, 2]
    assert chosen(0, 100) == [0, 1, 98, 99]
    assert chosen(1, 100) == [0, 99]


def test_the_plan_records_whole_blocks_and_stops_on_its_budget() -> None:
    plan = Plan(budget_s=0.0)
    with pytest.raises(Stop, match="stopped after 0 s"):
        plan.start_block([0], 0)
    plan = Plan(budget_s=60.0)
    plan.start_block([0], 0)
    plan.start_block([0, 0], 1)
    plan.start_block([0, 7], 1)
    assert plan.blocks_run() == [[0, 0], [0, 7]]


def test_tilelangs_report_is_read_for_this_file_only() -> None:
    assert parse(REPORT, "/k/race.py") == [Suspicion(20, "hist(A[bx * 64 + i] % 8,)", "(i,)")]
