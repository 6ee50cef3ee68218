"""One kernel body read once: its buffers, launch, pipelines and tile-op accesses, with the checks
of each tile op's operands. Lines are the block's own (``recover.ParsedBlock``). What a declaration
says is ``declarations``; the Ascend regions and their rules are ``ascend_regions``."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from tilescope.core.codes import diagnostic
from tilescope.core.model import Access, Diagnostic, KernelRef, Span
from tilescope.core.static import checks, declarations
from tilescope.core.static.ascend_regions import REGIONS, VECTOR_REGIONS, copy_rules, region
from tilescope.core.static.context import bind_assignment
from tilescope.core.static.discover import LAUNCHES, within
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.operand import operand_of
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
from tilescope.core.static.symbolic import Sym, Value, as_dim, is_known_int
from tilescope.core.static.syntax import arg_span, arguments, keyword, primitive_name, span_of

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
        self.scopes = declarations.SCOPES | (scopes or {})
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
                    self._region(region(name, item.context_expr, self.env, self.aliases))
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
                self._add(declarations.allocation(target, value, name, self.scopes, self.env, self.aliases))
                return
            if name == "empty":
                self._add(declarations.empty_tensor(target, value, self.env, self.aliases))
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

    def _add(self, decl: BufferDecl) -> None:
        self.buffers[decl.buffer.name] = decl

    def _declare_annotated(self, name: str, annotation: ast.expr, name_span: Span) -> bool:
        decl = declarations.annotated(name, annotation, name_span, self.env, self.aliases)
        if decl is not None:
            self._add(decl)
        return decl is not None

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

    def _region(self, entered: RegionDecl) -> None:
        self.regions.append(entered)
        if entered.kind in VECTOR_REGIONS:
            self.vector.append(entered)

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
            for rule in copy_rules(call, operands[0], operands[1], self.vector, self.ref.name):
                self._ascend_rule(rule)
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
