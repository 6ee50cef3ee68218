"""Find the kernels of a parsed file and read each one's buffers, launch, pipelines and tile ops.

Covers every style TileLang 0.1.15 accepts: factories returning an inner ``@T.prim_func``
(``@tilelang.jit`` or not), the eager ``@tilelang.jit`` style (``T.const``, tensors annotated in the
body, ``T.empty`` outputs) and module-level prim_funcs. Values come, in order, from the directive
comment above the def, a call in the same file, then defaults; what stays unknown stays symbolic.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Access, Buffer, Diagnostic, Dim, KernelRef, Param, Span
from tilescope.core.static import checks
from tilescope.core.static.evaluate import Sym, Value, as_dim, dtype_name, evaluate, is_known_int
from tilescope.core.static.records import (
    Binding,
    BufferDecl,
    LaunchDecl,
    Occurrence,
    PipelineDecl,
    StaticKernel,
)
from tilescope.core.static.recover import ParsedBlock

_DIRECTIVE = re.compile(r"#\s*tilescope:\s*(.*)")
_SCOPES = {
    "alloc_shared": "shared.dyn",
    "alloc_fragment": "local.fragment",
    "alloc_local": "local",
    "alloc_global": "global",
    "alloc_tmem": "shared.tmem",
    "alloc_reducer": "local.fragment",
}
_TENSOR_ANNOTATIONS = {"Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer", "LocalBuffer"}
_ANNOTATION_SCOPES = {
    "SharedBuffer": "shared.dyn",
    "FragmentBuffer": "local.fragment",
    "LocalBuffer": "local",
}
_WRITE_FIRST = {"fill", "clear"}
_READ_WRITE = {"copy": (0, 1), "atomic_add": (1, 0), "atomic_max": (1, 0), "atomic_min": (1, 0)}


def span_of(node: ast.AST) -> Span:
    return Span(
        node.lineno,  # type: ignore[attr-defined]
        node.col_offset,  # type: ignore[attr-defined]
        getattr(node, "end_lineno", None),
        getattr(node, "end_col_offset", None),
    )


@dataclass
class ModuleContext:
    """What the whole file contributes to each kernel: aliases, constants, directives, calls."""

    aliases: frozenset[str]
    env: dict[str, Value]
    lines: list[str]
    target: str
    blocks: list[ParsedBlock] = field(default_factory=list)

    @functools.cached_property
    def env_key(self) -> tuple[object, ...]:
        """The module env as a hashable cache key."""
        return (self.aliases, tuple(sorted(self.env.items(), key=_item_key)))


def module_context(blocks: list[ParsedBlock], lines: list[str], target: str) -> ModuleContext:
    statements = [stmt for block in blocks for stmt in block.statements]
    aliases: set[str] = set()
    for stmt in statements:
        if isinstance(stmt, ast.Import):
            aliases.update(a.asname or a.name for a in stmt.names if a.name == "tilelang.language")
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "tilelang":
            aliases.update(a.asname or a.name for a in stmt.names if a.name == "language")
    frozen_aliases = frozenset(aliases or {"T"})
    env: dict[str, Value] = {}
    for block in blocks:
        env.update(_argparse_defaults(block, frozen_aliases))
    for stmt in statements:
        _bind_assignment(stmt, env, frozen_aliases)
    return ModuleContext(frozen_aliases, env, lines, target, blocks)


def _argparse_defaults(block: ParsedBlock, aliases: frozenset[str]) -> dict[str, Value]:
    """``args.M`` → default, from ``parser.add_argument("--M", default=...)`` calls."""
    found = block.memo.get("argparse")
    if found is None:
        found = {}
        for node in block.nodes:
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument":
                continue
            flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            keywords = {k.arg: k.value for k in node.keywords}
            if not flags or "default" not in keywords:
                continue
            dest = keywords.get("dest")
            name = dest.value if isinstance(dest, ast.Constant) else flags[-1].lstrip("-").replace("-", "_")
            value = evaluate(keywords["default"], {}, aliases)
            if not isinstance(value, Sym) and isinstance(name, str):
                for prefix in ("args", "opts", "options", "cfg", "config"):
                    found[f"{prefix}.{name}"] = value
        block.memo["argparse"] = found
    return found  # type: ignore[return-value]


def _bind_assignment(stmt: ast.stmt, env: dict[str, Value], aliases: frozenset[str]) -> None:
    """Record ``NAME = value`` (and tuple unpacking) when the value is known."""
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        env[stmt.target.id] = evaluate(stmt.value, env, aliases)
        return
    if not isinstance(stmt, ast.Assign):
        return
    value = evaluate(stmt.value, env, aliases)
    for target in stmt.targets:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts):
            for element, item in zip(target.elts, value, strict=True):
                if isinstance(element, ast.Name):
                    env[element.id] = item


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    if isinstance(node, ast.Call):
        return dotted(node.func)
    return ""


def primitive_name(node: ast.AST, aliases: frozenset[str]) -> str | None:
    """``gemm`` for ``T.gemm`` / ``T.gemm(...)``, else ``None``."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
        return node.attr
    return None


def _is_prim_func(decorator: ast.expr) -> bool:
    return dotted(decorator).split(".")[-1] == "prim_func"


def _is_jit(decorator: ast.expr) -> bool:
    return dotted(decorator).split(".")[-1] == "jit"


def discover(
    context: ModuleContext,
) -> Iterator[tuple[KernelRef, ast.FunctionDef, ast.FunctionDef, ParsedBlock]]:
    """Each kernel as (reference, outer definition, the definition holding the body, its block)."""
    for block in context.blocks:
        key = ("discover", context.aliases)
        found = block.memo.get(key)
        if found is None:
            found = list(_discover_block(block, context.aliases))
            block.memo[key] = found
        for ref, outer, body in found:  # type: ignore[attr-defined]
            yield ref, outer, body, block


def _discover_block(
    block: ParsedBlock, aliases: frozenset[str]
) -> Iterator[tuple[KernelRef, ast.FunctionDef, ast.FunctionDef]]:
    for stmt in block.statements:
        if not isinstance(stmt, ast.FunctionDef):
            continue
        if any(_is_prim_func(d) for d in stmt.decorator_list):
            yield KernelRef(stmt.name, "prim_func", span_of(stmt), []), stmt, stmt
            continue
        is_jit = any(_is_jit(d) for d in stmt.decorator_list)
        params = _params(stmt)
        inner = _inner_prim_func(stmt, block.nodes)
        if inner is not None:
            style = "jit-factory" if is_jit else "factory"
            yield KernelRef(stmt.name, style, span_of(stmt), params), stmt, inner
        elif is_jit:
            tensors = _tensor_params(stmt)
            consts = [Param(n) for n in _const_names(stmt, aliases)]
            params = consts + [p for p in params if p.name not in tensors]
            yield KernelRef(stmt.name, "jit-eager", span_of(stmt), params), stmt, stmt


def _params(func: ast.FunctionDef) -> list[Param]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [Param(a.arg, None if d is None else ast.unparse(d)) for a, d in zip(positional, defaults, strict=True)]
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(Param(arg.arg, None if default is None else ast.unparse(default)))
    return params


def _inner_prim_func(func: ast.FunctionDef, nodes: list[ast.AST]) -> ast.FunctionDef | None:
    """The ``@T.prim_func`` a factory returns (its last one if none is returned by name)."""
    inside = [n for n in nodes if _within(n, func)]
    found = [
        node
        for node in inside
        if isinstance(node, ast.FunctionDef) and node is not func and any(_is_prim_func(d) for d in node.decorator_list)
    ]
    if not found:
        return None
    returned = {n.value.id for n in inside if isinstance(n, ast.Return) and isinstance(n.value, ast.Name)}
    return next((f for f in found if f.name in returned), found[-1])


def _within(node: ast.AST, func: ast.FunctionDef) -> bool:
    line = getattr(node, "lineno", None)
    return line is not None and func.lineno <= line <= (func.end_lineno or func.lineno)


def _default_nodes(func: ast.FunctionDef) -> dict[str, ast.expr]:
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    found = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults) :]], args.defaults, strict=True))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is not None:
            found[arg.arg] = default
    return found


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


def directive(lines: list[str], func: ast.FunctionDef) -> dict[str, str]:
    """The ``# tilescope: K=V ...`` comment just above the def or its decorators."""
    first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
    index = first - 2
    while 0 <= index < len(lines):
        text = lines[index].strip()
        match = _DIRECTIVE.match(text)
        if match:
            return dict(item.split("=", 1) for item in match.group(1).split() if "=" in item)
        if not text.startswith("#"):
            break
        index -= 1
    return {}


def _directive_value(text: str) -> Value:
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip("\"'")


def call_sites(context: ModuleContext, name: str) -> list[tuple[ast.Call, dict[str, Value]]]:
    """Calls of ``name(...)`` / ``name.compile(...)`` in the file, each with the env around it."""
    found: list[tuple[ast.Call, dict[str, Value]]] = []
    for block in context.blocks:
        calls = _block_calls(block).get(name)
        if calls:
            env = _block_env(block, context)
            found.extend((call, env) for call in calls)
    found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    return found


def _block_calls(block: ParsedBlock) -> dict[str, list[ast.Call]]:
    calls = block.memo.get("calls")
    if calls is None:
        calls = {}
        for node in block.nodes:
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("compile", "get_tir")
                and isinstance(func.value, ast.Name)
            ):
                calls.setdefault(func.value.id, []).append(node)
            elif isinstance(func, ast.Name):
                calls.setdefault(func.id, []).append(node)
        block.memo["calls"] = calls
    return calls  # type: ignore[return-value]


def _block_env(block: ParsedBlock, context: ModuleContext) -> dict[str, Value]:
    """The module env plus the block's own defaults and assignments (``def main(M=4096)``)."""
    key = ("env", context.env_key)
    cached = block.memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    env = dict(context.env)
    for stmt in block.statements:
        if isinstance(stmt, ast.FunctionDef):
            for name, default in _default_nodes(stmt).items():
                env[name] = evaluate(default, env, context.aliases)
    for node in block.nodes:
        if isinstance(node, ast.Assign):
            _bind_assignment(node, env, context.aliases)
    block.memo[key] = env
    return env


def bindings(ref: KernelRef, outer: ast.FunctionDef, context: ModuleContext) -> tuple[list[Binding], str]:
    """Each factory parameter's value and origin, and the kernel's target."""
    written = directive(context.lines, outer)
    target = written.pop("target", context.target)
    calls = call_sites(context, ref.name)
    result: list[Binding] = []
    positional = [a.arg for a in [*outer.args.posonlyargs, *outer.args.args]]
    defaults = _default_nodes(outer)
    for param in ref.params:
        if param.name in written:
            result.append(Binding(param.name, _directive_value(written[param.name]), "directive"))
            continue
        value = _from_calls(param.name, positional, calls, context.aliases)
        if value is not None:
            result.append(Binding(param.name, value, "call"))
        elif param.name in defaults:
            default = evaluate(defaults[param.name], context.env, context.aliases)
            known = None if isinstance(default, Sym | tuple) else default
            result.append(Binding(param.name, known, "default" if known is not None else "unknown"))
        else:
            result.append(Binding(param.name, None, "unknown"))
    for name, text in written.items():
        if name not in {p.name for p in ref.params}:
            result.append(Binding(name, _directive_value(text), "directive"))
    return result, target


def _from_calls(
    name: str, positional: list[str], calls: list[tuple[ast.Call, dict[str, Value]]], aliases: frozenset[str]
) -> Value:
    for call, env in calls:
        node: ast.expr | None = None
        for keyword in call.keywords:
            if keyword.arg == name:
                node = keyword.value
        if node is None and name in positional:
            index = positional.index(name)
            plain = [a for a in call.args if not isinstance(a, ast.Starred)]
            if index < len(plain) and len(plain) == len(call.args):
                node = plain[index]
        if node is None:
            continue
        value = evaluate(node, env, aliases)
        if not isinstance(value, Sym | tuple) and value is not None:
            return value
    return None


@dataclass(frozen=True)
class Operand:
    """A tile op operand: the buffer it names and the extents of the region it covers."""

    buffer: BufferDecl
    node: ast.expr
    shape: list[Value] | None
    """Region extents; ``None`` when the region is a start point whose extent the op infers."""


class KernelReader:
    """Walks one kernel body once, collecting buffers, launch, pipelines, accesses and checks."""

    def __init__(self, ref: KernelRef, env: dict[str, Value], aliases: frozenset[str], target: str) -> None:
        self.ref = ref
        self.env = env
        self.aliases = aliases
        self.target = target
        self.buffers: dict[str, BufferDecl] = {}
        self.stage_of: dict[str, int] = {}
        self.launch: LaunchDecl | None = None
        self.pipelines: list[PipelineDecl] = []
        self.accesses: list[Access] = []
        self.diagnostics: list[Diagnostic] = []
        self.writes: set[tuple[int, int]] = set()

    def read_params(self, func: ast.FunctionDef) -> None:
        for arg in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]:
            if arg.annotation is not None:
                self._declare_annotated(arg.arg, arg.annotation, _arg_span(arg))

    def read_body(self, body: Iterable[ast.stmt], pipeline: PipelineDecl | None = None) -> None:
        for stmt in body:
            self._statement(stmt, pipeline)

    def _statement(self, stmt: ast.stmt, pipeline: PipelineDecl | None) -> None:
        if isinstance(stmt, ast.Assign):
            self._assign(stmt)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if not self._declare_annotated(stmt.target.id, stmt.annotation, span_of(stmt.target)):
                _bind_assignment(stmt, self.env, self.aliases)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                if primitive_name(item.context_expr, self.aliases) == "Kernel":
                    self._kernel(item.context_expr, item.optional_vars)
            self.read_body(stmt.body, pipeline)
        elif isinstance(stmt, ast.For):
            self._for(stmt, pipeline)
        elif isinstance(stmt, ast.If | ast.While):
            self.read_body(stmt.body, pipeline)
            self.read_body(stmt.orelse, pipeline)
        elif isinstance(stmt, ast.Try):
            self.read_body(stmt.body, pipeline)
            for handler in stmt.handlers:
                self.read_body(handler.body, pipeline)
            self.read_body(stmt.finalbody, pipeline)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._op(stmt.value, pipeline)

    def _assign(self, stmt: ast.Assign) -> None:
        value = stmt.value
        name = primitive_name(value, self.aliases)
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if isinstance(value, ast.Call) and isinstance(target, ast.Name) and name is not None:
            if name in _SCOPES or name == "alloc_var":
                self._allocate(target, value, name)
                return
            if name == "empty":
                self._declare_empty(target, value)
                return
        if isinstance(value, ast.Call) and name == "const":
            self._const(stmt)
            return
        if isinstance(value, ast.Call) and name is not None:
            self._op(value, None)
        _bind_assignment(stmt, self.env, self.aliases)

    def _const(self, stmt: ast.Assign) -> None:
        targets = stmt.targets[0]
        names = [e.id for e in targets.elts if isinstance(e, ast.Name)] if isinstance(targets, ast.Tuple) else []
        if isinstance(targets, ast.Name):
            names = [targets.id]
        for name in names:
            if name not in self.env or isinstance(self.env[name], Sym):
                self.env[name] = Sym(name)

    def _shape(self, node: ast.expr | None) -> list[Value]:
        value = evaluate(node, self.env, self.aliases)
        if isinstance(value, tuple):
            return list(value)
        return [value]

    def _dtype(self, node: ast.expr | None, fallback: str) -> str:
        if node is None:
            return fallback
        value = evaluate(node, self.env, self.aliases)
        return dtype_name(value) or str(value)

    def _add(self, decl: BufferDecl) -> None:
        self.buffers[decl.buffer.name] = decl

    def _make(self, name: str, shape: list[Value], dtype: str, scope: str, line: int, is_param: bool) -> Buffer:
        dims: list[Dim] = [as_dim(v) for v in shape]
        return Buffer(name, dims, dtype, scope, _bytes(shape, dtype), line, is_param)

    def _allocate(self, target: ast.Name, call: ast.Call, allocator: str) -> None:
        args = _arguments(call, ["dtype", "init"] if allocator == "alloc_var" else ["shape", "dtype", "scope"])
        if allocator == "alloc_var":
            shape: list[Value] = [1]
            dtype = self._dtype(args.get("dtype"), "int32")
            scope_node = args.get("scope")
            scope = "local.var"
        else:
            shape = self._shape(args.get("shape"))
            dtype = self._dtype(args.get("dtype"), "float32")
            scope_node = args.get("scope")
            scope = _SCOPES[allocator]
        if scope_node is not None:
            scope_value = evaluate(scope_node, self.env, self.aliases)
            scope = scope_value if isinstance(scope_value, str) else scope
        buffer = self._make(target.id, shape, dtype, scope, target.lineno, False)
        written = _source_text(args.get("shape")) if allocator != "alloc_var" else None
        self._add(BufferDecl(buffer, span_of(target), span_of(call), allocator, written=written))

    def _declare_empty(self, target: ast.Name, call: ast.Call) -> None:
        shape_nodes = list(call.args)
        keywords = {k.arg: k.value for k in call.keywords}
        dtype_node = keywords.get("dtype")
        if shape_nodes and isinstance(shape_nodes[0], ast.Tuple | ast.List):
            shape = self._shape(shape_nodes[0])
            dtype_node = shape_nodes[1] if len(shape_nodes) > 1 else dtype_node
        else:
            shape = [evaluate(n, self.env, self.aliases) for n in shape_nodes]
        dtype = self._dtype(dtype_node, "float32")
        buffer = self._make(target.id, shape, dtype, "global", target.lineno, True)
        written = ", ".join(_source_text(n) or "?" for n in shape_nodes[:1] if isinstance(n, ast.Tuple | ast.List))
        self._add(BufferDecl(buffer, span_of(target), span_of(call), "empty", written=written or None))

    def _declare_annotated(self, name: str, annotation: ast.expr, name_span: Span) -> bool:
        kind = primitive_name(annotation.value if isinstance(annotation, ast.Subscript) else annotation, self.aliases)
        if kind not in _TENSOR_ANNOTATIONS:
            return False
        if isinstance(annotation, ast.Subscript):
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            shape_node, dtype_node = parts[0], parts[1] if len(parts) > 1 else None
        elif isinstance(annotation, ast.Call):
            args = _arguments(annotation, ["shape", "dtype"])
            shape_node, dtype_node = args.get("shape"), args.get("dtype")
        else:
            return False
        scope = _ANNOTATION_SCOPES.get(kind, "global")
        shape = self._shape(shape_node)
        buffer = self._make(name, shape, self._dtype(dtype_node, "float32"), scope, name_span.line, scope == "global")
        self._add(BufferDecl(buffer, name_span, span_of(annotation), kind, written=_source_text(shape_node)))
        return True

    def _kernel(self, call: ast.expr, names: ast.expr | None) -> None:
        assert isinstance(call, ast.Call)
        grid = [as_dim(evaluate(a, self.env, self.aliases)) for a in call.args if not isinstance(a, ast.Starred)]
        keywords = {k.arg: k.value for k in call.keywords}
        threads_value = evaluate(keywords["threads"], self.env, self.aliases) if "threads" in keywords else 128
        if isinstance(threads_value, tuple):
            product = 1
            for item in threads_value:
                product = product * item if is_known_int(item) and is_known_int(product) else Sym(str(threads_value))
            threads_value = product
        if self.launch is None:
            self.launch = LaunchDecl(grid, as_dim(threads_value), span_of(call))
        if names is not None:
            for node in ast.walk(names):
                if isinstance(node, ast.Name):
                    self.env[node.id] = Sym(node.id)

    def _for(self, stmt: ast.For, pipeline: PipelineDecl | None) -> None:
        name = primitive_name(stmt.iter, self.aliases)
        loop_var = ast.unparse(stmt.target)
        for node in ast.walk(stmt.target):
            if isinstance(node, ast.Name):
                self.env[node.id] = Sym(node.id)
        if name == "Pipelined" and isinstance(stmt.iter, ast.Call):
            args = _arguments(stmt.iter, ["start", "stop", "num_stages"])
            stages = evaluate(args["num_stages"], self.env, self.aliases) if "num_stages" in args else 0
            pipeline = PipelineDecl(loop_var, as_dim(stages), span_of(stmt.iter))
            self.pipelines.append(pipeline)
        if name == "Parallel":
            self._parallel(stmt)
        self.read_body(stmt.body, pipeline)
        self.read_body(stmt.orelse, pipeline)

    def _parallel(self, stmt: ast.For) -> None:
        reads: list[str] = []
        writes: list[str] = []
        for node in ast.walk(stmt):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.buffers:
                bucket = writes if isinstance(node.ctx, ast.Store) else reads
                if isinstance(node.ctx, ast.Store):
                    self.writes.add((node.value.lineno, node.value.col_offset))
                if node.value.id not in bucket:
                    bucket.append(node.value.id)
        self.accesses.append(Access("parallel", stmt.lineno, reads, writes))

    def operand(self, node: ast.expr) -> Operand | None:
        if isinstance(node, ast.Name) and node.id in self.buffers:
            decl = self.buffers[node.id]
            return Operand(decl, node, list(_values(decl.buffer.shape)))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.buffers:
            decl = self.buffers[node.value.id]
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if not any(isinstance(i, ast.Slice) for i in items):
                return Operand(decl, node, None)
            extents: list[Value] = []
            for item in items:
                if isinstance(item, ast.Slice):
                    lower = evaluate(item.lower, self.env, self.aliases) if item.lower is not None else 0
                    upper = (
                        evaluate(item.upper, self.env, self.aliases)
                        if item.upper is not None
                        else _values([decl.buffer.shape[len(extents)]])[0]
                        if len(extents) < len(decl.buffer.shape)
                        else Sym("?")
                    )
                    extents.append(upper - lower if is_known_int(upper) and is_known_int(lower) else Sym("?"))
                else:
                    extents.append(1)
            return Operand(decl, node, extents)
        return None

    def _op(self, call: ast.Call, pipeline: PipelineDecl | None) -> None:
        name = primitive_name(call, self.aliases)
        if name is None:
            return
        operands = [self.operand(a) for a in call.args]
        found = [o for o in operands if o is not None]
        if not found:
            return
        reads: list[str] = []
        writes: list[str] = []
        if name in _READ_WRITE or name.startswith("reduce") or name.startswith("cum"):
            source, dest = _READ_WRITE.get(name, (0, 1))
            reads = [o.buffer.buffer.name for o in operands[source : source + 1] if o]
            writes = [o.buffer.buffer.name for o in operands[dest : dest + 1] if o]
        elif name.startswith("gemm") or name.endswith("gemm"):
            reads = [o.buffer.buffer.name for o in operands[:3] if o]
            writes = [o.buffer.buffer.name for o in operands[2:3] if o]
        elif name in _WRITE_FIRST:
            writes = [o.buffer.buffer.name for o in operands[:1] if o]
        else:
            reads = [o.buffer.buffer.name for o in found]
        for operand in found:
            if operand.buffer.buffer.name in writes:
                base = operand.node.value if isinstance(operand.node, ast.Subscript) else operand.node
                self.writes.add((base.lineno, base.col_offset))
        if pipeline is not None and is_known_int(pipeline.num_stages) and int(pipeline.num_stages) > 1:
            for written in writes:
                if self.buffers[written].buffer.scope.startswith("shared"):
                    self.stage_of[written] = int(pipeline.num_stages)
        self.accesses.append(Access(name, call.lineno, reads, writes, pipelined=pipeline is not None))
        self.diagnostics.extend(checks.check_op(name, call, operands, self.ref.name))

    def finish(self, span: Span, body_def: ast.FunctionDef, bound: list[Binding], nodes: list[ast.AST]) -> StaticKernel:
        buffers = []
        for decl in self.buffers.values():
            stages = self.stage_of.get(decl.buffer.name, 1)
            buffers.append(replace(decl, stages=stages))
        shared = _shared_bytes(buffers)
        kernel = StaticKernel(
            ref=self.ref,
            span=span,
            bindings=bound,
            buffers=buffers,
            launch=self.launch,
            pipelines=self.pipelines,
            accesses=self.accesses,
            occurrences=self._occurrences(body_def, nodes),
            shared_bytes=shared,
            target=self.target,
        )
        self.diagnostics.extend(checks.check_kernel(kernel))
        return kernel

    def _occurrences(self, func: ast.FunctionDef, nodes: list[ast.AST]) -> list[Occurrence]:
        definitions = {(d.name_span.line, d.name_span.column) for d in self.buffers.values()}
        found: list[Occurrence] = []
        for node in (n for n in nodes if _within(n, func)):
            if isinstance(node, ast.arg) and node.arg in self.buffers:
                span = _arg_span(node)
                found.append(Occurrence(node.arg, span, "definition"))
            elif isinstance(node, ast.Name) and node.id in self.buffers:
                key = (node.lineno, node.col_offset)
                role = "definition" if key in definitions else "write" if key in self.writes else "read"
                found.append(Occurrence(node.id, span_of(node), role))
        found.sort(key=lambda o: (o.span.line, o.span.column))
        return found


def _source_text(node: ast.expr | None) -> str | None:
    return None if node is None else ast.unparse(node)


def _arg_span(arg: ast.arg) -> Span:
    return Span(arg.lineno, arg.col_offset, arg.lineno, arg.col_offset + len(arg.arg))


def _values(dims: list[Dim]) -> list[Value]:
    return [d if isinstance(d, int) else Sym(d) for d in dims]


def _arguments(call: ast.Call, names: list[str]) -> dict[str, ast.expr]:
    """Map a call's arguments onto parameter names, positionally then by keyword."""
    found: dict[str, ast.expr] = {}
    for name, arg in zip(names, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        found[name] = arg
    for keyword in call.keywords:
        if keyword.arg is not None:
            found[keyword.arg] = keyword.value
    return found


def _bytes(shape: list[Value], dtype: str) -> int | None:
    bits = dtype_bits(dtype)
    if bits is None or not all(is_known_int(d) for d in shape):
        return None
    count = 1
    for dim in shape:
        count *= dim
    return count * bits // 8


def _shared_bytes(buffers: list[BufferDecl]) -> int | None:
    total = 0
    for decl in buffers:
        if not decl.buffer.scope.startswith("shared") or decl.buffer.scope == "shared.tmem":
            continue
        if decl.buffer.bytes is None:
            return None
        total += decl.buffer.bytes * decl.stages
    return total


def read_kernel(
    ref: KernelRef,
    outer: ast.FunctionDef,
    body_def: ast.FunctionDef,
    context: ModuleContext,
    block: ParsedBlock,
) -> tuple[StaticKernel, list[Diagnostic]]:
    """Evaluate one discovered kernel; unchanged text under unchanged values is read once."""
    bound, target = bindings(ref, outer, context)
    key = (
        "kernel",
        ref.name,
        ref.style,
        tuple(ref.params),
        tuple(bound),
        target,
        context.env_key,
    )
    cached = block.memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    env = dict(context.env)
    for binding in bound:
        env[binding.name] = binding.value if binding.value is not None else Sym(binding.name)
    reader = KernelReader(ref, env, context.aliases, target)
    if body_def is not outer:
        _read_factory_prelude(outer, body_def, env, context.aliases)
    reader.read_params(body_def)
    reader.read_body(body_def.body)
    kernel = reader.finish(span_of(outer), body_def, bound, block.nodes)
    result = (kernel, reader.diagnostics)
    block.memo[key] = result
    return result


def _item_key(item: tuple[str, Value]) -> str:
    return item[0]


def _read_factory_prelude(
    outer: ast.FunctionDef, inner: ast.FunctionDef, env: dict[str, Value], aliases: frozenset[str]
) -> None:
    """Assignments in the factory before the kernel (``dtype = T.float16``) feed the kernel's env."""
    for stmt in outer.body:
        if stmt is inner or stmt.lineno >= inner.lineno:
            break
        _bind_assignment(stmt, env, aliases)
