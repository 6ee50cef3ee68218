"""``T.<name>`` uses checked against the catalog of the TileLang release in use, in the language
module each alias names (``tilelang.language``, or a backend dialect: ``tilelang.ascend.language``).

A name or an argument the catalog does not know is an information note, never an error: the
catalog describes one release, and the user's TileLang (or a wrapper that accepts ``**kwargs``)
may well know it. The errors are a name the release has only in another language module
(``T.SimtVF`` through ``import tilelang.language as T``), a name a backend dialect's file uses that
no module of the release has (``T.vmi`` with ``import tilelang.ascend.language as T``), and an
Ascend ``T.Kernel`` given threads or a 2-D grid, each only where building the kernel surely runs
the code (``certainly_built``): building it raises there, and the message says what to write instead.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Mapping, Sequence

from tilescope.core.codes import diagnostic
from tilescope.core.model import Diagnostic, Span
from tilescope.core.static import catalog
from tilescope.core.static.context import LANGUAGE
from tilescope.core.static.records import PrimitiveUse
from tilescope.core.static.recover import ParsedBlock
from tilescope.core.static.syntax import span_of


def check_primitives(
    block: ParsedBlock,
    aliases: frozenset[str],
    table: catalog.Catalog,
    dialects: Mapping[str, str] | None = None,
    kernels: Sequence[ast.FunctionDef] = (),
) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    """Every ``T.<name>`` in a block (block lines), and notes for unknown names and arguments;
    ``dialects`` gives each alias's dialect (``context.ModuleContext.dialects``; absent: ``tilelang.language``),
    ``kernels`` the block's kernel definitions (``discover``: a factory and its prim_func), whose
    unconditional code is what building them certainly runs."""
    chosen = tuple(sorted((dialects or {}).items()))
    releases = (table.version, table.installed, tuple(table.dialects))
    key = ("primitives", aliases, releases, chosen, tuple(map(id, kernels)))
    cached = block.memo.get(key)
    if cached is None:
        built = certainly_built(kernels, aliases)
        cached = _check_primitives(block.nodes, aliases, table, dict(chosen), built)
        cached[1].extend(_imports(block.statements, table))
        block.keep(key, cached)
    return cached


_BRANCHES = (ast.If, ast.While, ast.Try, ast.IfExp, ast.BoolOp, ast.Match, ast.Lambda, ast.comprehension)


def certainly_built(kernels: Sequence[ast.FunctionDef], aliases: frozenset[str]) -> set[int]:
    """The nodes building these kernels evaluates whatever the values: their bodies, less what a
    branch, a loop over plain Python values or a nested function (a macro, called or not) holds. TVMScript
    builds the body of a loop over a ``T.*`` range once, and a ``with`` body always; a Python ``if``
    may be decided when the kernel is built (``if backend == "pto":``), so its branches are not certain."""
    found: set[int] = set()
    wanted = {id(k) for k in kernels}

    def visit(node: ast.AST) -> None:
        found.add(id(node))
        for name, value in ast.iter_fields(node):
            children = value if isinstance(value, list) else [value]
            for child in children:
                if not isinstance(child, ast.AST):
                    continue
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and id(child) not in wanted:
                    continue
                if isinstance(node, _BRANCHES) and name not in ("test", "subject"):
                    continue
                if isinstance(node, ast.For) and name in ("body", "orelse") and not _tile_loop(node, aliases):
                    continue
                visit(child)

    for kernel in kernels:
        for stmt in kernel.body:
            visit(stmt)
    return found


def _tile_loop(loop: ast.For, aliases: frozenset[str]) -> bool:
    """A ``for`` over a ``T.*`` range (``T.Parallel``, ``T.Pipelined``, ``T.serial``...): TVMScript builds it once."""
    call = loop.iter
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id in aliases
    )


def _imports(statements: list[ast.stmt], root: catalog.Catalog) -> list[Diagnostic]:
    """``from tilelang.language import simd`` at the top of a file: an ``ImportError`` when the file is
    imported where the module lacks the name and has no submodule of it, and another module of the
    release has it."""
    found: list[Diagnostic] = []
    for stmt in statements:
        if not (isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module):
            continue
        match = LANGUAGE.fullmatch(stmt.module)
        if match is None:
            continue
        table = root.dialect(match.group(1))
        if table.module != stmt.module:
            continue
        for alias in stmt.names:
            if alias.name == "*" or table.lookup(alias.name) or alias.name in table.submodules:
                continue
            homes = root.homes(alias.name)
            if homes:
                found.append(
                    diagnostic(
                        "dialect-primitive",
                        span_of(stmt),
                        form="import",
                        severity=None if table.installed else "information",
                        name=alias.name,
                        module=table.module,
                        version=table.version,
                        home=homes[0],
                    )
                )
    return found


def _check_primitives(
    nodes: list[ast.AST], aliases: frozenset[str], root: catalog.Catalog, dialects: dict[str, str], built: set[int]
) -> tuple[list[PrimitiveUse], list[Diagnostic]]:
    uses: list[PrimitiveUse] = []
    found: list[Diagnostic] = []
    calls: dict[int, ast.Call] = {}
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            calls[id(node.func)] = node
    reported: set[str] = set()
    for node in nodes:
        if _member_of(node, aliases):
            found.extend(_member(node, root, dialects, uses, calls, id(node) in built))  # ``T.simd.vadd``
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases):
            continue
        end = node.end_col_offset or 0
        span = Span(node.end_lineno or node.lineno, end - len(node.attr), node.end_lineno, end)
        call = calls.get(id(node))
        uses.append(PrimitiveUse(node.attr, span, call is not None))
        dialect = dialects.get(node.value.id)
        table = root.dialect(dialect)
        primitive = table.lookup(node.attr)
        known = not dialect or dialect in root.dialects  # a dialect this release's catalog lacks: notes only
        certain = known and id(node) in built and node.attr not in reported
        homes = root.homes(node.attr) if primitive is None and certain else []
        if primitive is None and certain:
            reported.add(node.attr)  # the build stops at the first; one error a name says it
        if homes:
            found.append(_elsewhere(node.attr, node.value.id, span, table, homes[0]))
        elif primitive is None and certain and dialect:
            found.append(_absent(node.attr, node.value.id, span, table))
        elif primitive is None:
            guess = table.closest(node.attr)
            module = table.module if known else f"tilelang.{dialect}.language"
            fields: dict[str, object] = {"name": node.attr, "module": module, "version": table.version}
            if guess:
                found.append(diagnostic("unknown-primitive", span, form="guess", guess=guess, fields=fields))
            else:
                found.append(diagnostic("unknown-primitive", span, fields=fields))
        elif call is not None and node.attr == "Kernel" and dialect == "ascend":
            found.extend(_ascend_launch(primitive, call, table) if id(node) in built else [])
        elif call is not None and primitive.kind == "function" and primitive.params is not None:
            problem = _argument_problem(primitive, call)
            if problem is not None:
                form, fields = problem
                found.append(
                    diagnostic(
                        "wrong-arguments",
                        span_of(call),
                        form=form,
                        name=primitive.name,
                        version=table.version,
                        fields=fields,
                    )
                )
    uses.sort(key=lambda u: (u.span.line, u.span.column))
    return uses, found


def _elsewhere(name: str, alias: str, span: Span, table: catalog.Catalog, home: str) -> Diagnostic:
    """``dialect-primitive``: an error where the catalog is the user's release; where only the shipped
    catalog stands in, the user's release is unknown and may have the name, so a note."""
    return diagnostic(
        "dialect-primitive",
        span,
        severity=None if table.installed else "information",
        name=name,
        alias=alias,
        module=table.module,
        version=table.version,
        home=home,
    )


def _member_of(node: ast.AST, aliases: frozenset[str]) -> bool:
    """``T.simd.vadd``: an attribute of an attribute of the language module."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and isinstance(node.value.value, ast.Name)
        and node.value.value.id in aliases
    )


def _member(
    node: ast.AST,
    root: catalog.Catalog,
    dialects: dict[str, str],
    uses: list[PrimitiveUse],
    calls: dict[int, ast.Call],
    certain: bool,
) -> list[Diagnostic]:
    """A member of a module the dialect exports by name (``T.simd.vadd``), recorded for hover and
    signature help; one the module lacks is an ``AttributeError`` where building surely runs it."""
    assert isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
    assert isinstance(node.value.value, ast.Name)
    alias = node.value.value.id
    table = root.dialect(dialects.get(alias))
    owner = table.lookup(node.value.attr)
    if owner is None or owner.members is None:
        return []
    end = node.end_col_offset or 0
    span = Span(node.end_lineno or node.lineno, end - len(node.attr), node.end_lineno, end)
    name = f"{node.value.attr}.{node.attr}"
    uses.append(PrimitiveUse(name, span, id(node) in calls))
    if owner.member(node.attr) is not None:
        return []
    if certain and dialects.get(alias):
        return [_absent(name, alias, span, table)]
    return [diagnostic("unknown-primitive", span, name=name, module=table.module, version=table.version)]


def _absent(name: str, alias: str, span: Span, table: catalog.Catalog) -> Diagnostic:
    """A name no language module of the release has, used through a backend dialect: the dialect's
    catalog is its whole surface (``tests/static/test_catalog.py`` checks it against ``dir()``), so it
    is an ``AttributeError`` where the catalog is the user's release."""
    owner, _, member = name.rpartition(".")
    primitive = table.lookup(owner) if owner else None
    if primitive is not None and primitive.members is not None:
        close = difflib.get_close_matches(member, [m.name for m in primitive.members], n=1, cutoff=0.75)
        guess = f"{owner}.{close[0]}" if close else None
    else:
        guess = table.closest(name)
    return diagnostic(
        "dialect-primitive",
        span,
        form="absent_guess" if guess else "absent",
        severity=None if table.installed else "information",
        fields={"name": name, "alias": alias, "module": table.module, "version": table.version}
        | ({"guess": guess} if guess else {}),
    )


def _ascend_launch(primitive: catalog.Primitive, call: ast.Call, table: catalog.Catalog) -> list[Diagnostic]:
    """``T.Kernel`` of the Ascend dialect: a keyword its signature lacks (``threads=``) is Python's
    TypeError, and more than one grid extent its own ValueError ("Ascend targets a 1-D core grid")."""
    accepted = {p.name for p in primitive.params or () if p.kind != "var_positional"}
    if any(p.kind == "var_keyword" for p in primitive.params or ()):
        return []
    fields: dict[str, object] = {"module": table.module, "version": table.version}
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg not in accepted:
            return [diagnostic("ascend-launch", span_of(keyword), given=keyword.arg, fields=fields)]
    starred = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if not starred and len(call.args) > 1:
        return [diagnostic("ascend-launch", span_of(call), form="grid", count=len(call.args), fields=fields)]
    return []


def _as_called(primitive: catalog.Primitive, call: ast.Call) -> tuple[list[ast.expr], list[ast.keyword]]:
    """The arguments the wrapped function receives: TileLang's wrapper may move a keyword to the front
    of the positional ones, or drop it, before the call."""
    args, keywords = list(call.args), list(call.keywords)
    for keyword in call.keywords:
        if keyword.arg is not None and keyword.arg == primitive.keyword_first:
            keywords.remove(keyword)
            args.insert(0, keyword.value)
        elif keyword.arg is not None and keyword.arg == primitive.keyword_ignored:
            keywords.remove(keyword)
    return args, keywords


def _argument_problem(primitive: catalog.Primitive, call: ast.Call) -> tuple[str | None, dict[str, object]] | None:
    """What is wrong with the call's arguments: the form of ``wrong-arguments`` that says it, and its fields."""
    params = primitive.params or ()
    args, keywords = _as_called(primitive, call)
    kinds = {p.kind for p in params}
    positional = [p for p in params if p.kind in ("positional_only", "positional_or_keyword")]
    by_keyword = {p.name for p in params if p.kind in ("positional_or_keyword", "keyword_only")}
    starred = any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in keywords)
    if "var_positional" not in kinds and not starred and len(args) > len(positional):
        return "positional", {"expected": len(positional), "given": len(args)}
    if "var_keyword" not in kinds:
        for keyword in keywords:
            if keyword.arg is not None and keyword.arg not in by_keyword:
                close = [n for n in by_keyword if n.lower() == keyword.arg.lower()]
                if close:
                    return "unknown_close", {"arg": keyword.arg, "close": close[0]}
                return None, {"arg": keyword.arg}
    if starred:
        return None
    by_position = {p.name for p in positional[: len(args)]}
    for keyword in keywords:
        if keyword.arg in by_position:
            return "twice", {"arg": keyword.arg}
    given = by_position | {k.arg for k in keywords if k.arg}
    missing = [
        p.name
        for p in params
        if p.default is None
        and p.kind in ("positional_only", "positional_or_keyword", "keyword_only")
        and p.name not in given
    ]
    if missing:
        return "missing", {"names": ", ".join(missing)}
    return None
