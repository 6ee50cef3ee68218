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

from tests.static.test_budget import KERNEL

A = "a" * 2000
ATTACKS = {
    "replace-doubling": f's = "{A}"\ns = s.replace("a", "{A}")\ns = s.replace("a", "{A[:200]}")\n',
    "replace-three-levels": f's = "{A[:1000]}"\n' + f's = s.replace("a", "{A[:1000]}")\n' * 3,
    "split-explosion": f's = "{"a " * 20}"\ns = s.replace("a", "{"a " * 800}")\n'
    f's = s.replace("a", "{"a " * 1000}")\nparts = s.split()\nn = len(parts)\n',
    "nested-repeats": "t = (1, 1)\nfor i in range(16):\n    t = (t, t, t, t, t, t, t, t)\nu = t + 1\n",
    "extend-doubling": "t = [1, 2]\nfor i in range(16):\n" + "    t.extend(t)\n" * 8,
    "characters-of-a-long-text": f's = "{A}"\ns = s.replace("a", "{A}")\npairs = list(zip(s, s))\n',
    "vararg-nesting": "def f(n, *rest):\n    return rest if n == 0 else f(n - 1, rest, rest, rest, rest)\n\n\n"
    "x = f(40)\ny = x + 1\n",
    "deep-recursion-doubling": 'def f(n, s):\n    return s if n == 0 else f(n - 1, s.replace("a", "aaaa"))\n\n\n'
    'x = f(60, "a")\n',
}
"""Each took over 200 MB or 2 s before sizes were bounded (or failed with ``MemoryError``)."""
OVERSIZED = {
    **{name: text for name, text in ATTACKS.items() if name != "extend-doubling"},
    "join-of-repeats": f's = "{A}"\nt = [s for i in range(4000)]\nu = s.join(t)\n',
    "comprehension-of-copies": f's = "{A}"\nt = [s for i in range(100)]\n',
}
"""Values past ``MAX_SIZE``, some of which were built (a join of 8 MB, a list of 200,000 characters).
A list past ``MAX_ITEMS`` items (``extend-doubling``) is unknown without a note, as ``append`` made it."""
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
