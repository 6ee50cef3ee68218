"""Load a user's kernel file and build a PrimFunc from it, inside the worker process.

The file is executed as a module that is not ``__main__`` and with only its definitions kept:
imports, functions, classes, constant assignments and ``sys.path`` changes (so sibling modules
import as they do when the file runs). Benchmarks, argument parsing and kernel launches at module
level never run, so analysing a file never touches a GPU. A file inside a package (folders with
``__init__.py``) is loaded under its dotted name, so its relative imports resolve.
"""

from __future__ import annotations

import ast
import builtins
import linecache
import os
import sys
import types
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


def module_name(path: str) -> tuple[str, str | None, str]:
    """The name a file imports under, its package, and the folder to put on ``sys.path`` for it.

    Outside a package: a private name, no package, the file's folder. Inside ``a/b/__init__.py``'s
    folder: ``b.file`` (``a`` too when it is a package), package ``b``, and the folder above ``b``.
    """
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts: list[str] = []
    root = directory
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.basename(root).isidentifier():
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    if not parts:
        return MODULE_NAME, None, directory
    package = ".".join(parts)
    return (package if stem == "__init__" else f"{package}.{stem}"), package, root


_last: dict[tuple[str, str], dict[str, Any]] = {}


def load_module(source: str, path: str) -> dict[str, Any]:
    """Execute the file's definitions and return its namespace.

    TileLang reads kernel source through ``inspect``, so the text is registered in ``linecache``
    under ``path``: unsaved editor buffers build exactly as they read. The last file loaded is
    kept, so its kernels (one request each) share one load, as they share one import in a program.
    """
    lines = source_lines(source)
    linecache.cache[path] = (len(source), None, lines, path)
    key = (path, source)
    if key in _last:
        return _last[key]
    _last.clear()
    name, package, root = module_name(path)
    for directory in dict.fromkeys([os.path.dirname(os.path.abspath(path)), root]):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    tree = definitions_only(ast.parse(source, filename=path))
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = package
    module.__dict__["__builtins__"] = builtins
    sys.modules[name] = module  # dataclasses and pickling look the defining module up by name
    exec(compile(tree, path, "exec", dont_inherit=True), module.__dict__)
    _last[key] = module.__dict__
    return module.__dict__


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


def jit_options(namespace: dict[str, Any], inst: Instantiation, prim_func: Any) -> tuple[dict[str, Any], Any, Any]:
    """``pass_configs``, ``target`` and ``out_idx`` as ``tilelang.compile`` would merge them.

    The PrimFunc's own ``tilelang_pass_configs``/``tilelang_out_idx`` attributes come first; the
    ``@tilelang.jit(...)`` decorator's ``pass_configs`` override them, as in TileLang.
    """
    obj = namespace.get(inst.kernel.name)
    attrs = getattr(prim_func, "attrs", None) or {}
    configs: dict[str, Any] = {}
    if "tilelang_pass_configs" in attrs:
        configs.update({str(k): v for k, v in dict(attrs["tilelang_pass_configs"]).items()})
    configs.update({str(getattr(k, "value", k)): v for k, v in (getattr(obj, "pass_configs", None) or {}).items()})
    out_idx = getattr(obj, "out_idx", None)
    if out_idx is None and "tilelang_out_idx" in attrs:
        out_idx = [int(i) for i in attrs["tilelang_out_idx"]]
    return configs, getattr(obj, "target", None), out_idx
