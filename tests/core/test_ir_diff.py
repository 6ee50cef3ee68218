"""Diff rows, side-by-side pairing and patches between two IR texts."""

from __future__ import annotations

import subprocess

from tilescope.core.ide.ir_diff import listing, patch, side_by_side, unified
from tilescope.core.model import IRText

BEFORE = IRText("a\nb\nc\nd\ne\n", [1, 2, None, 4, 5])
AFTER = IRText("a\nb\nC1\nC2\nd\ne\nf\n", [1, 2, 3, 3, 4, 5, 6])


def test_unified_counts_and_numbers_lines_on_both_sides():
    diff = unified(BEFORE, AFTER, context=1)
    assert (diff.added, diff.removed) == (3, 1)
    kinds = [(r.kind, r.text, r.old, r.new) for r in diff.rows]
    assert kinds[0][0] == "hunk"
    assert ("del", "c", 3, None) in kinds
    assert ("add", "C1", None, 3) in kinds and ("add", "f", None, 7) in kinds
    assert ("same", "d", 4, 5) in kinds


def test_rows_carry_the_python_line_of_their_side():
    rows = {r.text: r.source for r in unified(BEFORE, AFTER).rows}
    assert rows["C1"] == 3 and rows["f"] == 6 and rows["c"] is None and rows["a"] == 1


def test_identical_irs_have_an_empty_diff():
    diff = unified(BEFORE, BEFORE)
    assert not diff.changed and diff.rows == []


def test_side_by_side_pairs_a_removal_with_its_replacement():
    pairs = side_by_side(unified(BEFORE, AFTER))
    replaced = [p for p in pairs if p.left and p.left.kind == "del"]
    assert [(p.left.text, p.right.text) for p in replaced] == [("c", "C1")]
    assert any(p.left is None and p.right.text == "C2" for p in pairs)


def test_listing_numbers_every_line():
    rows = listing(AFTER)
    assert [r.new for r in rows] == list(range(1, 8)) and rows[2].source == 3


def test_patch_applies_with_the_patch_tool(tmp_path):
    (tmp_path / "ir.tir").write_text(BEFORE.text)
    diff = patch(BEFORE, AFTER, "ir.tir", "ir.tir") + "\n"
    done = subprocess.run(["patch", "-p0", "-s"], input=diff.encode(), cwd=tmp_path, check=False)
    assert done.returncode == 0
    assert (tmp_path / "ir.tir").read_text() == AFTER.text
