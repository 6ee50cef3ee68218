"""Load a user's kernel file and build a PrimFunc from it, inside the worker process.

The file is executed as a module that is not ``__main__`` and with only its definitions kept:
imports, functions, classes, constant assignments and ``sys.path`` changes (so sibling modules
import as they do when the file runs). Benchmarks, argument parsing and kernel launches at module
level never run, so analysing a file never touches a GPU. A file inside a package (folders with
``__init__.py``, a ``src/`` layout, a namespace package) is loaded as ``import pkg.mod`` loads it:
parent packages first, under its dotted name, so relative imports and re-exporting ``__init__``
files resolve, whichever files the worker loaded before.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import importlib
import importlib.util
import linecache
import os
import sys
import sysconfig
import types
from collections.abc import Iterator
from typing import Any

from tilescope.core.compiler.discovery import Instantiation
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


_NAMESPACE_DEPTH = 4
"""How many folders without ``__init__.py`` a file may sit below a regular package and still be its module."""


def _relative_level(tree: ast.Module | None) -> int:
    """The deepest ``from ..x import y`` of the file: how many packages it must sit in."""
    if tree is None:
        return 0
    return max((n.level for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)), default=0)


def _absolute_roots(tree: ast.Module | None) -> set[str]:
    """Top-level names the file imports absolutely (``from mylib.config import X`` gives ``mylib``)."""
    names: set[str] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
    return names


def _regular_chain(directory: str) -> tuple[list[str], str]:
    """The folders with ``__init__.py`` from ``directory`` up, and the folder above the topmost."""
    parts: list[str] = []
    root = directory
    while os.path.isfile(os.path.join(root, "__init__.py")) and os.path.basename(root).isidentifier():
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    return parts, root


def _namespace_chain(directory: str, tree: ast.Module | None) -> tuple[list[str], str]:
    """Folders of a namespace package the file belongs to, as ``import`` would see them; none for a script.

    A folder without ``__init__.py`` under a regular package is a namespace portion of it; a file
    there is that package's module only when it says so: a relative import, or an absolute import
    of the package's own top name. Above no regular package, a relative import of level L makes
    the L folders above the file its (namespace) packages.
    """
    level = _relative_level(tree)
    gap: list[str] = []
    folder = directory
    for _ in range(_NAMESPACE_DEPTH):
        if not os.path.basename(folder).isidentifier():
            break
        gap.insert(0, os.path.basename(folder))
        above = os.path.dirname(folder)
        parts, root = _regular_chain(above)
        if parts:
            if level or parts[0] in _absolute_roots(tree):
                return parts + gap, root
            break
        folder = above
    if level == 0:
        return [], directory
    parts, folder = [], directory
    for _ in range(level):
        if not os.path.basename(folder).isidentifier():
            return [], directory
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    return parts, folder


def module_name(path: str, tree: ast.Module | None = None) -> tuple[str, str | None, str]:
    """The name a file imports under, its package, and the folder to put on ``sys.path`` for it.

    Outside a package: a private name, no package, the file's folder. Inside ``a/b/__init__.py``'s
    folder: ``b.file`` (``a`` too when it is a package), package ``b``, and the folder above ``b``
    (``src/`` in a src layout). Namespace packages (folders without ``__init__.py``) count where
    the file's own imports say it lives in one (``_namespace_chain``).
    """
    directory = os.path.dirname(os.path.abspath(path))
    stem = os.path.splitext(os.path.basename(path))[0]
    parts, root = _regular_chain(directory)
    if not parts:
        parts, root = _namespace_chain(directory, tree)
    if not parts:
        return MODULE_NAME, None, directory
    package = ".".join(parts)
    return (package if stem == "__init__" else f"{package}.{stem}"), package, root


def _forget_package(top: str, root: str) -> None:
    """Drop the user's package from ``sys.modules``, so every load imports it as it is on disk now.

    Only modules of ``top`` that live under ``root`` go: a file of the workspace never makes the
    worker forget TileLang, or an installed package of the same name.
    """
    first = sys.modules.get(top)
    locations = [*(getattr(first, "__path__", None) or []), getattr(first, "__file__", None) or ""]
    if first is not None and not any(p and os.path.abspath(p).startswith(root + os.sep) for p in locations):
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


OWN = ("tilescope", "__main__")
"""Modules never forgotten, wherever the user's folders are: this worker's own."""
_user_roots: set[str] = set()
"""Folders loads put on ``sys.path``: where the modules of the user's own code come from."""


def _installed() -> tuple[str, ...]:
    """Where installed code lives: the interpreter's prefixes and every site-packages folder on the path
    (one a ``.pth`` file added included); TileLang puts its own TVM on ``sys.path`` there."""
    places = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values()}
    places.update(p for p in sys.path if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"))
    return tuple(os.path.abspath(p) + os.sep for p in places if p)


def _enter(root: str) -> None:
    """Put ``root`` first on ``sys.path`` and forget what earlier loads imported from the user's folders, and
    those folders: a file's ``import utils`` finds its own folder's ``utils``, never one another folder's
    file left in ``sys.modules`` (each file is analysed as its own program). Installed packages stay."""
    installed = _installed()
    folders = tuple(r + os.sep for r in _user_roots)
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        where = os.path.abspath(file) if isinstance(file, str) else ""
        if where.startswith(folders) and not where.startswith(installed) and not name.startswith(OWN):
            del sys.modules[name]
    for folder in _user_roots - {root}:
        while folder in sys.path:
            sys.path.remove(folder)
    _user_roots.add(root)
    if root not in sys.path:
        sys.path.insert(0, root)


def _user_folders(added: list[str]) -> set[str]:
    """The folders a file's own ``sys.path`` edits added, less installed ones (TileLang adds its TVM)."""
    installed = _installed()
    return {os.path.abspath(p) for p in added if not (os.path.abspath(p) + os.sep).startswith(installed)}


def _import_parents(name: str, package: str, root: str) -> None:
    """Import the packages above the file first, as ``import pkg.mod`` does: their ``__init__`` may
    re-export the file's own kernels, and must find their modules whole, not half-loaded."""
    _enter(root)
    _forget_package(package.split(".")[0], root)
    parent = package if name != package else package.rpartition(".")[0]
    if parent:
        importlib.import_module(parent)


_last: dict[tuple[str, str], dict[str, Any]] = {}


_DEVICE_MODULES = ("torch_npu",)
"""A device's torch extension: imported by a program for that device only to register it, never needed to
build a kernel (which lowers for a named target); an empty stand-in where it is not installed."""


def _stand_in_device_modules(tree: ast.Module) -> None:
    for name in _DEVICE_MODULES:
        if name in _absolute_roots(tree) and name not in sys.modules and importlib.util.find_spec(name) is None:
            stand_in = types.ModuleType(name)
            stand_in.__doc__ = "Tilescope's stand-in: this interpreter has no such device extension."
            sys.modules[name] = stand_in


def load_module(source: str, path: str) -> dict[str, Any]:
    """Execute the file's definitions and return its namespace.

    TileLang reads kernel source through ``inspect``, so the text is registered in ``linecache``
    under ``path``: unsaved editor buffers build exactly as they read. The last file loaded is
    kept, so its kernels (one request each) share one load, as they share one import in a program.
    A module of a package is loaded as ``import pkg.mod`` would load it: its packages imported
    first, under its dotted name, with only its package's folder on ``sys.path``.
    """
    lines = source_lines(source)
    linecache.cache[path] = (len(source), None, lines, path)
    key = (path, source)
    if key in _last:
        return _last[key]
    _last.clear()
    tree = ast.parse(source, filename=path)
    _stand_in_device_modules(tree)
    name, package, root = module_name(path, tree)
    if package is None:
        _enter(root)
    else:
        _import_parents(name, package, root)
    tree = definitions_only(tree)
    module = types.ModuleType(name)
    module.__file__ = path
    module.__package__ = package
    is_package = os.path.basename(path) == "__init__.py" and package is not None
    module.__spec__ = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[os.path.dirname(os.path.abspath(path))] if is_package else None
    )
    if is_package:
        module.__path__ = [os.path.dirname(os.path.abspath(path))]
    module.__dict__["__builtins__"] = builtins
    previous = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look the defining module up by name
    searched = list(sys.path)
    try:
        exec(compile(tree, path, "exec", dont_inherit=True), module.__dict__)
        _user_roots.update(_user_folders([p for p in sys.path if p not in searched and isinstance(p, str)]))
    except BaseException:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise
    if package is not None and name != package and package in sys.modules:
        setattr(sys.modules[package], name.rpartition(".")[2], module)
    _last[key] = module.__dict__
    return module.__dict__


def compile_options(namespace: dict[str, Any], source: str, path: str, kernel: str) -> tuple[dict[str, Any], Any]:
    """``pass_configs`` and ``target`` of the file's first ``tilelang.compile`` of a factory's PrimFunc.

    ``tilelang.compile(gemm(M, N, K), target="ascend", pass_configs={...})``, or of a name the file bound
    to such a call (``program = gemm(...)``): they are part of the build the file makes, as the
    decorator's are for ``@tilelang.jit``. Each keyword is evaluated in the loaded module; one that
    needs the program's run (``target=cli_args.target``) is left out.
    """
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return {}, None
    made = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and _calls(node.value, kernel)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == "compile" and node.args):
            continue
        first = node.args[0]
        if not (_calls(first, kernel) or (isinstance(first, ast.Name) and first.id in made)):
            continue
        found: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg in ("pass_configs", "target"):
                with contextlib.suppress(Exception):
                    expression = ast.Expression(keyword.value)
                    found[keyword.arg] = eval(compile(expression, path, "eval"), namespace)
        configs = found.get("pass_configs") or {}
        return {str(getattr(k, "value", k)): v for k, v in dict(configs).items()}, found.get("target")
    return {}, None


def _calls(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] == name


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def build_prim_func(namespace: dict[str, Any], inst: Instantiation) -> Any:
    """Call the kernel's factory with the resolved arguments, the way its style expects."""
    obj = namespace[inst.kernel.name]
    style = inst.kernel.style
    inner_jit.clear()  # each build says afresh whether a factory's own jit made it
    if style == "prim_func":
        return obj
    getter = getattr(obj, "get_tir", None)  # @tilelang.jit: build the PrimFunc, compile nothing
    if getter is not None:
        # TileLang keeps each argument set's PrimFunc (``p1_cache``); a build for another target or device
        # profile must run the function again, as a new process would.
        cache = getattr(getattr(obj, "func", None), "p1_cache", None)
        if isinstance(cache, dict):
            cache.clear()
        return getter(**inst.args)
    with _jit_compiles_stop() as built:
        try:
            return obj(**inst.args)
        except _Built:
            return built[0]


inner_jit: dict[str, Any] = {}
"""A factory that compiled a ``@tilelang.jit`` of its own (``return _build()``): that jit's ``target``,
``pass_configs`` and ``out_idx``, which are part of the build, as a decorator's are."""


class _Built(BaseException):
    """Raised through the factory once its inner jit has built the PrimFunc: nothing is compiled."""


@contextlib.contextmanager
def _jit_compiles_stop() -> Iterator[list[Any]]:
    """While a factory runs, a ``@tilelang.jit`` it calls builds its PrimFunc and stops there (compiling
    would need the target's toolkit, nvcc or CANN's bisheng, and proves nothing about the IR)."""
    from tilelang.jit import JITImpl

    built: list[Any] = []
    original = JITImpl.compile

    def compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        built.append(self.get_tir(*args, **kwargs))
        inner_jit.update(target=self.target, pass_configs=dict(self.pass_configs or {}), out_idx=self.out_idx)
        raise _Built

    JITImpl.compile = compile
    try:
        yield built
    finally:
        JITImpl.compile = original


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
    if inner_jit:  # the factory's own @tilelang.jit
        configs.update({str(getattr(k, "value", k)): v for k, v in inner_jit["pass_configs"].items()})
        out_idx = out_idx if out_idx is not None else inner_jit["out_idx"]
    if out_idx is None and "tilelang_out_idx" in attrs:
        out_idx = [int(i) for i in attrs["tilelang_out_idx"]]
    return configs, getattr(obj, "target", None) or inner_jit.get("target"), out_idx
