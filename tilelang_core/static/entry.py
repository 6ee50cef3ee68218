"""Which kernel of a file its author means when none is named: the one the file itself builds.

A file of TileLang's examples often defines helpers before its real kernel (``test_convert`` above
``matmul``, ``rms_norm_splitk`` above ``rms_norm``), so "the first in the file" opens the wrong one.
The file says which it means by what it runs, in this order:

1. the first kernel its run builds (``flow.py``'s run-along from the top level and ``__main__``);
2. where that run stops before a kernel (an unknown test, a ``raise``), the first kernel the
   ``__main__`` block leads to through the file's own functions, read from the names they mention;
3. the first kernel a ``test_*`` function of the file leads to, the same way;
4. the first kernel in the file.

Nothing is executed; the choice and the reason are given together so a command can say both.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from tilescope.core.static import catalog
from tilescope.core.static.analyze import analysis_of, prepared
from tilescope.core.static.bindings import kernel_names
from tilescope.core.static.context import ModuleContext
from tilescope.core.static.flow import reached_calls
from tilescope.core.static.recover import parse_tolerant


@dataclass(frozen=True)
class KernelChoice:
    """The kernel a command works on when none is named, why that one, and every kernel of the file."""

    kernel: str
    why: str
    """Completes "chosen because it is ...": ``the first kernel the file's __main__ builds (through main)``."""
    kernels: tuple[str, ...]
    """Every kernel of the file, in file order."""


def kernel_choice(source: str, path: str = "<unsaved>", target: str = "sm_90") -> KernelChoice | None:
    """The kernel the file means (see the module's docstring); ``None`` for a file with no kernel."""
    text, surrogate = prepared(source)
    analysis = analysis_of(parse_tolerant(text), surrogate, path, target, catalog.default())
    names = tuple(dict.fromkeys(k.ref.name for k in analysis.static.kernels))
    if not names:
        return None
    if len(names) == 1:
        return KernelChoice(names[0], "the only kernel in the file", names)
    return intended(analysis.context, names)


def intended(context: ModuleContext, names: tuple[str, ...]) -> KernelChoice:
    """The choice among ``names`` (file order, at least one) for a file read into ``context``."""
    reached = reached_calls(context, kernel_names(context))
    first = next((name for name in reached if name in names), None)
    if first is not None:
        return KernelChoice(first, "the first kernel the file builds when run" + _through(reached[first][0].via), names)
    defs = _definitions(context)
    kernels = frozenset(names)
    main = [s for p in context.blocks for s in p.block.statements if isinstance(s, ast.If) and _main_guard(s.test)]
    found = _leads_to(main, defs, kernels)
    if found is not None:
        return KernelChoice(found[0], "the first kernel the file's __main__ block leads to" + _through(found[1]), names)
    for name, node in defs.items():
        if name.startswith("test") and isinstance(node, ast.FunctionDef):
            found = _leads_to(node.body, defs, kernels, (name,))
            if found is not None:
                return KernelChoice(found[0], f"the first kernel {name} leads to" + _through(found[1][1:]), names)
    return KernelChoice(names[0], "the first in the file (neither __main__ nor a test_ function leads to one)", names)


def _through(via: tuple[str, ...]) -> str:
    return f" (through {' → '.join(via)})" if via else ""


Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _definitions(context: ModuleContext) -> dict[str, Definition]:
    """The file's top-level functions and classes by name, in file order."""
    found: dict[str, Definition] = {}
    for placed in context.blocks:
        for stmt in placed.block.statements:
            if isinstance(stmt, Definition):
                found.setdefault(stmt.name, stmt)
    return found


def _leads_to(
    body: Sequence[ast.stmt], defs: dict[str, Definition], kernels: frozenset[str], via: tuple[str, ...] = ()
) -> tuple[str, tuple[str, ...]] | None:
    """The first kernel named in ``body``, following the file's functions it names depth first, in
    the order the names are written; with the functions it was reached through."""
    seen: set[str] = set(via)
    stack: list[tuple[tuple[str, ...], list[str]]] = [(via, _names_in_order(body))]
    while stack:
        path, names = stack[-1]
        if not names:
            stack.pop()
            continue
        name = names.pop(0)
        if name in kernels:
            return name, path
        node = defs.get(name)
        if node is not None and name not in seen:
            seen.add(name)
            stack.append(((*path, name), _names_in_order(node.body)))
    return None


def _names_in_order(body: Sequence[ast.stmt]) -> list[str]:
    """Every name and attribute ``body`` mentions, in the order they are written."""
    found: list[tuple[int, int, str]] = []
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                found.append((node.lineno, node.col_offset, node.id))
            elif isinstance(node, ast.Attribute):
                found.append((node.end_lineno or node.lineno, node.end_col_offset or 0, node.attr))
    return [name for _, _, name in sorted(found)]


def _main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"``: the block that runs when the file is run as a program."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
