"""Read the public names of ``tilelang.language`` from a TileLang release's sources, never importing.

Importing TileLang takes 2.5 s and runs its code; the static tier needs only names, signatures and
docstrings. They are taken from the sources by following the package's own imports: star imports
(through ``__all__`` where it can be read), ``from X import a as b``, plain aliases and the
definitions at the end of each chain. TVM's script parser, which TileLang re-exports, is read the
same way from the copy the release bundles. Names built at run time (TVM's dtype constructors) are
known by shape only: a dtype-shaped name is a dtype.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_DTYPE = re.compile(r"bool|(u?int|float|bfloat)\d+(_[a-z0-9]+)?(x\d+)?")
_ROOT = "tilelang.language"


@dataclass
class _Module:
    name: str
    names: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """Local name → (``def``, node) | (``ref``, (module, name)) | (``module``, dotted) | (``value``, None)
    | (``keyword_first`` or ``keyword_ignored``, (entry, keyword)): a definition behind a wrapper that
    moves that keyword to the first place, or drops it (``_wrapper_keyword``)."""
    exported: list[str] | None = None
    aliases: list[str] = field(default_factory=list)
    """Modules imported whole (``import X as _x``): where a module ``__getattr__`` finds its names."""


class SourceReader:
    """Resolves names through the modules of one TileLang installation (``site-packages/tilelang``)."""

    def __init__(self, package: Path) -> None:
        self.roots = [package.parent, package / "3rdparty" / "tvm" / "python"]
        self.modules: dict[str, _Module | None] = {}

    def _file(self, dotted: str) -> Path | None:
        parts = dotted.split(".")
        for root in self.roots:
            base = root.joinpath(*parts)
            for candidate in (base.with_suffix(".py"), base / "__init__.py", base.with_suffix(".pyi")):
                if candidate.is_file():
                    return candidate
        return None

    def module(self, dotted: str) -> _Module | None:
        if dotted in self.modules:
            return self.modules[dotted]
        self.modules[dotted] = None
        path = self._file(dotted)
        if path is None:
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
            return None
        package = dotted if path.name == "__init__.py" else dotted.rpartition(".")[0]
        module = _Module(dotted)
        self.modules[dotted] = module
        for stmt in tree.body:
            self._statement(module, stmt, package)
        return module

    def _statement(self, module: _Module, stmt: ast.stmt, package: str) -> None:
        names = module.names
        if isinstance(stmt, ast.ImportFrom):
            source = _absolute(stmt, package)
            for alias in stmt.names:
                if alias.name == "*":
                    for name in self.exports(source):
                        names[name] = ("ref", (source, name))
                elif alias.name == "__all__" and (alias.asname or alias.name) == "__all__":
                    module.exported = self.exports(source)
                else:
                    names[alias.asname or alias.name] = ("ref", (source, alias.name))
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname:
                    names[alias.asname] = ("module", alias.name)
                    module.aliases.append(alias.name)
        elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[stmt.name] = ("def", stmt)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id == "__all__" and stmt.value is not None:
                    module.exported = self._strings(module, stmt.value)
                elif isinstance(target, ast.Name):
                    names[target.id] = self._assigned(module, stmt.value)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    names.pop(target.id, None)
        elif isinstance(stmt, ast.If | ast.Try):
            for inner in [*stmt.body, *getattr(stmt, "orelse", [])]:
                self._statement(module, inner, package)

    def _assigned(self, module: _Module, value: ast.expr | None) -> tuple[str, Any]:
        """What ``NAME = value`` binds: an alias, a wrapped definition, a list of names, or a value."""
        if isinstance(value, ast.Name) and value.id in module.names:
            return module.names[value.id]
        if isinstance(value, ast.Call) and value.args:
            wrapped = self._wrapped(module, value.args[0])
            if wrapped is not None:
                wrapper = module.names.get(value.func.id) if isinstance(value.func, ast.Name) else None
                how = _wrapper_keyword(wrapper[1]) if wrapper is not None and wrapper[0] == "def" else None
                return wrapped if how is None else (how[0], (wrapped, how[1]))
        if isinstance(value, ast.Tuple | ast.List):
            strings = self._strings(module, value)
            if strings is not None:
                return ("strings", strings)
        return ("value", None)

    def _wrapped(self, module: _Module, inner: ast.expr) -> tuple[str, Any] | None:
        """What the first argument of ``NAME = wrapper(inner)`` names: a local name or ``module.attr``."""
        if isinstance(inner, ast.Name) and inner.id in module.names:
            return module.names[inner.id]
        if isinstance(inner, ast.Attribute) and isinstance(inner.value, ast.Name):
            owner = module.names.get(inner.value.id)
            if owner is not None and owner[0] == "ref":
                owner = self.resolve(*owner[1])
            if owner is not None and owner[0] == "module":
                return ("ref", (owner[1], inner.attr))
        return None

    def exports(self, dotted: str) -> list[str]:
        """What ``from dotted import *`` binds."""
        module = self.module(dotted)
        if module is None:
            return []
        if module.exported is not None:
            return module.exported
        return [n for n in module.names if not n.startswith("_")]

    def _strings(self, module: _Module, node: ast.expr) -> list[str] | None:
        """A statically readable ``__all__`` expression, else ``None``."""
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            found: list[str] = []
            for element in node.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    found.append(element.value)
                elif isinstance(element, ast.Starred):
                    inner = self._strings(module, element.value)
                    if inner is None:
                        return None
                    found.extend(inner)
                else:
                    return None
            return found
        if isinstance(node, ast.Name):
            entry = module.names.get(node.id)
            if entry is not None and entry[0] == "ref" and entry[1][1] == "__all__":
                return self.exports(entry[1][0])
            if entry is not None and entry[0] == "ref":
                source = self.module(entry[1][0])
                entry = source.names.get(entry[1][1]) if source is not None else None
            return entry[1] if entry is not None and entry[0] == "strings" else None
        if isinstance(node, ast.Attribute) and node.attr == "__all__" and isinstance(node.value, ast.Name):
            entry = module.names.get(node.value.id)
            return self.exports(entry[1]) if entry is not None and entry[0] == "module" else None
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            return self._strings(module, node.args[0])
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._strings(module, node.left), self._strings(module, node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.GeneratorExp | ast.ListComp) and len(node.generators) == 1:
            generator = node.generators[0]
            items = self._strings(module, generator.iter)
            if items is None:
                return None
            for condition in generator.ifs:
                if isinstance(condition, ast.Compare) and isinstance(condition.ops[0], ast.NotIn):
                    excluded = self._named_strings(module, condition.comparators[0])
                    items = [i for i in items if i not in excluded]
            return items
        return None

    def _named_strings(self, module: _Module, node: ast.expr) -> set[str]:
        """The strings of a constant collection a filter names (``name not in EXCLUDED``)."""
        found = self._strings(module, node) if isinstance(node, ast.Name) else None
        if found is None and isinstance(node, ast.Name):
            entry = module.names.get(node.id)
            source = self.module(entry[1][0]) if entry is not None and entry[0] == "ref" else None
            inner = source.names.get(entry[1][1]) if source is not None and entry is not None else None
            if inner is not None and inner[0] == "value":
                found = _frozenset_strings(self._file(source.name), entry[1][1]) if source and entry else None
        return set(found or ())

    def resolve(self, dotted: str, name: str, depth: int = 0) -> tuple[str, Any] | None:
        """The definition ``name`` of module ``dotted`` ends at: (``def``, node) or (``module``, dotted)."""
        if depth > 20:
            return None
        module = self.module(dotted)
        if module is None:
            submodule = self.module(f"{dotted}.{name}")
            return ("module", f"{dotted}.{name}") if submodule is not None else None
        entry = module.names.get(name)
        if entry == ("ref", (dotted, name)) and self._file(f"{dotted}.{name}") is not None:
            return ("module", f"{dotted}.{name}")  # ``from . import simd as simd`` in a package's ``__init__``
        if entry is None:
            if self._file(f"{dotted}.{name}") is not None:
                return ("module", f"{dotted}.{name}")
            for alias in module.aliases:
                found = self.resolve(alias, name, depth + 1)
                if found is not None:
                    return found
            return None
        return self._followed(entry, depth)

    def _followed(self, entry: tuple[str, Any], depth: int) -> tuple[str, Any] | None:
        kind, value = entry
        if kind == "ref":
            found = self.resolve(value[0], value[1], depth + 1)
            return found if found is not None else ("value", None)
        if kind in ("keyword_first", "keyword_ignored"):
            found = self._followed(value[0], depth + 1)
            return (kind, (found, value[1])) if found is not None and found[0] == "def" else found
        return entry


def _wrapper_keyword(wrapper: ast.AST) -> tuple[str, str] | None:
    """How a decorator-style wrapper (``def w(func): def wrapped(*args, **kwargs): ...``) treats one
    keyword, read from its ``if "K" in kwargs:`` branch: ``("keyword_first", K)`` when it moves the
    value to the front of the positional arguments (TileLang's ``_dtype_forward``: ``T.call_extern(name,
    *args, dtype=...)`` is ``call_extern(dtype, name, *args)``), ``("keyword_ignored", K)`` when it drops
    it (``_op_wrapper``). ``None`` for any other wrapper."""
    if not isinstance(wrapper, ast.FunctionDef):
        return None
    for inner in wrapper.body:
        if not (isinstance(inner, ast.FunctionDef) and inner.args.vararg and inner.args.kwarg):
            continue
        args, kwargs = inner.args.vararg.arg, inner.args.kwarg.arg
        for stmt in inner.body:
            if not (isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Compare)):
                continue
            test = stmt.test
            if not (isinstance(test.left, ast.Constant) and isinstance(test.left.value, str)):
                continue
            keyword = test.left.value
            for branch in stmt.body:
                text = ast.unparse(branch)
                if text == f"{args} = ({kwargs}.pop({keyword!r}),) + {args}":
                    return ("keyword_first", keyword)
                if text == f"{kwargs}.pop({keyword!r})":
                    return ("keyword_ignored", keyword)
    return None


def _frozenset_strings(path: Path | None, name: str) -> list[str] | None:
    """``NAME = frozenset({...})`` (or ``set``/``tuple`` of a literal) in a module, read again."""
    if path is None:
        return None
    for stmt in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                value = stmt.value.args[0] if isinstance(stmt.value, ast.Call) and stmt.value.args else stmt.value
                if isinstance(value, ast.Tuple | ast.List | ast.Set):
                    return [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return None


def _absolute(stmt: ast.ImportFrom, package: str) -> str:
    if not stmt.level:
        return stmt.module or ""
    base = package.split(".")
    if stmt.level > 1:
        base = base[: len(base) - stmt.level + 1]
    return ".".join([*base, stmt.module] if stmt.module else base)


def _params(args: ast.arguments, skip_self: bool) -> list[dict[str, Any]]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params: list[dict[str, Any]] = []
    for index, (arg, default) in enumerate(zip(positional, defaults, strict=True)):
        kind = "positional_only" if index < len(args.posonlyargs) else "positional_or_keyword"
        params.append({"name": arg.arg, "kind": kind, "default": None if default is None else ast.unparse(default)})
    if args.vararg is not None:
        params.append({"name": args.vararg.arg, "kind": "var_positional", "default": None})
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(
            {"name": arg.arg, "kind": "keyword_only", "default": None if default is None else ast.unparse(default)}
        )
    if args.kwarg is not None:
        params.append({"name": args.kwarg.arg, "kind": "var_keyword", "default": None})
    return params[1:] if skip_self and params else params


def _signature(name: str, args: ast.arguments, returns: ast.expr | None, skip_self: bool) -> str:
    text = ast.unparse(args)
    if skip_self:
        text = re.sub(r"^(self|cls)\s*(,\s*)?", "", text)
    return f"{name}({text})" + (f" -> {ast.unparse(returns)}" if returns is not None else "")


def entry(name: str, resolved: tuple[str, Any] | None) -> dict[str, Any]:
    """One catalog entry in the shape of ``primitives.json``."""
    if resolved is not None and resolved[0] in ("keyword_first", "keyword_ignored"):
        return {**entry(name, resolved[1][0]), resolved[0]: resolved[1][1]}
    if resolved is not None and resolved[0] == "def":
        node = resolved[1]
        doc = ast.get_docstring(node) or ""
        if isinstance(node, ast.ClassDef):
            init = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
            found: dict[str, Any] = {"name": name, "kind": "class", "doc": doc}
            if init is not None:
                found["signature"] = _signature(name, init.args, None, True)
                found["params"] = _params(init.args, True)
            return found
        return {
            "name": name,
            "kind": "function",
            "doc": doc,
            "signature": _signature(name, node.args, node.returns, False),
            "params": _params(node.args, False),
        }
    if resolved is not None and resolved[0] == "module":
        return {"name": name, "kind": "module", "doc": ""}
    if _DTYPE.fullmatch(name):
        return {"name": name, "kind": "dtype", "doc": ""}
    return {"name": name, "kind": "value", "doc": ""}


def release_version(package: Path) -> str:
    """The release of a TileLang installation, from its package metadata (no import)."""
    for info in sorted(package.parent.glob("tilelang-*.dist-info")):
        metadata = info / "METADATA"
        if metadata.is_file():
            for line in metadata.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    version_file = package / "VERSION"
    return version_file.read_text().strip() if version_file.is_file() else "unknown"


def _surface(reader: SourceReader, root: str, members: bool = False) -> dict[str, dict[str, Any]]:
    """Every public name of the language module ``root``, and its submodules, as catalog entries;
    with ``members``, a module the language exports by name (``T.simd``) lists its own names too."""
    module = reader.module(root)
    names = [] if module is None else [n for n in module.names if not n.startswith("_")]
    resolved = {n: reader.resolve(root, n) for n in sorted(names)}
    prefix = f"{root}."
    exported = {n for n, found in resolved.items() if members and found is not None and found[0] == "module"}
    submodules = frozenset(
        key[len(prefix) :].split(".")[0] for key, found in reader.modules.items() if found and key.startswith(prefix)
    )
    resolved.update({n: ("module", prefix + n) for n in submodules if n not in resolved})
    found = {n: entry(n, value) for n, value in sorted(resolved.items())}
    for name in sorted(exported):
        dotted = resolved[name][1]  # type: ignore[index]  # a ("module", dotted) pair, as ``exported`` chose
        if isinstance(dotted, str) and dotted.startswith(prefix):
            inner = reader.module(dotted)
            public = [] if inner is None else [n for n in inner.names if not n.startswith("_")]
            table = {n: entry(n, reader.resolve(dotted, n)) for n in sorted(public)}
            found[name]["members"] = {n: e for n, e in table.items() if e["kind"] != "module"}
    return found


def submodules(package: Path, root: str) -> list[str]:
    """The submodules of the language module ``root`` (``from tilelang.language import math`` imports
    one even where the module's namespace lacks it)."""
    folder = package.parent.joinpath(*root.split("."))
    names = {p.stem for p in folder.glob("*.py")} | {p.parent.name for p in folder.glob("*/__init__.py")}
    return sorted(n for n in names if n != "__init__")


def dialect_modules(package: Path) -> dict[str, str]:
    """The backend dialects a release ships (``tilelang.ascend.language`` declares
    ``__tilelang_dialect__ = "ascend"``), by dialect name, read from their ``__init__`` files."""
    found: dict[str, str] = {}
    for init in sorted(package.glob("*/language/__init__.py")):
        try:
            tree = ast.parse(init.read_text(encoding="utf-8"))
        except (SyntaxError, ValueError, OSError, UnicodeDecodeError):
            continue
        for stmt in tree.body:
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__tilelang_dialect__" for t in stmt.targets)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                found[stmt.value.value] = f"tilelang.{init.parent.parent.name}.language"
    return found


def read_catalog(package: Path) -> dict[str, Any]:
    """Every public name of ``tilelang.language`` in the release at ``package``, as JSON data, and each
    backend dialect's surface (``tilelang.ascend.language``) as what it adds, replaces and lacks."""
    reader = SourceReader(package)
    names = _surface(reader, _ROOT)
    dialects: dict[str, dict[str, Any]] = {}
    for dialect, root in dialect_modules(package).items():
        own = _surface(reader, root, members=True)
        dialects[dialect] = {
            "module": root,
            "names": {n: e for n, e in own.items() if names.get(n) != e},
            "absent": sorted(n for n in names if n not in own),
            "submodules": submodules(package, root),
        }
    return {
        "tilelang_version": release_version(package),
        "names": names,
        "submodules": submodules(package, _ROOT),
        "dialects": dialects,
    }
