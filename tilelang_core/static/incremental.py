"""The static analysis of a document being edited: each text's analysis patched from the previous one.

``analyze_source`` reads every block of the file on each call (from the blocks' memos, but still a
walk of the whole file in Python); an editor typing in one kernel of a file of a thousand needs
only that kernel read again. ``IncrementalAnalysis`` keeps the last analysis, re-parses only the
lines around the edit (``splice``), and when every block the edit replaced or made is a kernel
that calls no kernel (``kernel_only``) or assignments that say what the replaced ones said
(``passive``: ``value_7 = 7 * 2`` retyped), defining the same kernel names and no ``argparse``
defaults, nothing another block reads has changed: the module values, the kernel names and the
world are the old ones, every other block's part is reused (moved by the lines the edit added),
and only the new blocks are read. Any other edit (an import, a module constant, a call site, a
renamed kernel, ``__main__``) analyses every block again, reusing what each block's memo holds.
Either way the result is the one ``analyze_source`` gives for the text
(``tests/static/test_incremental.py`` compares them over random edits).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilescope.core.errors import surrogate_error
from tilescope.core.record.recorder import RecordedValues, recorded_stamp
from tilescope.core.static import catalog
from tilescope.core.static.analyze import (
    FileAnalysis,
    Part,
    analysis_of,
    assemble,
    block_part,
    prepared,
    world_entries,
)
from tilescope.core.static.bindings import kernel_names
from tilescope.core.static.context import ModuleContext, argparse_defaults
from tilescope.core.static.discover import discover_block
from tilescope.core.static.records import StaticFile
from tilescope.core.static.recover import BlockCache, ParsedFile, PlacedBlock, parse_tolerant
from tilescope.core.static.splice import splice


@dataclass(frozen=True)
class _Last:
    source: str
    target: str
    table: str
    stamp: tuple[object, ...] | None
    analysis: FileAnalysis
    active: list[bool]
    """For each block, whether other blocks' readings depend on it (it is not ``kernel_only``)."""


class IncrementalAnalysis:
    """One document's analyses: a block cache sized by the document and the last analysis."""

    def __init__(self, path: str = "<unsaved>") -> None:
        self.path = path
        self.blocks = BlockCache()
        self._last: _Last | None = None
        self.patched = False
        """Whether the last ``analyze`` reused the previous analysis's parts (for tests and benchmarks)."""

    def __len__(self) -> int:
        return len(self.blocks)

    def analyze(self, source: str, *, target: str = "sm_90", table: catalog.Catalog | None = None) -> StaticFile:
        """What ``analyze_source(source, path, target=target, table=table)`` says."""
        table = table if table is not None else catalog.default()
        stamp = recorded_stamp(self.path)
        last = self._last
        patched: tuple[FileAnalysis, list[bool]] | None = None
        parsed: ParsedFile | None = None
        if last is not None and last.target == target and last.table == table.version and _readable(source, last):
            parsed = splice(last.analysis.parsed, last.source, source, self.blocks)
            if parsed is not None and not _plain(parsed):
                parsed = None  # a lone surrogate: ``prepared`` replaces it before parsing
            if parsed is not None and last.stamp == stamp:
                patched = self._patch(last, parsed, table)
        self.patched = patched is not None
        if patched is None:
            if parsed is None:
                text, surrogate = prepared(source)
                parsed = parse_tolerant(text, self.blocks)
            else:
                surrogate = None
            analysis = analysis_of(parsed, surrogate, self.path, target, table)
            context = analysis.context
            names = kernel_names(context)
            patched = (analysis, [bool(world_entries(p, context, names, parsed.lines)) for p in parsed.blocks])
        analysis, active = patched
        self._last = _Last(source, target, table.version, stamp, analysis, active)
        return analysis.static

    def _patch(self, last: _Last, parsed: ParsedFile, table: catalog.Catalog) -> tuple[FileAnalysis, list[bool]] | None:
        """The analysis of ``parsed`` from ``last``'s, when the blocks the edit replaced and made are
        kernel-only or say what they said (``passive``); with the new ``active``."""
        old = last.analysis
        before, after = old.parsed.blocks, parsed.blocks
        shift = len(parsed.lines) - len(old.parsed.lines)
        head, tail = parsed.kept
        limit = min(len(before), len(after))
        while head < limit and before[head].block is after[head].block and before[head].offset == after[head].offset:
            head += 1
        while (
            tail < limit - head
            and before[-1 - tail].block is after[-1 - tail].block
            and after[-1 - tail].offset - before[-1 - tail].offset == shift
        ):
            tail += 1
        removed, added = before[head : len(before) - tail], after[head : len(after) - tail]
        context = old.context
        names = kernel_names(context)
        if shift and any(last.active[len(before) - tail :]):
            return None  # a block the world holds moved
        gone = [world_entries(p, context, names, context.lines) for p in removed]
        made = [world_entries(p, context, names, parsed.lines) for p in added]
        if any(isinstance(e[0], int) for entries in [*gone, *made] for e in entries):
            return None  # a block other readings depend on changed
        if [e for entries in gone for e in entries] != [e for entries in made for e in entries]:
            return None  # the assignments say something else
        if any(argparse_defaults(p.block, context.aliases) for p in [*removed, *added]):
            return None
        if _defined(removed, context) != _defined(added, context):
            return None
        fresh = ModuleContext(
            context.aliases,
            context.env,
            parsed.lines,
            context.target,
            after,
            context.tilelang,
            dialects=context.dialects,
            scopes=context.scopes,
        )
        if "env_key" in context.__dict__:
            fresh.__dict__["env_key"] = context.env_key
        fresh.memo["kernel-names"] = names
        recorded = RecordedValues(self.path)
        repaired = parsed.repaired_lines

        def read(placed: PlacedBlock) -> Part:
            return block_part(placed, fresh, old.world, table, recorded, repaired)

        parts = old.parts[:head] + [read(p) for p in added]
        kept = old.parts[len(before) - tail :]
        if kept:
            parts.append(read(after[len(after) - tail]))  # the lines above it (a directive) may be the edit's
        if not shift:
            parts.extend(kept[1:])
        for offset, part in enumerate(kept[1:] if shift else (), start=len(after) - tail + 1):
            calls = any(b.origin == "call" and b.line is not None for k in part.kernels for b in k.bindings)
            parts.append(read(after[offset]) if calls else part.moved(shift))  # a call's line stays where it is
        static = assemble(self.path, context.target, parsed, None, fresh, parts, old.module_spent)
        active = last.active[:head] + [bool(entries) for entries in made] + last.active[len(before) - tail :]
        return FileAnalysis(static, parsed, fresh, old.world, parts, old.module_spent, None), active


def _readable(source: str, last: _Last) -> bool:
    """Neither text needs ``prepared``'s first change (dropping a byte-order mark), and the last had
    no lone surrogate (``prepared`` replaces them)."""
    return not source.startswith("\ufeff") and not last.source.startswith("\ufeff") and last.analysis.surrogate is None


def _plain(parsed: ParsedFile) -> bool:
    """No lone surrogate in the lines the edit made (the rest are the last text's, which had none)."""
    first, end = parsed.edited
    return surrogate_error("".join(parsed.lines[first:end])) is None


def _defined(blocks: list[PlacedBlock], context: ModuleContext) -> frozenset[str]:
    return frozenset(
        ref.name for p in blocks for ref, _, _ in discover_block(p.block, context.aliases, context.tilelang)
    )
