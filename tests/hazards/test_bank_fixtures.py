"""Shared-access figures of kernels written with thread indices, against a truth made by hand.

``benchmarks/banks/truth.json`` gives, for every shared access of the fixtures in
``benchmarks/banks/fixtures`` (2-D and 3-D blocks, per-thread scalar accesses, 2-, 4- and 8-byte elements,
broadcasts, a reduction whose active lanes shrink), the ways, wavefronts and warp requests derived by hand
from the banks' rule; each entry says how. Every access must be found at its line with those figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tilescope.core.compiler.service import Analyzer

BANKS = Path(__file__).resolve().parents[2] / "benchmarks" / "banks"
TRUTH: dict[str, list[dict[str, Any]]] = json.loads((BANKS / "truth.json").read_text())["files"]


def test_every_fixture_has_a_truth() -> None:
    assert sorted(TRUTH) == sorted(p.name for p in (BANKS / "fixtures").glob("*.py"))


@pytest.mark.parametrize("name", sorted(TRUTH))
def test_each_shared_access_has_its_hand_made_degree(analyzer: Analyzer, name: str) -> None:
    (kernel,) = analyzer.analyze(str(BANKS / "fixtures" / name)).kernels
    found = [
        (a.buffer, a.line, a.op, a.ways, a.wavefronts, a.ideal_wavefronts, a.requests_per_block)
        for a in kernel.shared_accesses
    ]
    expected = [
        (t["buffer"], t["line"], t["op"], t["ways"], t["wavefronts"], t["ideal"], t["requests"]) for t in TRUTH[name]
    ]
    assert sorted(found, key=str) == sorted(expected, key=str)
    # a warning at every line with a 4-way conflict or worse, and nowhere else
    warned = {d.span.line for d in kernel.diagnostics if d.code == "bank-conflict"}
    assert warned == {t["line"] for t in TRUTH[name] if t["ways"] >= 4}
