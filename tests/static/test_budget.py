"""Static evaluation is bounded by the work it does, not by what it finds: an expensive but valid
program (a comprehension whose filter lets nothing through, recursion, big ranges, nested joins)
is answered quickly, with a ``not-evaluated`` note where the budget ran out, and the kernels'
own values (defaults, other calls) still read."""

from __future__ import annotations

import time

import pytest
from tilescope.core.static import analyze_source, budget

KERNEL = """import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)

    return main

"""
FREEZE = "[m for m in range(4096) for n in range(4096) for k in range(4096) if m*n*k < 0]"
PLACES = {
    "module": f"xs = {FREEZE}\nmatmul(1024, 1024, 1024)\n",
    "main": f"def main():\n    xs = {FREEZE}\n    matmul(1024, 1024, 1024)\n\n\nmain()\n",
    "__main__": f'if __name__ == "__main__":\n    xs = {FREEZE}\n    matmul(1024, 1024, 1024)\n',
}
EXPENSIVE = {
    "recursion": "def f(n, k):\n    return 1 if n == 0 else f(n - 1, k) + f(n - 1, k + 1)\n\n\nx = f(40, 0)\n",
    "join": 'x = "".join("".join("".join(c for c in "a" * 200) for d in "b" * 200) for e in "c" * 200)\n',
    "ranges": "x = sum(sum(range(j)) for j in range(4096) for i in range(4096))\n",
    "strings": 'x = ("ab" * 10**9) * 10**9\ny = len("x" * 4096 * 4096)\n',
    "product": "import itertools\n"
    "x = sorted([a * b for a, b in itertools.product(range(64), range(64)) for c in range(4000)])\n",
    "loops": "t = 0\nfor i in range(60):\n    for j in range(60):\n"
    "        for k in range(60):\n            t += i * j * k\n",
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_comprehension_whose_filter_passes_nothing_is_not_a_freeze(place: str) -> None:
    source = KERNEL + PLACES[place]
    start = time.perf_counter()
    found = analyze_source(source)
    assert time.perf_counter() - start < 1.0
    notes = [d for d in found.diagnostics if d.code == "not-evaluated"]
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "xs =" in text)
    assert [d.span.line for d in notes] == [line]
    (kernel,) = found.kernels
    values = {b.name: b.value for b in kernel.bindings}
    assert values["block_M"] == 128 and values["M"] == 1024  # the kernel's own values are still read


@pytest.mark.parametrize("name", sorted(EXPENSIVE))
def test_expensive_python_is_answered_within_a_second(name: str) -> None:
    start = time.perf_counter()
    found = analyze_source(KERNEL + EXPENSIVE[name] + "matmul(1024, 1024, 1024)\n")
    assert time.perf_counter() - start < 1.0
    assert [k.ref.name for k in found.kernels] == ["matmul"]


def test_the_budget_counts_items_a_filter_rejects() -> None:
    """The same comprehension costs the same whether its filter keeps every item or none."""
    spent = {}
    for test in ("m < 0", "m >= 0"):
        with budget.budgeted(10**9, 60) as used:
            analyze_source(KERNEL + f"xs = [m for m in range(300) for n in range(20) if {test}]\n")
        spent[test] = used.spent
    assert spent["m < 0"] >= 6000
    assert spent["m < 0"] <= budget.RUN_STEPS


def test_the_wall_clock_guard_stops_what_the_steps_misjudge() -> None:
    with budget.budgeted(10**9, 0.05) as used:
        start = time.perf_counter()
        analyze_source(KERNEL + PLACES["module"] + "# read afresh\n")
    assert used.exceeded and time.perf_counter() - start < 2.0  # unbounded, this comprehension takes minutes
