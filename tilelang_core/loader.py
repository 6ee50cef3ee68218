"""Load a user's kernel file and build a PrimFunc from it, inside the worker process.

The file is executed as a module that is not ``__main__`` and with only its definitions kept:
imports, functions, classes and constant assignments. Benchmarks, argument parsing and kernel
launches at module level never run, so analysing a file never touches a GPU.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import os
import sys
from typing import Any

from tilescope.core.discovery import Instantiation
from tilescope.core.lines import source_lines

MODULE_NAME = "__tilescope_kernel__"
_SAFE_CALLS = {
    "T",
    "tilelang",
    "tl",
    "int",
    "float",
    "str",
    "tuple",
    "list",
    "dict",
    "range",
    "len",
    "max",
    "min",
}


def _calls_only_safe(node: ast.AST) -> bool:
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        head = call.func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id not in _SAFE_CALLS:
            return False
    return True


def _keep(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        return stmt.value is None or _calls_only_safe(stmt.value)
    if isinstance(stmt, ast.Try):
        return all(_keep(s) for s in stmt.body)
    return False


def definitions_only(tree: ast.Module) -> ast.Module:
    """The module with every statement that could run work at import time removed."""
    body: list[ast.stmt] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.Try) and _keep(stmt):
            stmt.handlers = [
                ast.ExceptHandler(type=h.type, name=h.name, body=[ast.Pass()], lineno=h.lineno, col_offset=h.col_offset)
                for h in stmt.handlers
            ]
            stmt.orelse, stmt.finalbody = [], []
            body.append(stmt)
        elif _keep(stmt):
            body.append(stmt)
    tree.body = body
    return tree


def load_module(source: str, path: str) -> dict[str, Any]:
    """Execute the file's definitions and return its namespace.

    TileLang reads kernel source through ``inspect``, so the text is registered in ``linecache``
    under ``path``: unsaved editor buffers build exactly as they read.
    """
    lines = source_lines(source)
    linecache.cache[path] = (len(source), None, lines, path)
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    tree = definitions_only(ast.parse(source, filename=path))
    namespace: dict[str, Any] = {"__name__": MODULE_NAME, "__file__": path, "__builtins__": builtins}
    exec(compile(tree, path, "exec", dont_inherit=True), namespace)
    return namespace


def build_prim_func(namespace: dict[str, Any], inst: Instantiation) -> Any:
    """Call the kernel's factory with the resolved arguments, the way its style expects."""
    obj = namespace[inst.kernel.name]
    style = inst.kernel.style
    if style == "prim_func":
        return obj
    getter = getattr(obj, "get_tir", None)  # @tilelang.jit: build the PrimFunc, compile nothing
    if getter is not None:
        return getter(**inst.args)
    return obj(**inst.args)
