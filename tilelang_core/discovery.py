"""Find the kernels of a Python file and the concrete arguments to build them with, from source alone.

Discovery reads the AST and never executes anything: the worker uses its answer to decide what
to instantiate, and the static tier uses it to evaluate shapes. Arguments come from, in order of
precedence, a ``# tilescope: K=V ...`` directive above the def, a call in the same file (also inside
a ``main()`` whose own defaults, locals or ``argparse`` defaults supply the values), then defaults.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tilelang_core.model import Diagnostic, KernelRef, Param, Span

DIRECTIVE = re.compile(r"^\s*#\s*tilescope:\s*(?P<body>.*)$")
_UNKNOWN = object()


@dataclass(frozen=True)
class Instantiation:
    """How to build one kernel: the values to pass and where each came from."""

    kernel: KernelRef
    args: dict[str, Any]
    """Values to pass to the factory (directive and call-site values, and constants for ``T.const``)."""
    sources: dict[str, str]
    """For each resolved parameter, ``directive``, ``call`` or ``default``."""
    missing: list[str]
    target: str | None = None
    const_names: list[str] = field(default_factory=list)


def _span(node: ast.AST) -> Span:
    return Span(
        line=node.lineno,  # type: ignore[attr-defined]
        column=node.col_offset,  # type: ignore[attr-defined]
        end_line=getattr(node, "end_lineno", None),
        end_column=getattr(node, "end_col_offset", None),
    )


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _is_prim_func_decorator(node: ast.expr) -> bool:
    return _dotted(node).split(".")[-1] == "prim_func"


def _is_jit_decorator(node: ast.expr) -> bool:
    return _dotted(node).split(".")[-1] == "jit"


def _has_inner_prim_func(func: ast.FunctionDef) -> bool:
    return any(
        isinstance(node, ast.FunctionDef) and any(_is_prim_func_decorator(d) for d in node.decorator_list)
        for node in ast.walk(func)
        if node is not func
    )


def _const_names(func: ast.FunctionDef) -> list[str]:
    """Names bound by ``T.const("M N K")`` in an eager kernel body."""
    names: list[str] = []
    for node in ast.walk(func):
        if (
            isinstance(node, ast.Call)
            and _dotted(node.func).split(".")[-1] == "const"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.extend(n for n in re.split(r"[\s,]+", node.args[0].value) if n)
    return names


def _tensor_params(func: ast.FunctionDef) -> set[str]:
    """Parameters that an eager kernel annotates as tensors inside its body."""
    return {
        node.target.id
        for node in ast.walk(func)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is None
    }


def _params(func: ast.FunctionDef, source: str, skip: frozenset[str] | set[str] = frozenset()) -> list[Param]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults, strict=True), *zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    return [
        Param(name=a.arg, default=ast.get_source_segment(source, d) if d is not None else None)
        for a, d in pairs
        if a.arg not in skip
    ]


def _kernel_ref(func: ast.FunctionDef, source: str) -> KernelRef | None:
    decorators = func.decorator_list
    if any(_is_prim_func_decorator(d) for d in decorators):
        return KernelRef(name=func.name, style="prim_func", span=_span(func), params=[])
    is_jit = any(_is_jit_decorator(d) for d in decorators)
    if _has_inner_prim_func(func):
        return KernelRef(
            name=func.name,
            style="jit-factory" if is_jit else "factory",
            span=_span(func),
            params=_params(func, source),
        )
    if is_jit:
        consts = [Param(name=n) for n in _const_names(func)]
        return KernelRef(
            name=func.name,
            style="jit-eager",
            span=_span(func),
            params=consts + _params(func, source, skip=_tensor_params(func)),
        )
    return None


def kernel_defs(tree: ast.Module, source: str) -> Iterator[tuple[ast.FunctionDef, KernelRef]]:
    """Top-level kernel definitions, in file order."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            ref = _kernel_ref(node, source)
            if ref is not None:
                yield node, ref


def discover(source: str, path: str = "<string>") -> list[KernelRef]:
    """The kernels a file defines; a file that does not parse defines none (the caller reports why)."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return []
    return [ref for _, ref in kernel_defs(tree, source)]


def syntax_diagnostic(source: str, path: str = "<string>") -> Diagnostic | None:
    try:
        ast.parse(source, filename=path)
    except SyntaxError as err:
        line = err.lineno or 1
        column = max((err.offset or 1) - 1, 0)
        return Diagnostic(
            severity="error",
            message=f"Syntax error: {err.msg}",
            span=Span(line=line, column=column, end_line=err.end_lineno or line, end_column=err.end_offset),
            code="syntax-error",
        )
    return None


# --- argument resolution ------------------------------------------------------------------------

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
}


def evaluate(node: ast.AST, env: dict[str, Any]) -> Any:
    """Evaluate a constant expression over ``env``; ``_UNKNOWN`` for anything else. Never executes code."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Attribute):
        return env.get(_dotted(node), _UNKNOWN)
    if isinstance(node, ast.Tuple | ast.List):
        items = [evaluate(e, env) for e in node.elts]
        return _UNKNOWN if any(i is _UNKNOWN for i in items) else tuple(items)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = evaluate(node.operand, env)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
        return _UNKNOWN
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = evaluate(node.left, env), evaluate(node.right, env)
        numeric = (int, float)
        if isinstance(left, numeric) and isinstance(right, numeric):
            try:
                result = _BINOPS[type(node.op)](left, right)
            except (ArithmeticError, ValueError):
                return _UNKNOWN
            if isinstance(result, int) and abs(result) > 1 << 62:
                return _UNKNOWN
            return result
    return _UNKNOWN


def _assignments(body: list[ast.stmt], env: dict[str, Any]) -> dict[str, Any]:
    """Fold simple ``NAME = <constant expr>`` statements of a body into ``env``."""
    env = dict(env)
    for stmt in body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            value = evaluate(stmt.value, env)
            if isinstance(target, ast.Name) and value is not _UNKNOWN:
                env[target.id] = value
            elif (
                isinstance(target, ast.Tuple)
                and isinstance(value, tuple)
                and len(value) == len(target.elts)
                and all(isinstance(t, ast.Name) for t in target.elts)
            ):
                env.update({t.id: v for t, v in zip(target.elts, value, strict=True)})  # type: ignore[attr-defined]
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            value = evaluate(stmt.value, env)
            if value is not _UNKNOWN:
                env[stmt.target.id] = value
    return env


def _argparse_defaults(tree: ast.Module) -> dict[str, Any]:
    """``args.M`` → default, from ``parser.add_argument("--M", default=...)`` calls."""
    found: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            dest = next((k.value for k in node.keywords if k.arg == "dest"), None)
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if not flags or default is None:
                continue
            name = evaluate(dest, {}) if dest is not None else flags[-1].lstrip("-").replace("-", "_")
            value = evaluate(default, {})
            if isinstance(name, str) and value is not _UNKNOWN:
                for prefix in ("args", "opts", "options", "cfg", "config"):
                    found[f"{prefix}.{name}"] = value
    return found


def _function_env(func: ast.FunctionDef, env: dict[str, Any]) -> dict[str, Any]:
    """The constants visible inside ``func``: its parameters' defaults and its simple assignments."""
    scope = dict(env)
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
        value = evaluate(default, scope)
        if value is not _UNKNOWN:
            scope[arg.arg] = value
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            value = evaluate(default, scope)
            if value is not _UNKNOWN:
                scope[arg.arg] = value
    return _assignments(func.body, scope)


def _call_sites(tree: ast.Module, name: str, module_env: dict[str, Any]) -> list[tuple[ast.Call, dict[str, Any]]]:
    """Calls that build kernel ``name`` (``name(...)``, ``name.compile(...)``, ``name.get_tir(...)``),
    each with the constants in scope where it is made."""
    found: list[tuple[ast.Call, dict[str, Any]]] = []

    class Visitor(ast.NodeVisitor):
        def __init__(self) -> None:
            self.env = module_env

        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            if node.name == name:
                return
            outer, self.env = self.env, _function_env(node, self.env)
            self.generic_visit(node)
            self.env = outer

        def visit_Call(self, node: ast.Call) -> None:
            if _builds(node, name):
                found.append((node, self.env))
            self.generic_visit(node)

    Visitor().visit(tree)
    return found


def _builds(call: ast.Call, name: str) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == name
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("compile", "get_tir", "get_kernel_source")
        and isinstance(func.value, ast.Name)
        and func.value.id == name
    )


def _directive(lines: list[str], node: ast.FunctionDef) -> dict[str, str]:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    values: dict[str, str] = {}
    index = first - 2
    while index >= 0:
        match = DIRECTIVE.match(lines[index])
        if not match:
            break
        for token in match.group("body").split():
            key, sep, value = token.partition("=")
            if sep:
                values.setdefault(key.strip(), value.strip())
        index -= 1
    return values


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def instantiations(source: str, path: str = "<string>") -> list[Instantiation]:
    """Each discovered kernel with the arguments to build it; a file that does not parse has none."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError:
        return []
    lines = source.splitlines()
    module_env = {**_argparse_defaults(tree), **_assignments(tree.body, {})}
    result: list[Instantiation] = []
    for node, ref in kernel_defs(tree, source):
        result.append(_instantiate(tree, lines, node, ref, module_env))
    return result


def _instantiate(
    tree: ast.Module, lines: list[str], node: ast.FunctionDef, ref: KernelRef, module_env: dict[str, Any]
) -> Instantiation:
    if ref.style == "prim_func":
        return Instantiation(kernel=ref, args={}, sources={}, missing=[])
    directive = _directive(lines, node)
    target = directive.pop("target", None)
    names = [p.name for p in ref.params]
    const_names = _const_names(node) if ref.style == "jit-eager" else []
    positional = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
    if ref.style == "jit-eager":
        positional = [p for p in positional if p not in _tensor_params(node)]

    args: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for call, env in _call_sites(tree, ref.name, module_env):
        values: dict[str, Any] = {}
        if not any(isinstance(a, ast.Starred) for a in call.args) and ref.style != "jit-eager":
            for param, arg in zip(positional, call.args, strict=False):
                values[param] = evaluate(arg, env)
        for keyword in call.keywords:
            if keyword.arg is not None:
                values[keyword.arg] = evaluate(keyword.value, env)
        known = {k: v for k, v in values.items() if v is not _UNKNOWN and k in names}
        if known:
            args.update(known)
            sources.update(dict.fromkeys(known, "call"))
            break
    for key, text in directive.items():
        if key in names:
            args[key] = _literal(text)
            sources[key] = "directive"
    missing = []
    for param in ref.params:
        if param.name in args:
            continue
        if param.default is not None:
            sources[param.name] = "default"
        else:
            missing.append(param.name)
    return Instantiation(
        kernel=ref, args=args, sources=sources, missing=missing, target=target, const_names=const_names
    )
