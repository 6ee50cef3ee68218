"""Reading compute-sanitizer's log: the error count and the first error's lines (what, where, which
thread), in the tool's own format; and which small case it runs."""

from __future__ import annotations

from tilescope.puzzles import catalog
from tilescope.puzzles.cases import plan
from tilescope.puzzles.sanitizer import parse, small_case

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at main_kernel+0x1d0 in /tmp/tilelang/kernel.cu:21
=========     by thread (37,0,0) in block (0,0,0)
=========     Address 0x7f0000000094 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f0000000000 of size 148 bytes
=========
========= ERROR SUMMARY: 127 errors
"""

RACECHECK = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at main_kernel+0x5a0 in /tmp/tilelang/kernel.cu:30
=========     and Read access at main_kernel+0x640 in /tmp/tilelang/kernel.cu:33 [128 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""

CLEAN = "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n"


def test_memcheck_first_error_names_kernel_line_and_thread() -> None:
    finding = parse("memcheck", MEMCHECK)
    assert finding.errors == 127
    assert finding.first[0] == "Invalid __global__ write of size 4 bytes"
    assert "kernel.cu:21" in finding.first[1] and "thread (37,0,0)" in finding.first[2]


def test_racecheck_hazard_is_counted_with_both_accesses() -> None:
    finding = parse("racecheck", RACECHECK)
    assert finding.errors == 1
    assert finding.first[0].startswith("Error: Race reported between Write access")
    assert "Read access" in finding.first[1]


def test_a_clean_run_has_no_findings() -> None:
    finding = parse("memcheck", CLEAN)
    assert finding.errors == 0 and finding.first == []


def test_the_small_case_is_ragged_and_from_the_fixed_list() -> None:
    case = small_case(plan(catalog.get(1), 3, timed=True))
    assert (case.name, case.kind, case.args) == ("odd", "fixed", {"N": 37})
