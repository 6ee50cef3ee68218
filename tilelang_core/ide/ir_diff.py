"""The one IR diff: line diffs between two printed IRs, as the terminal viewer, the exports and VS Code draw them.

A diff row keeps both line numbers and the Python source line the core attached to the IR line,
so a viewer can show which line of the user's kernel an IR statement came from. The language
server sends these rows as they are; no client diffs IR itself.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

from tilescope.core.model import IRText

Kind = Literal["same", "add", "del", "hunk"]


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a unified diff (or of a full listing, where every row is ``same``)."""

    kind: Kind
    text: str
    old: int | None = None
    new: int | None = None
    source: int | None = None
    """The Python line behind this IR line, where the core knows it."""


@dataclass(frozen=True, slots=True)
class Pair:
    """One row of a side-by-side diff: the old line on the left, the new on the right."""

    left: Row | None
    right: Row | None


@dataclass(frozen=True)
class Diff:
    rows: list[Row]
    added: int
    removed: int

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed)


def _lines(ir: IRText) -> list[str]:
    return ir.text.splitlines()


def _source(ir: IRText, index: int) -> int | None:
    return ir.source_lines[index] if index < len(ir.source_lines) else None


def listing(ir: IRText) -> list[Row]:
    """The whole IR, one ``same`` row per line."""
    return [Row("same", text, i + 1, i + 1, _source(ir, i)) for i, text in enumerate(_lines(ir))]


def unified(before: IRText, after: IRText, context: int = 3) -> Diff:
    """A unified diff of ``before`` → ``after`` with ``context`` lines around each change."""
    old, new = _lines(before), _lines(after)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    rows: list[Row] = []
    added = removed = 0
    for group in matcher.get_grouped_opcodes(context):
        first, last = group[0], group[-1]
        header = f"@@ -{first[1] + 1},{last[2] - first[1]} +{first[3] + 1},{last[4] - first[3]} @@"
        rows.append(Row("hunk", header))
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [
                    Row("same", old[i], i + 1, j1 + (i - i1) + 1, _source(after, j1 + i - i1)) for i in range(i1, i2)
                ]
                continue
            if tag in ("replace", "delete"):
                rows += [Row("del", old[i], i + 1, None, _source(before, i)) for i in range(i1, i2)]
                removed += i2 - i1
            if tag in ("replace", "insert"):
                rows += [Row("add", new[j], None, j + 1, _source(after, j)) for j in range(j1, j2)]
                added += j2 - j1
    return Diff(rows, added, removed)


def side_by_side(diff: Diff) -> list[Pair]:
    """Pair each run of removed lines with the added lines that replace it."""
    pairs: list[Pair] = []
    dels: list[Row] = []
    adds: list[Row] = []

    def flush() -> None:
        for k in range(max(len(dels), len(adds))):
            pairs.append(Pair(dels[k] if k < len(dels) else None, adds[k] if k < len(adds) else None))
        dels.clear()
        adds.clear()

    for row in diff.rows:
        if row.kind == "del":
            if adds:
                flush()
            dels.append(row)
        elif row.kind == "add":
            adds.append(row)
        else:
            flush()
            pairs.append(Pair(row, row))
    flush()
    return pairs


def patch(before: IRText, after: IRText, old_name: str, new_name: str) -> str:
    """A ``patch``-compatible unified diff."""
    lines = difflib.unified_diff(_lines(before), _lines(after), fromfile=old_name, tofile=new_name, lineterm="", n=3)
    return "\n".join(lines)
