"""The parsed file of an edited text, made from the previous text's parsed file.

Only the lines that differ are split again, lexed from there until the lexer's state meets the old
one, and cut into groups from the group before them until a cut falls where an old one did; the
groups around the edit are parsed (from the block cache when their text was seen) and every other
group is the old one, moved by the lines the edit added. An edit inside one kernel of a file of a
thousand costs the lines and blocks around it, not the file.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

from tilescope.core.static.recover import BlockCache, Group, Grouper, ParsedFile, parsed_file, place_group
from tilescope.core.static.split import lex_edit, source_lines


def splice(old: ParsedFile, old_source: str, source: str, cache: BlockCache) -> ParsedFile | None:
    """``source`` parsed as ``parse_tolerant`` would, reusing ``old`` (the parse of ``old_source``);
    ``None`` when there is nothing to reuse (an empty text, or no lexer state kept)."""
    if old.lexed is None or not old.lines or not source:
        return None
    edit = _edit(old_source, old.lines, source)
    if edit is None:
        return None
    first, old_end, middle = edit
    lines = old.lines[:first] + middle + old.lines[old_end:]
    new_end = first + len(middle)
    lexed = lex_edit(old.lexed, lines, first, old_end, new_end)
    groups = old.groups
    firsts = [g.first for g in groups]
    redo = max(0, bisect_right(firsts, max(first, 1)) - 2)  # from the group before the one holding the line above
    shift = new_end - old_end
    index = {line: i for i, line in enumerate(firsts[redo:], start=redo)}
    starts, old_states, states = lexed.starts, old.lexed.states, lexed.states
    count = len(lines)
    grouper = Grouper(lines)
    made: list[list[tuple[int, int]]] = []
    tail: list[Group] = []
    start = firsts[redo]
    while start <= count:
        same = index.get(start - shift) if start - 1 >= new_end and not grouper.run else None
        if same is not None and states[start - 1] == old_states[start - 1 - shift]:
            tail = [g.moved(shift) for g in groups[same:]]
            break
        end = start
        while end < count and not starts[end]:
            end += 1
        made.extend(grouper.add(start, end))
        start = end + 1
    else:
        made.extend(grouper.flush())
    cache.fit(len(old.blocks))
    fresh = [place_group(lines, group, cache) for group in made]
    kept = (sum(len(g.blocks) for g in groups[:redo]), sum(len(g.blocks) for g in tail))
    return parsed_file(lines, lexed, groups[:redo] + fresh + tail, kept, (first, new_end))


def _edit(old_source: str, old_lines: list[str], source: str) -> tuple[int, int, list[str]] | None:
    """Which old lines the new text replaces and by what: ``old_lines[first:end]`` by the lines
    returned. The window starts a line before the first changed character and ends a line after
    the last, so a line break the edit joins or splits (``\\r`` then ``\\n``) stays inside it."""
    prefix = _common_prefix(old_source, source)
    suffix = _common_suffix(old_source, source, prefix)
    offsets = [0, *accumulate(map(len, old_lines))]
    if offsets[-1] != len(old_source):
        return None  # lines of another text
    first = max(0, bisect_right(offsets, prefix) - 2)
    end = min(len(old_lines), bisect_right(offsets, len(old_source) - suffix) + 1)
    begin, stop = offsets[first], len(source) - (len(old_source) - offsets[end])
    if stop < begin:
        return None
    return first, end, source_lines(source[begin:stop])


def _common_prefix(old: str, new: str) -> int:
    """Characters both texts start with: bisection over the part still unknown, compared in C."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old.startswith(new[low:middle], low):
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(old: str, new: str, prefix: int) -> int:
    """Characters both texts end with, not overlapping the common prefix."""
    low, high = 0, min(len(old), len(new)) - prefix
    while low < high:
        middle = (low + high + 1) // 2
        if old.endswith(new[len(new) - middle : len(new) - low], 0, len(old) - low):
            low = middle
        else:
            high = middle - 1
    return low
