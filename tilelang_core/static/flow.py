"""Follow what the file runs, from its top level and ``__main__`` block, to each kernel call.

A run-along over the file's own statements with the values the static tier knows: calls of the
file's functions are followed with the arguments they get (``main(args.batch)`` with argparse's
default, a wrapper, ``run_regression_perf()``, an ``autograd.Function``'s ``forward``), ``for``
loops walk known sequences in order, an ``if`` whose test is known takes its branch. Each call of
a kernel reached is kept with the values it passes, in the order they run: the first is what the
file builds first. Nothing is executed and nothing is guessed: where the path depends on something
unknown (an unknown test or loop around a kernel call, a ``raise``, a ``while``), the run-along
stops and only the calls reached before count; an unknown branch that cannot reach a kernel is
skipped, and the names it assigns become unknown.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from collections.abc import MutableMapping
from dataclasses import dataclass

from tilescope.core.static.budget import RUN_SECONDS, RUN_STEPS, OverBudget, budgeted, charge, current
from tilescope.core.static.context import ModuleContext
from tilescope.core.static.flow_eval import Evaluator, Stop
from tilescope.core.static.flow_values import Ctx, Func, Klass, Output, Reached, Record, Tracked, items_of, truth
from tilescope.core.static.symbolic import Shaped, Sym, Value, admitted

MAX_STEPS = 3000
"""Statements one run-along executes at most (every file of TileLang's examples needs far fewer)."""
MAX_HELPER_STEPS = 200
"""Statements followed in one call of a function that builds no kernel (a reference implementation
with loops is not worth following; a size helper is a few lines)."""
MAX_PATHS = 8
"""Ways through one function's unknown tests followed at most."""
MAX_LOOP = 64
MAX_QUIET_LOOP = 16
"""Iterations followed of a loop that builds no kernel (config lists are shorter; reference loops longer)."""
"""Iterations of one loop followed; a longer loop is followed that far."""


class _Return(Exception):
    def __init__(self, value: Value) -> None:
        self.value = value


class _TooLong(Exception):
    """A function that builds no kernel took more than ``MAX_HELPER_STEPS``: its value is unknown."""


class _Raised(Exception):
    """A ``raise`` on the way being followed through a function that cannot build a kernel."""


@dataclass
class _Path:
    """One way through a function's unknown tests: the choices made, the next to make, where the
    other ways go, and the call depth of that function."""

    taken: list[bool]
    pending: list[list[bool]]
    index: int = 0
    depth: int = 0


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def reached_calls(context: ModuleContext, kernels: frozenset[str]) -> dict[str, list[Reached]]:
    """For each kernel name, the calls the file's run reaches, in the order they run (computed once)."""
    return _runner(context, kernels).reached


def first_config(
    context: ModuleContext, kernels: frozenset[str], configs: ast.expr, args: dict[str, Value]
) -> dict[str, Value] | None:
    """Config 0 of an ``@autotune(configs=...)``: a list of dicts, or what a configs function returns
    when called with the kernel's arguments (as TileLang calls it); ``None`` when not known."""
    runner = _runner(context, kernels)
    runner.steps, runner.helper_steps = 0, MAX_STEPS  # a search space may list hundreds of configs
    try:
        with budgeted(RUN_STEPS, RUN_SECONDS):
            space = runner.value(configs, runner.globals)
            if isinstance(space, Func):
                spec = space.node.args
                takes = {a.arg for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]}
                space = runner.invoke(space, [], {k: v for k, v in args.items() if spec.kwarg or k in takes})
    except (Stop, _Return, _Raised, _TooLong, _Break, _Continue, RecursionError, OverBudget):
        return None
    finally:
        runner.helper_steps = MAX_HELPER_STEPS
    if not isinstance(space, tuple) or not space or not isinstance(space[0], Record):
        return None
    return {str(k): v for k, v in space[0].items if isinstance(k, str)}


def _runner(context: ModuleContext, kernels: frozenset[str]) -> _Runner:
    """The file's run-along, run once per analysis."""
    runner = context.memo.get("run-along")
    if runner is None:
        runner = _Runner(context, kernels)
        with budgeted(RUN_STEPS, RUN_SECONDS):
            runner.run_module()
        context.memo["run-along"] = runner
    return runner


class _Runner(Evaluator):
    def __init__(self, context: ModuleContext, kernels: frozenset[str]) -> None:
        super().__init__(context, kernels)
        self.steps = 0
        self.paths: list[_Path] = []
        self.known: dict[object, Value] = {}
        self.helper_steps = MAX_HELPER_STEPS
        self.deadline: int | None = None
        """While following a function that builds no kernel: the step past which its value is unknown."""

    def run_module(self) -> None:
        for placed in self.context.blocks:
            self.define(placed.block.statements, self.globals, placed.delta)
        try:
            for placed in self.context.blocks:
                for stmt in placed.block.statements:
                    if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        self.execute([stmt], self.globals, placed.delta)
        except (Stop, _Return, _Raised, _TooLong, _Break, _Continue, RecursionError, OverBudget):
            pass  # the path depends on something unknown from here on: what was reached stands

    def define(self, statements: list[ast.stmt], scope: MutableMapping[str, Value], delta: int) -> None:
        """Bind the functions and classes a block defines (before the top level runs, as imports do)."""
        for stmt in statements:
            if isinstance(stmt, ast.FunctionDef):
                scope[stmt.name] = Func(stmt, scope, delta)
            elif isinstance(stmt, ast.ClassDef):
                methods = {
                    s.name: Func(s, scope, delta, stmt.name) for s in stmt.body if isinstance(s, ast.FunctionDef)
                }
                scope[stmt.name] = Klass(stmt.name, methods)

    def invoke(self, func: Func, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """Run a function of the file with these arguments; its return value. A function that cannot
        build a kernel is run down each way its unknown tests can go (a few at most): its value is
        known when every way that does not raise returns the same."""
        charge()
        if len(self.stack) >= 24 or any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(func.node)):
            return Sym(f"{func.node.name}(…)")
        if func.node.name in self.reaching():
            return self._run(func, args, kwargs)
        try:
            key = (id(func.node), id(func.scope), func.bound, tuple(args), tuple(sorted(kwargs.items())))
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self.known:
            return self.known[key]  # it builds no kernel: the same arguments give the same value
        outermost = self.deadline is None
        if outermost:
            self.deadline = self.steps + self.helper_steps
        try:
            value = self._ways(func, args, kwargs)
        except _TooLong:
            if not outermost:
                raise
            value = Sym(f"{func.node.name}(…)")
        finally:
            if outermost:
                self.deadline = None
        if key is not None:
            self.known[key] = value
        return value

    def _ways(self, func: Func, args: list[Value], kwargs: dict[str, Value]) -> Value:
        pending: list[list[bool]] = [[]]
        results: list[Value] = []
        while pending:
            if len(results) >= MAX_PATHS:
                return Sym(f"{func.node.name}(…)")
            self.paths.append(_Path(pending.pop(), pending, depth=len(self.stack) + 1))
            try:
                results.append(self._run(func, args, kwargs))
            except _Raised:
                pass  # the program ends on this way: the others are the ones that go on
            finally:
                self.paths.pop()
        if not results:
            raise Stop
        return results[0] if all(r == results[0] for r in results) else Sym(f"{func.node.name}(…)")

    def _run(self, func: Func, args: list[Value], kwargs: dict[str, Value]) -> Value:
        caller_delta = self.delta
        local: dict[str, Value] = {}
        scope = ChainMap(local, func.scope)  # type: ignore[arg-type]  # ChainMap only reads the scopes it is given
        self.bind_parameters(func, [*func.bound, *args], kwargs, local)
        self.stack.append(func.node.name)
        depth = len(self.paths)
        try:
            self.execute(func.node.body, scope, func.delta)
        except _Return as done:
            ctx = func.bound[0] if func.bound and isinstance(func.bound[0], Ctx) else None
            if ctx is not None and isinstance(done.value, Shaped):  # autograd forward: its output has a backward
                return Tracked(done.value.shape, done.value.dtype, None, ctx)
            return Output(ctx) if ctx is not None else done.value
        finally:
            self.stack.pop()
            self.delta = caller_delta
            del self.paths[depth:]
        return None

    def choose(self) -> bool | None:
        """Which way an unknown test goes on the path being followed (``None``: not following paths)."""
        if not self.paths or self.paths[-1].depth != len(self.stack):
            return None
        path = self.paths[-1]
        if path.index == len(path.taken):
            path.taken.append(False)
            path.pending.append([*path.taken[:-1], True])
        choice = path.taken[path.index]
        path.index += 1
        return choice

    def bind_parameters(self, func: Func, args: list[Value], kwargs: dict[str, Value], local: dict[str, Value]) -> None:
        spec = func.node.args
        positional = [a.arg for a in [*spec.posonlyargs, *spec.args]]
        defaults = dict(zip(positional[len(positional) - len(spec.defaults) :], spec.defaults, strict=True))
        defaults.update({a.arg: d for a, d in zip(spec.kwonlyargs, spec.kw_defaults, strict=True) if d is not None})
        for name, value in zip(positional, args, strict=False):
            local[name] = value
        if spec.vararg is not None:
            local[spec.vararg.arg] = admitted(tuple(args[len(positional) :]))
        rest: dict[str, Value] = {}
        for name, value in kwargs.items():
            if name in positional or name in {a.arg for a in spec.kwonlyargs}:
                local[name] = value
            else:
                rest[name] = value
        if spec.kwarg is not None:
            local[spec.kwarg.arg] = admitted(Record(tuple(rest.items())))
        for name in [*positional, *(a.arg for a in spec.kwonlyargs)]:
            if name not in local:
                local[name] = self.value(defaults[name], func.scope) if name in defaults else Sym(name)

    def execute(self, statements: list[ast.stmt], scope: MutableMapping[str, Value], delta: int) -> None:
        for stmt in statements:
            try:
                self.tick()
                self.delta = delta
                self.statement(stmt, scope, delta)
            except OverBudget:
                _ran_out_at(delta + stmt.lineno)
                raise
            if (budget := current()) is not None and budget.exceeded:
                budget.at(delta + stmt.lineno)  # spent inside an expression, which became unknown

    def tick(self) -> None:
        charge()
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Stop
        if self.deadline is not None and self.steps > self.deadline:
            raise _TooLong

    def statement(self, stmt: ast.stmt, scope: MutableMapping[str, Value], delta: int) -> None:
        if isinstance(stmt, ast.Expr):
            if not (isinstance(stmt.value, ast.Call) and self.idle_call(stmt.value, scope)):
                self.value(stmt.value, scope)
        elif isinstance(stmt, ast.Assign):
            value = self.value(stmt.value, scope)
            for target in stmt.targets:
                self.assign(target, value, scope)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.value(stmt.value, scope), scope)
        elif isinstance(stmt, ast.AugAssign):
            binary = ast.BinOp(_load(stmt.target), stmt.op, stmt.value)
            self.assign(stmt.target, self.value(ast.copy_location(binary, stmt), scope), scope)
        elif isinstance(stmt, ast.If):
            self.branch(stmt, scope, delta)
        elif isinstance(stmt, ast.For):
            self.loop(stmt, scope, delta)
        elif isinstance(stmt, ast.While):
            test = truth(self.value(stmt.test, scope))
            if test is not False:
                self.unknown_region(stmt, scope)
            else:
                self.execute(stmt.orelse, scope, delta)
        elif isinstance(stmt, ast.With):
            for item in stmt.items:
                self.value(item.context_expr, scope)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, Sym(ast.unparse(item.optional_vars)), scope)
            self.execute(stmt.body, scope, delta)
        elif isinstance(stmt, ast.Try):
            self.execute(stmt.body, scope, delta)
            self.execute(stmt.orelse, scope, delta)
            self.execute(stmt.finalbody, scope, delta)
        elif isinstance(stmt, ast.Return):
            raise _Return(self.value(stmt.value, scope) if stmt.value is not None else None)
        elif isinstance(stmt, ast.Break):
            raise _Break
        elif isinstance(stmt, ast.Continue):
            raise _Continue
        elif isinstance(stmt, ast.Raise):
            if self.paths and self.paths[-1].depth == len(self.stack):
                raise _Raised
            raise Stop  # the program ends here (or in a handler we do not follow)
        elif isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            self.define([stmt], scope, delta)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            for alias in stmt.names:
                name = alias.asname or alias.name.split(".")[0]
                if name != "*" and name not in self.context.tilelang and not isinstance(scope.get(name), Func):
                    scope[name] = Sym(name)
        elif isinstance(stmt, ast.Match | ast.AsyncWith | ast.AsyncFor) or type(stmt).__name__ == "TryStar":
            self.unknown_region(stmt, scope)

    def idle_call(self, call: ast.Call, scope: MutableMapping[str, Value]) -> bool:
        """A call whose value is dropped, of a function of the file that builds no kernel: following it
        changes nothing the run-along keeps (its values are immutable), so it is not followed."""
        func = call.func
        target = scope.get(func.id) if isinstance(func, ast.Name) else None
        return isinstance(target, Func) and target.node.name not in self.reaching() and not self.may_reach(call, scope)

    def branch(self, stmt: ast.If, scope: MutableMapping[str, Value], delta: int) -> None:
        test = truth(self.value(stmt.test, scope))
        if test is None and _is_main_guard(stmt.test):
            test = True  # the file run as a program: ``if __name__ == "__main__":`` holds
        if test is None:
            test = self.choose()
        if test is None:
            self.unknown_region(stmt, scope)
        else:
            self.execute(stmt.body if test else stmt.orelse, scope, delta)

    def loop(self, stmt: ast.For, scope: MutableMapping[str, Value], delta: int) -> None:
        items = items_of(self.value(stmt.iter, scope))
        if items is None or (len(items) > MAX_QUIET_LOOP and not self.may_reach(stmt, scope)):
            self.unknown_region(stmt, scope)  # a long loop that builds no kernel: what it computes is unknown
            return
        for item in items[:MAX_LOOP]:
            self.assign(stmt.target, item, scope)
            try:
                self.execute(stmt.body, scope, delta)
            except _Continue:
                continue
            except _Break:
                return
        if len(items) > MAX_LOOP:
            raise Stop  # what follows the loop depends on iterations not followed
        self.execute(stmt.orelse, scope, delta)

    def unknown_region(self, stmt: ast.stmt, scope: MutableMapping[str, Value]) -> None:
        """Code that may or may not run: stop if it may build a kernel, else forget what it assigns. If it
        may return (or leave its loop), what the function returns is unknown: a function that cannot
        build a kernel returns an unknown value; otherwise the run-along stops."""
        if self.may_reach(stmt, scope):
            raise Stop
        if _leaves(stmt):
            if not self.stack or self.stack[-1] in self.reaching():
                raise Stop
            raise _Return(Sym(f"{self.stack[-1]}(…)"))
        for node in ast.walk(stmt):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, ast.AugAssign | ast.AnnAssign | ast.For):
                targets = [node.target]
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                targets = [node.optional_vars]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        scope[name.id] = Sym(name.id)


def _ran_out_at(line: int) -> None:
    budget = current()
    if budget is not None:
        budget.at(line)


def _leaves(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` holds a ``return``, or a ``break``/``continue`` of a loop around it."""
    stack: list[tuple[ast.AST, bool]] = [(stmt, isinstance(stmt, ast.For | ast.While))]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, ast.Return) or (isinstance(node, ast.Break | ast.Continue) and not in_loop):
            return True
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
                continue
            stack.append((child, in_loop or isinstance(child, ast.For | ast.While)))
    return False


def _load(target: ast.expr) -> ast.expr:
    """The target of ``x += 1`` read as an expression."""
    node = ast.parse(ast.unparse(target), mode="eval").body
    return ast.copy_location(node, target)


def _is_main_guard(test: ast.expr) -> bool:
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and len(test.comparators) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == "__main__"
    )
