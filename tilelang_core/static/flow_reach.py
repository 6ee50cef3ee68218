"""Which names of a file may build a kernel when called, read from the text alone.

The run-along stops where a path it cannot decide may reach a kernel call, and runs freely
elsewhere; this is the one place that says which functions, classes and module names lead to
a kernel, so that a helper that only computes a size is never a reason to stop.
"""

from __future__ import annotations

import ast

from tilescope.core.static.context import ModuleContext


def reaching_names(context: ModuleContext, kernels: frozenset[str]) -> frozenset[str]:
    """The kernels, the functions (and classes) that call or mention one, transitively, and module
    names bound to them."""
    mentions: dict[str, set[str]] = {}
    for placed in context.blocks:
        for stmt in placed.block.statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.FunctionDef | ast.ClassDef):
                    mentions.setdefault(node.name, set()).update(mentioned_names(node))
            if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        mentions.setdefault(target.id, set()).update(mentioned_names(stmt.value))
    found = set(kernels)
    changed = True
    while changed:
        changed = False
        for name, used in mentions.items():
            if name not in found and used & found:
                found.add(name)
                changed = True
    return frozenset(found)


def mentioned_names(node: ast.AST) -> set[str]:
    """Every name a subtree mentions, attributes included (``X.apply`` mentions ``X`` and ``apply``)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found
