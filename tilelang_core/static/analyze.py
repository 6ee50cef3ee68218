"""``analyze_source``: everything the source alone says about its kernels.

Each block's facts are computed in the block's own lines and kept with the (immutable) parsed
block; here they are placed at the block's lines in the file, so an edit above a kernel costs a
copy of its records, not a new reading. A block that only defines a kernel (and calls none) is
read once per "world" (every other block, the module values, the kernel names, the target): an
edit inside one kernel of a file of a thousand leaves the other kernels' readings as they were.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from itertools import chain
from operator import attrgetter
from typing import Any

from tilescope.core.codes import diagnostic
from tilescope.core.errors import surrogate_error
from tilescope.core.lines import without_surrogates
from tilescope.core.model import Diagnostic, KernelRef, Span
from tilescope.core.record.recorder import RecordedValues
from tilescope.core.static import catalog
from tilescope.core.static.bindings import bindings, block_calls, kernel_names
from tilescope.core.static.budget import MAX_SIZE, Budget, collected, report
from tilescope.core.static.context import ModuleContext, bind_assignment, module_context
from tilescope.core.static.discover import discover_block, returned_prim_func
from tilescope.core.static.primitive_checks import check_primitives
from tilescope.core.static.reader import KernelReader
from tilescope.core.static.records import Binding, PrimitiveUse, QuickFix, StaticFile, StaticKernel, TextEdit
from tilescope.core.static.recover import BlockCache, ParsedBlock, ParsedFile, PlacedBlock, parse_tolerant
from tilescope.core.static.shift import Placed, shifted
from tilescope.core.static.symbolic import Sym
from tilescope.core.static.syntax import span_of

SOURCE = "tilescope-static"
"""The ``source`` of every static diagnostic; the compiler tier's say ``tilescope``."""


def analyze_source(
    source: str,
    path: str = "<unsaved>",
    *,
    target: str = "sm_90",
    table: catalog.Catalog | None = None,
    blocks: BlockCache | None = None,
) -> StaticFile:
    """Kernels, primitive uses, diagnostics and quick fixes of ``source`` (file lines), evaluated within
    budgets of work (``budget``): what exceeds one is unknown, and a ``not-evaluated`` note says so.
    ``blocks`` is the parsed-block cache to use (an editor's, per document; a shared one by default)."""
    table = table if table is not None else catalog.default()
    text, surrogate = prepared(source)
    return analysis_of(parse_tolerant(text, blocks), surrogate, path, target, table).static


def prepared(source: str) -> tuple[str, Diagnostic | None]:
    """The text as Python reads it, and the syntax error of a lone surrogate in it."""
    if source.startswith("\ufeff"):
        source = source[1:]  # a byte-order mark, which Python's decoder drops
    surrogate = surrogate_error(source)
    if surrogate is not None:  # one syntax error says it; the rest is read with a letter Python accepts in names
        source = without_surrogates(source, "\u4e2d")
    return source, surrogate


@dataclass(frozen=True)
class Part:
    """What one placed block contributes to its file's analysis, in file lines."""

    kernels: list[StaticKernel]
    diagnostics: list[Diagnostic]
    fixes: list[QuickFix]
    uses: list[PrimitiveUse]
    """In the block's own lines; ``delta`` moves them to the file's."""
    delta: int
    spent: list[Budget]
    """Budgets that ran out while reading it (``collected``)."""

    def moved(self, delta: int) -> Part:
        """The same contribution ``delta`` lines further down."""
        if not delta:
            return self
        return Part(
            shifted(self.kernels, delta),
            shifted(self.diagnostics, delta),
            shifted(self.fixes, delta),
            self.uses,
            self.delta + delta,
            self.spent,
        )


@dataclass(frozen=True)
class FileAnalysis:
    """One analysis of a file, with what the analysis of an edited text can reuse."""

    static: StaticFile
    parsed: ParsedFile
    context: ModuleContext
    world: int
    parts: list[Part]
    """One per block of ``parsed``, in order."""
    module_spent: list[Budget]
    surrogate: Diagnostic | None


def analysis_of(
    parsed: ParsedFile,
    surrogate: Diagnostic | None,
    path: str,
    target: str,
    table: catalog.Catalog,
    recorded: RecordedValues | None = None,
) -> FileAnalysis:
    """The analysis of a parsed file, every block's part read (from the blocks' memos when their
    inputs are unchanged)."""
    with collected() as module_spent:
        context = module_context(parsed.blocks, parsed.lines, target, table)
        world = _world(parsed.blocks, context)
    recorded = recorded if recorded is not None else RecordedValues(path)
    parts = [block_part(p, context, world, table, recorded, parsed.repaired_lines) for p in parsed.blocks]
    static = assemble(path, target, parsed, surrogate, context, parts, module_spent)
    return FileAnalysis(static, parsed, context, world, parts, module_spent, surrogate)


def block_part(
    placed: PlacedBlock,
    context: ModuleContext,
    world: int,
    table: catalog.Catalog,
    recorded: RecordedValues,
    repaired: frozenset[int],
) -> Part:
    """One block's kernels, primitive uses and notes, in file lines."""
    with collected() as spent:
        reads = _kernels_of(placed, context, world, recorded)
        kernels = [
            d
            for _, outer, body in discover_block(placed.block, context.aliases, context.tilelang)
            for d in (outer, body)
        ]
        uses, found = check_primitives(placed.block, context.aliases, table, context.dialects, kernels)
    notes = placed.place("notes", found)
    diagnostics = [replace(d, source=SOURCE) for _, found, _ in reads for d in found]
    diagnostics.extend(replace(d, source=SOURCE) for d in notes if d.span.line not in repaired)  # type: ignore[attr-defined]  # place() gives back the Diagnostics it was given
    fixes = [replace(f, diagnostic=replace(f.diagnostic, source=SOURCE)) for _, _, fixed in reads for f in fixed]
    return Part([kernel for kernel, _, _ in reads], diagnostics, fixes, uses, placed.delta, spent)


def assemble(
    path: str,
    target: str,
    parsed: ParsedFile,
    surrogate: Diagnostic | None,
    context: ModuleContext,
    parts: list[Part],
    module_spent: list[Budget],
) -> StaticFile:
    """The file's analysis from its blocks' parts."""
    diagnostics = [replace(d, source=SOURCE) for d in [*parsed.errors, *([surrogate] if surrogate else [])]]
    diagnostics.extend(chain.from_iterable(map(attrgetter("diagnostics"), parts)))
    if surrogate is not None:  # Python cannot read the file at all: no warning the compiler would confirm
        diagnostics = [d for d in diagnostics if d.severity != "warning"]
    spent = [*module_spent, *chain.from_iterable(map(attrgetter("spent"), parts))]
    if spent:
        diagnostics.append(replace(_not_evaluated(spent), source=SOURCE))
    diagnostics.sort(key=_position)
    kernels = list(chain.from_iterable(map(attrgetter("kernels"), parts)))
    fixes = list(chain.from_iterable(map(attrgetter("fixes"), parts)))
    uses = Placed(zip(map(attrgetter("uses"), parts), map(attrgetter("delta"), parts), strict=True))
    return StaticFile(
        path, target, kernels, diagnostics, uses, fixes=fixes, aliases=sorted(context.aliases), dialect=context.dialect
    )


def _position(diagnostic: Diagnostic) -> tuple[int, int]:
    return (diagnostic.span.line, diagnostic.span.column)


def _not_evaluated(spent: list[Budget]) -> Diagnostic:
    """One note for the analysis, at the first line the run-along ran out at (else the file's first)."""
    line = min((b.line for b in spent if b.line is not None), default=1)
    first = spent[0]
    if first.by_size:
        limit = f"a value of more than {MAX_SIZE:,} characters and items"
    else:
        limit = f"{first.seconds:g} s" if first.by_time else f"{first.steps:,} steps"
    return diagnostic("not-evaluated", Span(line, 0, line, None), limit=limit)


Read = tuple[StaticKernel, list[Diagnostic], list[QuickFix]]


def _kernels_of(placed: PlacedBlock, context: ModuleContext, world: int, recorded: RecordedValues) -> list[Read]:
    """The block's kernels, read again only when the block, its place, the lines above it (a
    directive), the values recorded for them or the world changed."""
    found = discover_block(placed.block, context.aliases, context.tilelang)
    if not found:
        return []
    values = [recorded(ref.name) for ref, _, _ in found]
    above = []
    index = placed.offset - 1
    while 0 <= index < len(context.lines) and context.lines[index].lstrip().startswith("#"):
        above.append(context.lines[index])
        index -= 1
    key = ("read", world, placed.delta, tuple(above), repr(values))
    cached = placed.block.memo.get(key)
    if cached is not None:
        reads, spent = cached
        report(spent)  # its not-evaluated note stands as when it was read
        return reads
    with collected() as spent:
        reads = [
            read_kernel(ref, outer, body, context, placed, given)
            for (ref, outer, body), given in zip(found, values, strict=True)
        ]
    report(spent)
    placed.block.keep(key, (reads, spent))
    return reads


def _world(blocks: list[PlacedBlock], context: ModuleContext) -> int:
    """What a kernel-only block's reading depends on besides itself: every other block (``world_entries``),
    the module values, the kernel names and the target."""
    names = kernel_names(context)
    others = tuple(e for p in blocks for e in world_entries(p, context, names, context.lines))
    return hash((others, context.env_key, context.target, names, tuple(sorted(context.tilelang.items()))))


def world_entries(
    placed: PlacedBlock, context: ModuleContext, names: frozenset[str], lines: list[str]
) -> tuple[tuple[object, int], ...]:
    """What a block is to the other blocks' readings: nothing for a kernel-only block; for one of
    plain assignments, what each says and its line (``passive``: however the lines are grouped into
    blocks); for any other, the block itself (by identity: blocks are immutable while cached) and its
    place, as the values found there carry its lines. ``lines`` are the file's the block is placed in."""
    if kernel_only(placed, context, names):
        return ()
    said = passive(placed, lines)
    if said is None:
        return ((id(placed.block), placed.offset),)
    return tuple((text, line + placed.offset) for text, line in said)


_ACTIVE = frozenset({ast.Call, ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.comprehension})


def passive(placed: PlacedBlock, lines: list[str]) -> tuple[tuple[str, int], ...] | None:
    """For a block of assignments and docstrings that call nothing (``value_7 = 7 * 2``), each
    statement's text (a one-line one without the blanks it ends in) and line in the block: two such
    blocks that say the same bind the same values, and the run-along steps through them alike,
    whatever comments and blank lines lie between. ``None`` for any other block."""
    block = placed.block
    found = block.memo.get("passive", False)
    if found is False:
        statements = block.statements
        plain = all(isinstance(s, ast.Assign | ast.AnnAssign) or _docstring(s) for s in statements)
        if plain and _ACTIVE.isdisjoint(map(type, block.nodes)):
            found = tuple((_text(s, lines, placed.delta), s.lineno - block.base) for s in statements)
        else:
            found = None
        block.keep("passive", found)
    return found  # type: ignore[no-any-return]  # the memo holds what this function put there


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _text(stmt: ast.stmt, lines: list[str], delta: int) -> str:
    """A statement's text: one line without its trailing blanks, or its lines exactly (blanks at the
    end of a line inside a string are part of the string)."""
    first, last = stmt.lineno + delta - 1, (stmt.end_lineno or stmt.lineno) + delta
    return lines[first].rstrip() if last - first == 1 else "".join(lines[first:last])


def kernel_only(placed: PlacedBlock, context: ModuleContext, names: frozenset[str]) -> bool:
    """A block that is one ``def`` of a kernel calling no kernel: the run-along records calls of
    kernels without entering them, so what it holds changes nothing outside it."""
    block = placed.block
    if len(block.statements) != 1 or not isinstance(block.statements[0], ast.FunctionDef):
        return False
    found = discover_block(block, context.aliases, context.tilelang)
    only = bool(found) and all(outer is block.statements[0] for _, outer, _ in found)
    return only and not any(called in names for called in block_calls(block))


def read_kernel(
    ref: KernelRef,
    outer: ast.FunctionDef,
    body_def: ast.FunctionDef,
    context: ModuleContext,
    placed: PlacedBlock,
    recorded: dict[str, Any] | None = None,
) -> tuple[StaticKernel, list[Diagnostic], list[QuickFix]]:
    """One discovered kernel in file lines; unchanged text under unchanged values is read once: the
    values of its parameters, and of the module names its block mentions (a module constant no
    kernel reads, added or changed, reads none of them again)."""
    bound, target = bindings(ref, outer, placed.delta, context, recorded)
    block = placed.block
    key = (
        "kernel",
        ref.name,
        ref.style,
        tuple(ref.params),
        tuple((b.name, b.value, b.origin) for b in bound),
        target,
        context.aliases,
        context.dialect,
        tuple(sorted(context.scopes.items())),
        tuple(context.env.get(name, _ABSENT) for name in _mentioned(block)),
    )
    cached = block.memo.get(key)
    if cached is None:
        cached = _read(ref, outer, body_def, context, placed.delta, block.nodes, bound, target)
        block.keep(key, cached)
    kernel, found, fixes = placed.place(key, cached)  # type: ignore[misc]  # place() returns the triple the memo was filled with
    kernel = replace(kernel, bindings=bound)
    missing = _missing_values(kernel, outer, placed.delta, context)
    if missing is not None:
        found = [*found, missing.diagnostic]
        fixes = [*fixes, missing]
    return kernel, found, fixes


_ABSENT = object()


def _mentioned(block: ParsedBlock) -> tuple[str, ...]:
    """The names (and ``a.b`` attributes, as ``argparse`` defaults are kept) the block mentions: all
    of the module env a reading of it can look up."""
    found = block.memo.get("mentioned")
    if found is None:
        names: set[str] = set()
        for node in block.nodes:
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                names.add(f"{node.value.id}.{node.attr}")
        found = tuple(sorted(names))
        block.keep("mentioned", found)
    return found  # type: ignore[no-any-return]  # the memo holds what this function put there


def _missing_values(
    kernel: StaticKernel, outer: ast.FunctionDef, delta: int, context: ModuleContext
) -> QuickFix | None:
    """A note naming the parameters no source gave a value, with a directive to fill them in."""
    defaults = {p.name for p in kernel.ref.params if p.default is not None}
    missing = [b.name for b in kernel.bindings if b.origin == "unknown" and b.name not in defaults]
    if not missing:
        return None
    name = kernel.ref.name
    anchor = kernel.name_span or kernel.span
    note = diagnostic("missing-values", anchor, kernel=name, names=", ".join(missing))
    first = delta + min([outer.lineno, *(d.lineno for d in outer.decorator_list)])
    indent = " " * outer.col_offset
    values = " ".join(f"{b.name}={_directive_text(b.value)}" for b in kernel.bindings)
    edit = TextEdit(Span(first, 0, first, 0), f"{indent}# tilescope: {values}\n")
    return QuickFix(note, f"Add a '# tilescope:' directive for {name}", [edit])


def _directive_text(value: object) -> str:
    """A value as a directive writes it: ``?`` when unknown, a list of sizes without spaces."""
    if value is None:
        return "?"
    if isinstance(value, tuple):
        return "[" + ",".join(map(str, value)) + "]"
    return str(value)


def _read(
    ref: KernelRef,
    outer: ast.FunctionDef,
    body_def: ast.FunctionDef,
    context: ModuleContext,
    delta: int,
    nodes: list[ast.AST],
    bound: list[Binding],
    target: str,
) -> tuple[StaticKernel, list[Diagnostic], list[QuickFix]]:
    env = dict(context.env)
    for binding in bound:
        env[binding.name] = binding.value if binding.value is not None else Sym(binding.name)
    if body_def is not outer:
        for stmt in outer.body:
            if isinstance(stmt, ast.FunctionDef | ast.Return):
                break
            bind_assignment(stmt, env, context.aliases)
        body_def = returned_prim_func(outer, body_def, nodes, env, context.aliases)
    reader = KernelReader(ref, env, context.aliases, target, context.scopes, context.dialect)
    reader.read_params(body_def)
    reader.read_body(body_def.body)
    kernel = reader.finish(span_of(outer), body_def, [], nodes)
    index = outer.lineno - 1 + delta
    text = context.lines[index] if 0 <= index < len(context.lines) else ""
    kernel = replace(kernel, name_span=_name_span(outer, text))
    return kernel, reader.diagnostics, reader.fixes


def _name_span(func: ast.FunctionDef, text: str) -> Span:
    """The function's name on its ``def`` line as written (block lines), never past the line's end."""
    encoded = text.rstrip("\r\n").encode("utf-8")
    name = re.escape(func.name.encode("utf-8"))
    match = re.search(rb"def\s+(" + name + rb")(?![A-Za-z0-9_\x80-\xff])", encoded[func.col_offset :])  # a UTF-8 name
    if match is None:
        end = len(encoded)
        return Span(func.lineno, min(func.col_offset, end), func.lineno, end)
    start = func.col_offset + match.start(1)
    return Span(func.lineno, start, func.lineno, start + len(match.group(1)))
