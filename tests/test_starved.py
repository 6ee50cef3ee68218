"""The load the timeout tests rely on: under ``starved(share)`` the test's processes get about ``share`` of one
CPU, so a CPU-time limit would stretch, or (without a CPU cgroup) both cores are busy instead."""

from __future__ import annotations

import subprocess
import sys
import time

from tests.conftest import starved

SPIN = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
"""A child that burns 0.6 s of CPU time."""


def test_a_starved_child_takes_at_least_twice_its_cpu_time_in_wall_time() -> None:
    with starved(1 / 3):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", SPIN], check=True)
        took = time.monotonic() - started
    assert took >= 1.2, took  # a third of one CPU: about 1.8 s; unthrottled on an idle core: about 0.65 s
