"""Which top-level statements of a user's file run when the worker loads it: definitions only.

Imports, functions, classes, constant assignments (calls to ``T``, ``tilelang`` and a few builtins
only) and ``sys.path`` edits made of path arithmetic are kept, so sibling modules import as they do
when the file runs; benchmarks, argument parsing and kernel launches at module level are dropped, so
analysing a file never touches a GPU. Runs in the worker; pure ``ast``.
"""

from __future__ import annotations

import ast
import builtins

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
_PATH_CALLS = {"join", "dirname", "abspath", "realpath", "normpath", "expanduser", "fspath", "str"}
_SYS_PATH_EDITS = {"append", "insert", "extend"}


def _calls_only_safe(node: ast.AST) -> bool:
    for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
        head = call.func
        while isinstance(head, ast.Attribute):
            head = head.value
        if not isinstance(head, ast.Name) or head.id not in _SAFE_CALLS:
            return False
    return True


def _is_sys_path_edit(stmt: ast.stmt) -> bool:
    """``sys.path.append(os.path.join(os.path.dirname(__file__), "..."))`` and its kin: path arithmetic only."""
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    func = stmt.value.func
    if not (isinstance(func, ast.Attribute) and func.attr in _SYS_PATH_EDITS and ast.unparse(func.value) == "sys.path"):
        return False
    for call in (n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and n is not stmt.value):
        name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
        if name not in _PATH_CALLS:
            return False
    return True


def _keep(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return True
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        return stmt.value is None or _calls_only_safe(stmt.value)
    if isinstance(stmt, ast.Try):
        return all(_keep(s) for s in stmt.body)
    return _is_sys_path_edit(stmt)


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Names a kept top-level statement binds."""
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return {(a.asname or a.name).split(".")[0] for a in stmt.names}
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    return {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _reads_unbound(stmt: ast.stmt, bound: set[str]) -> bool:
    """An assignment reading a name no kept statement binds (``ref_c = a @ b.T`` after a skipped
    ``a = torch.randn(...)``) would stop the load with a NameError: it is skipped too."""
    if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
        return False
    nodes = list(ast.walk(stmt.value))
    loaded = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    local = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}  # comprehensions
    local |= {a.arg for n in nodes if isinstance(n, ast.Lambda) for a in ast.walk(n.args) if isinstance(a, ast.arg)}
    return bool(loaded - local - bound - set(dir(builtins)))


def definitions_only(tree: ast.Module) -> ast.Module:
    """The module with every statement that could run work at import time removed."""
    body: list[ast.stmt] = []
    bound = {"__name__", "__file__", "__doc__", "__spec__", "__package__"}
    for stmt in tree.body:
        if _keep(stmt) and _reads_unbound(stmt, bound):
            continue
        if _keep(stmt):
            bound |= _bound_names(stmt)
        if isinstance(stmt, ast.Try) and _keep(stmt):
            # ``except ImportError: from old.place import x`` (code for several releases) stays whole.
            stmt.handlers = [
                h
                if all(_keep(s) for s in h.body)
                else ast.ExceptHandler(
                    type=h.type, name=h.name, body=[ast.Pass()], lineno=h.lineno, col_offset=h.col_offset
                )
                for h in stmt.handlers
            ]
            stmt.orelse, stmt.finalbody = [], []
            body.append(stmt)
        elif _keep(stmt):
            body.append(stmt)
    tree.body = body
    return tree
