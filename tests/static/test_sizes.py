"""A small file cannot make the static tier build a huge value: each attack below, a few KB of
text, once took gigabytes and seconds per keystroke (``replace`` twice: 3.25 GB; a ``split``:
16 M items). Each is analysed in a fresh process, whose peak memory growth and time are measured,
and past ``MAX_SIZE`` the value is unknown with a ``not-evaluated`` note, while the kernel's own
values still read."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from tilescope.core.static import analyze_source, budget
from tilescope.core.static.symbolic import size

from tests.static.oversized import ATTACKS, OVERSIZED
from tests.static.test_budget import KERNEL

MEASURE = textwrap.dedent(
    """
    import json, resource, sys, time
    resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31))  # the old code's gigabytes fail here, not the host
    from tilescope.core.static import analyze_source
    kernel, attack = json.loads(sys.stdin.read())
    analyze_source(kernel + "matmul(1024, 1024, 1024)\\n")  # imports and catalog loaded before measuring
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    found = analyze_source(kernel + attack + "matmul(1024, 1024, 1024)\\n")
    took = time.perf_counter() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    notes = [d.message for d in found.diagnostics if d.code == "not-evaluated"]
    kernels = [k.ref.name for k in found.kernels]
    print(json.dumps({"seconds": took, "grown_mb": grown, "kernels": kernels, "notes": notes}))
    """
)


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_a_hostile_file_is_analysed_in_bounded_memory_and_time(name: str) -> None:
    assert len(ATTACKS[name]) < 4500, "the attacks are small files"
    done = subprocess.run(
        [sys.executable, "-c", MEASURE],
        input=json.dumps([KERNEL, ATTACKS[name]]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    measured = json.loads(done.stdout)
    assert measured["grown_mb"] < 200, measured
    assert measured["seconds"] < 2.0, measured
    assert measured["kernels"] == ["matmul"]


@pytest.mark.parametrize("name", sorted(OVERSIZED))
def test_past_the_size_limit_the_value_is_not_evaluated_and_the_note_says_why(name: str) -> None:
    source = KERNEL + OVERSIZED[name] + "matmul(1024, 1024, 1024)\n"
    found = analyze_source(source)
    (note,) = [d for d in found.diagnostics if d.code == "not-evaluated"]
    assert f"a value of more than {budget.MAX_SIZE:,} characters and items" in note.message
    assert note.span.line > KERNEL.count("\n")  # at the attack's line, not the kernel's
    (kernel,) = found.kernels
    values = {b.name: b.value for b in kernel.bindings}
    assert values["block_M"] == 128  # the kernel's own defaults still read


def test_a_value_that_nests_itself_is_measured_by_its_distinct_parts() -> None:
    nested: tuple[object, ...] = (1, 1)
    for _ in range(60):
        nested = (nested, nested)
    assert size(nested) == budget.MAX_SIZE + 1
    assert size(("ab", ("c",), 7)) == 3 + 2 + (1 + 1) + 1  # three items, "ab", ("c",), 7
