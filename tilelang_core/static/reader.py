"""One kernel body read once: its buffers, launch, pipelines and tile-op accesses, with the checks
of each tile op's operands. Lines are the block's own (``recover.ParsedBlock``)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from tilescope.core.codes import diagnostic
from tilescope.core.dtypes import dtype_bits
from tilescope.core.model import Access, Buffer, Diagnostic, Dim, KernelRef, Span
from tilescope.core.static import checks
from tilescope.core.static.context import bind_assignment
from tilescope.core.static.discover import LAUNCHES, within
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.operand import Operand, operand_of
from tilescope.core.static.records import (
    Binding,
    BufferDecl,
    LaunchDecl,
    Occurrence,
    PipelineDecl,
    QuickFix,
    RegionDecl,
    StaticKernel,
    TextEdit,
)
from tilescope.core.static.shared_plan import planned_shared_bytes
from tilescope.core.static.shift import Placed
from tilescope.core.static.symbolic import Sym, Value, as_dim, dtype_name, is_known_int
from tilescope.core.static.syntax import arg_span, arguments, keyword, primitive_name, source_text, span_of

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
VECTOR_REGIONS = frozenset({"SimtVF", "SimdVF"})
"""The Ascend dialect's vector regions: SIMT threads, or SIMD vector registers."""
REGIONS = VECTOR_REGIONS | {"Cube", "Vector"}
"""With the sections of a mixed kernel written by hand: the Cube core's (AIC) and the Vector cores' (AIV)."""
_WRITE_FIRST = {"fill", "clear"}
_READ_WRITE = {"copy": (0, 1), "atomic_add": (1, 0), "atomic_max": (1, 0), "atomic_min": (1, 0)}


class KernelReader:
    """Walks one kernel body once, collecting buffers, launch, pipelines, accesses and checks."""

    def __init__(
        self,
        ref: KernelRef,
        env: dict[str, Value],
        aliases: frozenset[str],
        target: str,
        scopes: dict[str, str] | None = None,
        dialect: str | None = None,
    ) -> None:
        self.ref = ref
        self.scopes = _SCOPES | (scopes or {})
        """Allocators and their scopes: TileLang's common ones, and the file's dialect's (``alloc_l1``)."""
        self.dialect = dialect
        self.regions: list[RegionDecl] = []
        self.vector: list[RegionDecl] = []
        """The Ascend vector regions (``T.SimtVF``, ``T.SimdVF``) enclosing the statement being read."""
        self.uncertain = 0
        """How many enclosing statements may not be built: an ``if`` of unknown condition, a ``try``."""
        self.traced: set[str] = set()
        """Names of values of the kernel's run: launch and ``T.*`` loop variables."""
        self.env = env
        self.aliases = aliases
        self.target = target
        self.buffers: dict[str, BufferDecl] = {}
        self.stage_of: dict[str, int] = {}
        self.launch: LaunchDecl | None = None
        self.launches: list[LaunchDecl] = []
        self.pipelines: list[PipelineDecl] = []
        self.accesses: list[Access] = []
        self.diagnostics: list[Diagnostic] = []
        self.fixes: list[QuickFix] = []
        self.writes: set[tuple[int, int]] = set()
        self.stack: list[ast.stmt] = []
        """The statements enclosing the one being read, outermost first."""
        self.kernel_depth: int | None = None
        self.loops: list[checks.Loop] = []
        self.dead: list[ast.stmt] = []
        """Statements of ``if`` branches a known condition rules out: the compiler never sees them."""
        self.accumulations: list[tuple[str, ast.expr, ast.Call, ast.stmt]] = []
        """``T.gemm`` calls without ``clear_accum``: accumulator, its node, the call, where a clear goes."""

    def read_params(self, func: ast.FunctionDef) -> None:
        for arg in [*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs]:
            if arg.annotation is not None:
                self._declare_annotated(arg.arg, arg.annotation, arg_span(arg))

    def read_body(self, body: Iterable[ast.stmt], pipeline: PipelineDecl | None = None) -> None:
        for stmt in body:
            self._statement(stmt, pipeline)

    def _statement(self, stmt: ast.stmt, pipeline: PipelineDecl | None) -> None:
        self.stack.append(stmt)
        try:
            self._read(stmt, pipeline)
        finally:
            self.stack.pop()

    def _read(self, stmt: ast.stmt, pipeline: PipelineDecl | None) -> None:
        if isinstance(stmt, ast.Assign):
            self._assign(stmt)
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            if not self._declare_annotated(stmt.target.id, stmt.annotation, span_of(stmt.target)):
                bind_assignment(stmt, self.env, self.aliases)
        elif isinstance(stmt, ast.With):
            opened = len(self.vector)
            for item in stmt.items:
                name = primitive_name(item.context_expr, self.aliases)
                if name in LAUNCHES:
                    self._kernel(item.context_expr, item.optional_vars)
                elif name in REGIONS and self.dialect == "ascend" and isinstance(item.context_expr, ast.Call):
                    self._region(name, item.context_expr)
            self.read_body(stmt.body, pipeline)
            del self.vector[opened:]
        elif isinstance(stmt, ast.For):
            self._for(stmt, pipeline)
        elif isinstance(stmt, ast.If) and isinstance(taken := evaluate(stmt.test, self.env, self.aliases), bool):
            self.dead.extend(stmt.orelse if taken else stmt.body)  # TVMScript keeps only the taken branch
            self.read_body(stmt.body if taken else stmt.orelse, pipeline)
        elif isinstance(stmt, ast.If | ast.While):
            branch = not self._traced(stmt.test)  # a TIR condition: TVMScript builds both branches
            self.uncertain += branch
            self.read_body(stmt.body, pipeline)
            self.read_body(stmt.orelse, pipeline)
            self.uncertain -= branch
        elif isinstance(stmt, ast.Try):
            self.uncertain += 1
            self.read_body(stmt.body, pipeline)
            for handler in stmt.handlers:
                self.read_body(handler.body, pipeline)
            self.read_body(stmt.finalbody, pipeline)
            self.uncertain -= 1
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            self._op(stmt.value, pipeline)

    def _assign(self, stmt: ast.Assign) -> None:
        value = stmt.value
        name = primitive_name(value, self.aliases)
        target = stmt.targets[0] if len(stmt.targets) == 1 else None
        if isinstance(value, ast.Call) and isinstance(target, ast.Name) and name is not None:
            if name in self.scopes or name == "alloc_var":
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
        bind_assignment(stmt, self.env, self.aliases)
        if self._traced(value):
            self.traced.update(n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name))

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
        args = arguments(call, ["dtype", "init"] if allocator == "alloc_var" else ["shape", "dtype", "scope"])
        if allocator == "alloc_var":
            shape: list[Value] = [1]
            dtype = self._dtype(args.get("dtype"), "int32")
            scope_node = args.get("scope")
            scope = "local.var"
        else:
            shape = self._shape(args.get("shape"))
            dtype = self._dtype(args.get("dtype"), "float32")
            scope_node = args.get("scope")
            scope = self.scopes[allocator]
        if scope_node is not None:
            scope_value = evaluate(scope_node, self.env, self.aliases)
            scope = scope_value if isinstance(scope_value, str) else scope
        buffer = self._make(target.id, shape, dtype, scope, target.lineno, False)
        written = source_text(args.get("shape")) if allocator != "alloc_var" else None
        self._add(BufferDecl(buffer, span_of(target), span_of(call), allocator, written=written))

    def _declare_empty(self, target: ast.Name, call: ast.Call) -> None:
        shape_nodes = list(call.args)
        keywords = {k.arg: k.value for k in call.keywords}
        dtype_node = keywords.get("dtype")
        first = evaluate(shape_nodes[0], self.env, self.aliases) if shape_nodes else None
        if shape_nodes and (isinstance(shape_nodes[0], ast.Tuple | ast.List) or isinstance(first, tuple)):
            shape = list(first) if isinstance(first, tuple) else self._shape(shape_nodes[0])
            dtype_node = shape_nodes[1] if len(shape_nodes) > 1 else dtype_node
        else:
            shape = [evaluate(n, self.env, self.aliases) for n in shape_nodes]
        dtype = self._dtype(dtype_node, "float32")
        buffer = self._make(target.id, shape, dtype, "global", target.lineno, True)
        written = ", ".join(source_text(n) or "?" for n in shape_nodes[:1] if isinstance(n, ast.Tuple | ast.List))
        self._add(BufferDecl(buffer, span_of(target), span_of(call), "empty", written=written or None))

    def _declare_annotated(self, name: str, annotation: ast.expr, name_span: Span) -> bool:
        kind = primitive_name(annotation.value if isinstance(annotation, ast.Subscript) else annotation, self.aliases)
        if kind not in _TENSOR_ANNOTATIONS:
            return False
        if isinstance(annotation, ast.Subscript):
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            shape_node, dtype_node = parts[0], parts[1] if len(parts) > 1 else None
        elif isinstance(annotation, ast.Call):
            args = arguments(annotation, ["shape", "dtype"])
            shape_node, dtype_node = args.get("shape"), args.get("dtype")
        else:
            return False
        scope = _ANNOTATION_SCOPES.get(kind, "global")
        shape = self._shape(shape_node)
        buffer = self._make(name, shape, self._dtype(dtype_node, "float32"), scope, name_span.line, scope == "global")
        self._add(BufferDecl(buffer, name_span, span_of(annotation), kind, written=source_text(shape_node)))
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
        self.launches.append(LaunchDecl(grid, as_dim(threads_value), span_of(call)))
        if self.launch is None:
            self.launch = self.launches[0]
            self.kernel_depth = len(self.stack)
        if names is not None:
            for node in ast.walk(names):
                if isinstance(node, ast.Name):
                    self.env[node.id] = Sym(node.id)
                    self.traced.add(node.id)

    def _traced(self, test: ast.expr) -> bool:
        """A condition on values of the kernel's run (a launch or loop variable, a buffer element, a
        ``T.dynamic`` size), not on Python values: the kernel holds both branches."""
        params = {p.name for p in self.ref.params}
        for node in ast.walk(test):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.buffers:
                return True
            if isinstance(node, ast.Name) and node.id in self.traced:
                return True
            value = self.env.get(node.id) if isinstance(node, ast.Name) else None
            if isinstance(value, Sym) and value.text.isidentifier() and value.text not in params:
                return True  # n = T.dynamic("num_tokens")
        return False

    def _region(self, name: str, call: ast.Call) -> None:
        """``with T.SimtVF(threads=...)`` (its thread count, ``[x, y, z]`` as their product) or ``with T.SimdVF()``."""
        threads: Dim | None = None
        if name == "SimtVF":
            given = arguments(call, ["threads", "latency"]).get("threads")
            value = evaluate(given, self.env, self.aliases) if given is not None else 128  # SimtVF's default
            if isinstance(value, tuple | list):
                product: Value = 1
                for item in value:
                    product = product * item if is_known_int(item) and is_known_int(product) else Sym(str(value))
                value = product
            threads = as_dim(value)
        region = RegionDecl(name, threads, span_of(call))
        self.regions.append(region)
        if name in VECTOR_REGIONS:
            self.vector.append(region)

    def _ascend_rule(self, found: Diagnostic) -> None:
        """One of the checks TileLang's Ascend ``vf_checker`` makes before lowering, where this code is surely built."""
        if self.dialect == "ascend" and not self.uncertain:
            self.diagnostics.append(found)

    def _for(self, stmt: ast.For, pipeline: PipelineDecl | None) -> None:
        name = primitive_name(stmt.iter, self.aliases)
        if name == "Parallel" and not self.vector:
            loop = ast.unparse(stmt.target)
            self._ascend_rule(diagnostic("ascend-vector-region", span_of(stmt.iter), kernel=self.ref.name, loop=loop))
        loop_var = ast.unparse(stmt.target)
        for node in ast.walk(stmt.target):
            if isinstance(node, ast.Name):
                self.env[node.id] = Sym(node.id)
                if name is not None:
                    self.traced.add(node.id)
        if name == "Pipelined" and isinstance(stmt.iter, ast.Call):
            args = arguments(stmt.iter, ["start", "stop", "num_stages"])
            stages = evaluate(args["num_stages"], self.env, self.aliases) if "num_stages" in args else 0
            literal = isinstance(args.get("num_stages"), ast.Constant)
            pipeline = PipelineDecl(loop_var, as_dim(stages), span_of(stmt.iter), literal)
            self.pipelines.append(pipeline)
        if name == "Parallel":
            self._parallel(stmt)
        first = len(self.accesses)
        self.read_body(stmt.body, pipeline)
        self.read_body(stmt.orelse, pipeline)
        stages = 1
        if name == "Pipelined" and pipeline is not None and is_known_int(pipeline.num_stages):
            stages = max(int(pipeline.num_stages), 1)
        self.loops.append(checks.Loop(stmt.lineno, stages, self.accesses[first:]))

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

    def _op(self, call: ast.Call, pipeline: PipelineDecl | None) -> None:
        name = primitive_name(call, self.aliases)
        if name is None:
            return
        operands = [operand_of(a, self.buffers, self.env, self.aliases) for a in call.args]
        found = [o for o in operands if o is not None]
        if not found:
            return
        if name == "copy" and len(operands) >= 2:
            self._ascend_copy(call, operands[0], operands[1])
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
        found, fixes = checks.check_op(name, call, operands, self.ref.name)
        self.diagnostics.extend(found)
        self.fixes.extend(fixes)
        accumulator = operands[2] if name in checks.GEMMS and len(operands) >= 3 else None
        if accumulator is not None and keyword(call, "clear_accum") is None and self.stack:
            depth = self.kernel_depth if self.kernel_depth is not None else len(self.stack) - 1
            anchor = self.stack[min(depth, len(self.stack) - 1)]
            self.accumulations.append((accumulator.buffer.buffer.name, accumulator.node, call, anchor))

    def _ascend_copy(self, call: ast.Call, source: Operand | None, dest: Operand | None) -> None:
        """An Ascend ``T.copy`` outside a vector region is a DMA, which casts nothing (L0C's fixpipe aside);
        inside ``T.SimdVF`` no copy may touch global memory."""
        if source is None or dest is None:
            return
        src, dst = source.buffer.buffer, dest.buffer.buffer
        known = dtype_bits(src.dtype) is not None and dtype_bits(dst.dtype) is not None
        if not self.vector and known and src.dtype != dst.dtype and src.scope != "shared.l0c":
            words = {"src": src.name, "dst": dst.name, "src_dtype": src.dtype, "dst_dtype": dst.dtype}
            cast = diagnostic("ascend-vector-region", span_of(call), form="cast", kernel=self.ref.name, fields=words)
            self._ascend_rule(cast)
        simd = bool(self.vector) and self.vector[-1].kind == "SimdVF"
        if simd and "global" in (src.scope, dst.scope):
            reach = diagnostic(
                "ascend-vector-region", span_of(call), form="global", kernel=self.ref.name, src=src.name, dst=dst.name
            )
            self._ascend_rule(reach)

    def finish(self, span: Span, body_def: ast.FunctionDef, bound: list[Binding], nodes: list[ast.AST]) -> StaticKernel:
        buffers = []
        for decl in self.buffers.values():
            stages = self.stage_of.get(decl.buffer.name, 1)
            buffers.append(replace(decl, stages=stages))
        shared = checks.shared_bytes(buffers)
        kernel = StaticKernel(
            ref=self.ref,
            span=span,
            bindings=bound,
            buffers=buffers,
            launch=self.launch,
            launches=self.launches,
            pipelines=self.pipelines,
            accesses=Placed.of(self.accesses),
            occurrences=Placed.of(self._occurrences(body_def, nodes)),
            shared_bytes=shared,
            target=self.target,
            regions=self.regions,
        )
        kernel = replace(kernel, shared_floor=checks.shared_floor(kernel, self.loops))
        planned = planned_shared_bytes(body_def, kernel, self.aliases, {id(s) for s in self.dead})
        kernel = replace(kernel, shared_planned=planned)
        if self.dialect != "ascend":  # the Unified Buffer is not CUDA's shared memory: its plan is the compiler's
            self.diagnostics.extend(checks.check_kernel(kernel))
        self._uninitialised(kernel)
        return kernel

    def _uninitialised(self, kernel: StaticKernel) -> None:
        """A fragment accumulated by ``T.gemm`` where nothing mentions it before: its first sum reads
        garbage (TileLang's own check warns about the same buffer when it compiles)."""
        for name, node, call, anchor in self.accumulations:
            decl = self.buffers.get(name)
            if decl is None or decl.allocator != "alloc_fragment" or isinstance(node, ast.Subscript):
                continue
            mentions = [o for o in kernel.occurrences if o.name == name and o.role != "definition"]
            if not mentions or (mentions[0].span.line, mentions[0].span.column) != (node.lineno, node.col_offset):
                continue
            alias = (
                call.func.value.id
                if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                else "T"
            )
            warning = diagnostic("gemm-uninitialised", span_of(call), kernel=self.ref.name, name=name, alias=alias)
            self.diagnostics.append(warning)
            line = anchor.lineno
            indent = " " * anchor.col_offset
            edit = TextEdit(Span(line, 0, line, 0), f"{indent}{alias}.clear({name})\n")
            self.fixes.append(QuickFix(warning, f"Insert {alias}.clear({name}) before line {line}", [edit]))

    def _occurrences(self, func: ast.FunctionDef, nodes: list[ast.AST]) -> list[Occurrence]:
        definitions = {(d.name_span.line, d.name_span.column) for d in self.buffers.values()}
        found: list[Occurrence] = []
        for node in (n for n in nodes if within(n, func)):
            if isinstance(node, ast.arg) and node.arg in self.buffers:
                span = arg_span(node)
                found.append(Occurrence(node.arg, span, "definition"))
            elif isinstance(node, ast.Name) and node.id in self.buffers:
                key = (node.lineno, node.col_offset)
                role = "definition" if key in definitions else "write" if key in self.writes else "read"
                found.append(Occurrence(node.id, span_of(node), role))
        found.sort(key=lambda o: (o.span.line, o.span.column))
        return found


def _bytes(shape: list[Value], dtype: str) -> int | None:
    bits = dtype_bits(dtype)
    if bits is None or not all(is_known_int(d) for d in shape):
        return None
    count = 1
    for dim in shape:
        count *= dim
    return count * bits // 8
