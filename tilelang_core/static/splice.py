"""The parsed file of an edited text, made from the previous text's parsed file.

Only the lines that differ are split again, lexed from there until the lexer's state meets the old
one, and cut into groups from the group before them until a cut falls where an old one did; the
groups around the edit are parsed (from the block cache when their text was seen) and every other
group is the old one, moved by the lines the edit added. An edit inside one kernel of a file of a
thousand costs the lines and blocks around it, not the file.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import accumulate

from tilescope.core.static.recover import BlockCache, Grouper, ParsedFile, PlacedBlock, place_group
from tilescope.core.static.shift import shifted
from tilescope.core.static.split import lex_edit, source_lines


def splice(old: ParsedFile, old_source: str, source: str, cache: BlockCache) -> ParsedFile | None:
    """``source`` parsed as ``parse_tolerant`` would, reusing ``old`` (the parse of ``old_source``);
    ``None`` when there is nothing to reuse (an empty text, or no lexer state kept)."""
    if old.lexed is None or not old.lines or not old.blocks or not source:
        return None
    edit = _edit(old_source, old.lines, source)
    if edit is None:
        return None
    first, old_end, middle = edit
    lines = old.lines[:first] + middle + old.lines[old_end:]
    new_end = first + len(middle)
    lexed = lex_edit(old.lexed, lines, first, old_end, new_end)
    blocks, group_starts = old.blocks, old.starts
    shift = new_end - old_end
    redo = _group_before(blocks, group_starts, max(first, 1))
    starts, old_states, states = lexed.starts, old.lexed.states, lexed.states
    count = len(lines)
    grouper = Grouper(lines)
    made: list[list[tuple[int, int]]] = []
    same = len(blocks)
    start = blocks[redo].offset + 1
    while start <= count:
        if start - 1 >= new_end and not grouper.run and states[start - 1] == old_states[start - 1 - shift]:
            found = _group_at(blocks, group_starts, start - shift)
            if found is not None:
                same = found
                break
        end = start
        while end < count and not starts[end]:
            end += 1
        made.extend(grouper.add(start, end))
        start = end + 1
    else:
        made.extend(grouper.flush())
    cache.fit(len(blocks))
    fresh = [place_group(lines, group, cache) for group in made]
    made_blocks = [placed for group in fresh for placed in group.blocks]
    tail = blocks[same:]
    if shift:
        tail = [PlacedBlock(p.offset + shift, p.block) for p in tail]
    head_end = blocks[redo].offset  # the last line of the blocks kept in front
    tail_start = blocks[same].offset + 1 if same < len(blocks) else count + abs(shift) + 1
    errors = [e for e in old.errors if e.span.line <= head_end]
    errors.extend(shifted(p.block.error, p.delta) for p in made_blocks if p.block.error is not None)
    errors.extend(shifted(e, shift) for e in old.errors if e.span.line >= tail_start)
    repaired = {line for line in old.repaired_lines if line <= head_end or line >= tail_start}
    repaired = {line + shift if line >= tail_start else line for line in repaired}
    repaired.update(line + p.delta for p in made_blocks for line in p.block.repaired_lines)
    return ParsedFile(
        blocks[:redo] + made_blocks + tail,
        errors,
        frozenset(repaired),
        lines,
        lexed,
        group_starts[:redo] + [i == 0 for group in fresh for i in range(len(group.blocks))] + group_starts[same:],
        (redo, len(blocks) - same),
        (first, new_end),
    )


def _offset(placed: PlacedBlock) -> int:
    return placed.offset


def _group_before(blocks: list[PlacedBlock], starts: list[bool], line: int) -> int:
    """The first block of the group before the one holding ``line``: the split starts there, since
    whether a group starts at a block depends on the block's end, which the next line decides."""
    index = max(0, bisect_right(blocks, line - 1, key=_offset) - 1)
    while index > 0 and not starts[index]:
        index -= 1
    if index > 0:
        index -= 1
    while index > 0 and not starts[index]:
        index -= 1
    return index


def _group_at(blocks: list[PlacedBlock], starts: list[bool], line: int) -> int | None:
    """The index of the block starting a group at ``line``, if one does."""
    index = bisect_left(blocks, line - 1, key=_offset)
    if index < len(blocks) and blocks[index].offset == line - 1 and starts[index]:
        return index
    return None


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
