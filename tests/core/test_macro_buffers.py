"""Buffers a macro allocates each time it is called are listed once per allocation, as plain
TileLang allocates them (before, allocations sharing a name were listed once)."""

from __future__ import annotations

from pathlib import Path

from tilescope.core.compiler.service import Analyzer

from benchmarks.plain_lowering import lower

FIXTURE = Path(__file__).parent / "fixtures" / "macro_buffers.py"


def test_each_allocation_of_a_macro_is_a_buffer_as_in_plain_tilelang(analyzer: Analyzer) -> None:
    model = analyzer.analyze(str(FIXTURE)).kernel("totals")
    ours = sorted((b.name, tuple(b.shape), b.scope) for b in model.buffers)
    plain = lower({"file": FIXTURE.name, "kernel": "totals", "args": {}}, str(FIXTURE.parent))
    theirs = sorted((b[0], tuple(b[1]), b[3]) for b in plain["buffers"])
    assert [b[0] for b in ours].count("acc_frag") == 3, ours
    assert ours == theirs
