"""Which definitions of a file are TileLang kernels, in each style TileLang 0.1.15 accepts.

Factories returning an inner ``@T.prim_func`` (under ``@tilelang.jit``, ``@autotune`` or nothing;
the inner function may be built in a helper and not returned by name), the eager
``@tilelang.jit`` style (``T.const``, tensors annotated in the body) and module-level prim_funcs.
Decorators are resolved through the file's imports, so ``@triton.jit`` (or ``tl.jit`` with
``import triton.language as tl``) is never taken for TileLang's.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from tilescope.core.model import KernelRef, Param
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.recover import ParsedBlock
from tilescope.core.static.symbolic import Value
from tilescope.core.static.syntax import dotted, primitive_name, source_text, span_of

LAUNCHES = frozenset({"Kernel", "ClusterKernel"})
"""``T.*`` context managers that launch a kernel."""
Found = tuple[KernelRef, ast.FunctionDef, ast.FunctionDef]
"""A kernel (block lines): its reference, the outer definition and the one holding the body."""


def tilelang_names(statements: list[ast.stmt]) -> dict[str, str]:
    """Local names bound to TileLang objects: ``{"T": "tilelang.language", "jit": "tilelang.jit"}``."""
    names: dict[str, str] = {}
    for stmt in statements:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "tilelang" or alias.name.startswith("tilelang."):
                    if alias.asname:
                        names[alias.asname] = alias.name
                    else:
                        names["tilelang"] = "tilelang"
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and (stmt.module or "").split(".")[0] == "tilelang":
            for alias in stmt.names:
                if alias.name == "*":
                    names.setdefault("autotune", "tilelang.autotuner.autotune")
                    names.setdefault("jit", "tilelang.jit")
                else:
                    names[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    if not names:
        names = {"tilelang": "tilelang", "T": "tilelang.language"}
    return names


def qualified(node: ast.AST, names: dict[str, str]) -> str:
    """The decorator's TileLang name (``tilelang.jit``), or ``""`` when it is not TileLang's."""
    text = dotted(node)
    head, _, rest = text.partition(".")
    if head not in names:
        return ""
    return f"{names[head]}.{rest}" if rest else names[head]


def _is_prim_func(decorator: ast.expr, names: dict[str, str]) -> bool:
    return qualified(decorator, names) in (
        "tilelang.language.prim_func",
        "tilelang.ascend.language.prim_func",
        "tvm.script.tir.prim_func",
    )


def _is_jit(decorator: ast.expr, names: dict[str, str]) -> bool:
    return qualified(decorator, names) in ("tilelang.jit", "tilelang.jit.jit", "tilelang.jit.lazy_jit")


_last_names: list[tuple[dict[str, str], tuple[tuple[str, str], ...]]] = []


def _names_key(names: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """``names`` as a memo key, sorted once per analysis (one dict serves every block of it)."""
    if _last_names and _last_names[0][0] is names:
        return _last_names[0][1]
    key = tuple(sorted(names.items()))
    _last_names[:] = [(names, key)]
    return key


def discover_block(block: ParsedBlock, aliases: frozenset[str], names: dict[str, str]) -> list[Found]:
    """The kernels defined at the top level of one block, computed once per block text."""
    key = ("discover", aliases, _names_key(names))
    found = block.memo.get(key)
    if found is None:
        found = list(_discover(block, aliases, names))
        block.keep(key, found)
    return found


def _discover(block: ParsedBlock, aliases: frozenset[str], names: dict[str, str]) -> Iterator[Found]:
    for stmt in block.statements:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        if any(_is_prim_func(d, names) for d in stmt.decorator_list):
            yield KernelRef(stmt.name, "prim_func", span_of(stmt), []), stmt, stmt
            continue
        is_jit = any(_is_jit(d, names) for d in stmt.decorator_list)
        params = parameters(stmt)
        inner = _inner_prim_func(stmt, block.nodes, names)
        if inner is not None:
            style = "jit-factory" if is_jit else "factory"
            yield KernelRef(stmt.name, style, span_of(stmt), params), stmt, inner
        elif is_jit and _launches(stmt, aliases):
            tensors = _tensor_params(stmt)
            consts = [Param(n) for n in _const_names(stmt, aliases)]
            params = consts + [p for p in params if p.name not in tensors]
            yield KernelRef(stmt.name, "jit-eager", span_of(stmt), params), stmt, stmt
        elif is_jit:
            yield KernelRef(stmt.name, "jit-factory", span_of(stmt), params), stmt, stmt


def parameters(func: ast.FunctionDef) -> list[Param]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [Param(a.arg, source_text(d)) for a, d in zip(positional, defaults, strict=True)]
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(arg.arg, source_text(default)))
    return params


def default_nodes(func: ast.FunctionDef) -> dict[str, ast.expr]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    found = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults, strict=True))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            found[arg.arg] = default
    return found


def within(node: ast.AST, func: ast.FunctionDef) -> bool:
    line = getattr(node, "lineno", None)
    return line is not None and func.lineno <= line <= (func.end_lineno or func.lineno)


def _inner_prim_func(func: ast.FunctionDef, nodes: list[ast.AST], names: dict[str, str]) -> ast.FunctionDef | None:
    """The ``@T.prim_func`` a factory returns (its last one if none is returned by name)."""
    found = [
        node
        for node in nodes
        if isinstance(node, ast.FunctionDef)
        and node is not func
        and within(node, func)
        and any(_is_prim_func(d, names) for d in node.decorator_list)
    ]
    if not found:
        return None
    returned = {
        n.value.id for n in nodes if isinstance(n, ast.Return) and isinstance(n.value, ast.Name) and within(n, func)
    }
    return next((f for f in found if f.name in returned), found[-1])


def autotune_configs(func: ast.FunctionDef, names: dict[str, str]) -> tuple[bool, ast.expr | None]:
    """Whether an ``@autotune`` decorates ``func``, and its ``configs`` expression when it has one."""
    for decorator in func.decorator_list:
        if not qualified(decorator, names).endswith(".autotune"):
            continue
        configs = None
        if isinstance(decorator, ast.Call):
            configs = next((k.value for k in decorator.keywords if k.arg == "configs"), None)
            configs = configs if configs is not None or not decorator.args else decorator.args[0]
        return True, configs
    return False, None


def tuned_names(func: ast.FunctionDef, names: dict[str, str]) -> frozenset[str] | None:
    """Parameters an ``@autotune`` decorator chooses: the keys of a literal ``configs=[{...}]``;
    every parameter (``None``) when the configs are computed; empty when it is not autotuned."""
    tuned, configs = autotune_configs(func, names)
    if not tuned:
        return frozenset()
    if not isinstance(configs, ast.List | ast.Tuple) or not all(isinstance(e, ast.Dict) for e in configs.elts):
        return None
    found: set[str] = set()
    for config in configs.elts:
        assert isinstance(config, ast.Dict)
        found.update(k.value for k in config.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
    return frozenset(found)


def returned_prim_func(
    outer: ast.FunctionDef,
    default: ast.FunctionDef,
    nodes: list[ast.AST],
    env: dict[str, Value],
    aliases: frozenset[str],
) -> ast.FunctionDef:
    """The inner prim_func a factory returns under ``env``: ``if num_split > 1: return main_split``
    is followed when its test is known; otherwise the one discovery picked."""
    inner = {n.name: n for n in nodes if isinstance(n, ast.FunctionDef) and n is not outer and within(n, outer)}
    body: list[ast.stmt] = list(outer.body)
    while body:
        stmt = body.pop(0)
        if isinstance(stmt, ast.Return):
            value = stmt.value
            return inner.get(value.id, default) if isinstance(value, ast.Name) else default
        if isinstance(stmt, ast.If):
            test = evaluate(stmt.test, env, aliases)
            if not isinstance(test, bool):
                return default
            body = list(stmt.body if test else stmt.orelse) + body
    return default


def _launches(func: ast.FunctionDef, aliases: frozenset[str]) -> bool:
    """Whether an eager body opens a ``T.Kernel``; one that does not returns a prim_func built elsewhere."""
    return any(
        isinstance(node, ast.With) and any(primitive_name(i.context_expr, aliases) in LAUNCHES for i in node.items)
        for node in ast.walk(func)
    )


def _const_names(func: ast.FunctionDef, aliases: frozenset[str]) -> list[str]:
    """Names bound by ``T.const("M N K")`` in an eager kernel body."""
    names: list[str] = []
    for stmt in func.body:
        value = stmt.value if isinstance(stmt, ast.Assign) else None
        if isinstance(value, ast.Call) and primitive_name(value, aliases) == "const" and value.args:
            first = value.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.extend(n for n in re.split(r"[\s,]+", first.value) if n)
    return names


def _tensor_params(func: ast.FunctionDef) -> set[str]:
    """Parameters an eager kernel annotates as tensors inside its body."""
    return {
        stmt.target.id
        for stmt in func.body
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is None
    }
