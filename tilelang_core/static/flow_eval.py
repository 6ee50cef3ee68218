"""Expressions for the run-along (``flow.py``): calls of the file's functions are followed, the rest
goes to ``evaluate`` with what was computed put in place as names.

``torch.randn(ceil_div(n, 2), 64)`` becomes ``torch.randn(_ts0, 64)`` with ``_ts0`` bound to
``ceil_div``'s result, so ``evaluate`` stays the one place that knows sizes, tensors and dtypes.
Methods of known values are answered in ``flow_methods``; which names may build a kernel, in
``flow_reach``.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from collections.abc import Mapping, MutableMapping

from tilescope.core.static.budget import MAX_SIZE, charge, charge_size, too_large
from tilescope.core.static.context import ModuleContext
from tilescope.core.static.enums import enum_member
from tilescope.core.static.evaluate import evaluate, understood
from tilescope.core.static.flow_methods import IDENTITY, LIBRARY, Library, fp8_type, identity, known_method
from tilescope.core.static.flow_reach import mentioned_names, reaching_names
from tilescope.core.static.flow_values import (
    MAX_ITEMS,
    Built,
    Ctx,
    Func,
    Klass,
    Output,
    Reached,
    Record,
    Tracked,
    builtin,
    items_of,
    truth,
)
from tilescope.core.static.symbolic import Sym, Value, admitted, size

_BUILDS = {"compile", "get_tir", "get_kernel_source"}
"""Methods of a ``@tilelang.jit`` kernel that build it with the arguments they get."""


class Stop(Exception):
    """The path from here on depends on something unknown."""


class Evaluator:
    """Values of expressions in a scope, following the file's own functions (``invoke``)."""

    def __init__(self, context: ModuleContext, kernels: frozenset[str]) -> None:
        self.context = context
        self.kernels = kernels
        self.globals: dict[str, Value] = dict(context.env)
        self.reached: dict[str, list[Reached]] = {}
        self.stack: list[str] = []
        self.delta = 0
        self._count = 0
        self._reaching: frozenset[str] | None = None

    def invoke(self, func: Func, args: list[Value], kwargs: dict[str, Value]) -> Value:
        raise NotImplementedError

    def tick(self) -> None:
        """One step of work (a statement, a comprehension element), counted against the budgets."""
        charge()

    def value(self, node: ast.expr, scope: Mapping[str, Value]) -> Value:
        overlay: dict[str, Value] = {}
        plain = self._substitute(node, scope, overlay)
        return evaluate(plain, ChainMap(overlay, scope), self.context.aliases)  # type: ignore[arg-type]  # ChainMap only reads the scopes it is given

    def _hold(self, value: Value, overlay: dict[str, Value], where: ast.AST) -> ast.expr:
        self._count += 1
        name = f"_ts{self._count}"
        overlay[name] = value
        return ast.copy_location(ast.Name(name, ast.Load()), where)

    def _substitute(self, node: ast.expr, scope: Mapping[str, Value], overlay: dict[str, Value]) -> ast.expr:
        if isinstance(node, ast.Call):
            return self._call(node, scope, overlay)
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            return self._hold(self._comprehension(node, scope), overlay, node)
        if isinstance(node, ast.Dict):
            return self._hold(self._dict(node, scope), overlay, node)
        if isinstance(node, ast.DictComp | ast.Lambda | ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr):
            return self._hold(Sym(ast.unparse(node)[:80]), overlay, node)
        if isinstance(node, ast.Subscript):
            base = self.value(node.value, scope)
            key = self.value(node.slice, scope) if not isinstance(node.slice, ast.Slice) else None
            if isinstance(base, Record):
                return self._hold(base.get(key) if base.has(key) else Sym(ast.unparse(node)[:80]), overlay, node)
            if isinstance(base, tuple) and isinstance(node.slice, ast.Slice):
                parts = [self.value(p, scope) if p is not None else None for p in (node.slice.lower, node.slice.upper)]
                if all(p is None or isinstance(p, int) for p in parts) and node.slice.step is None:
                    return self._hold(base[parts[0] : parts[1]], overlay, node)
            held = self._hold(base, overlay, node.value)
            index = self._hold(key, overlay, node.slice) if key is not None else node.slice
            return ast.copy_location(ast.Subscript(held, index, ast.Load()), node)
        if isinstance(node, ast.Attribute) and not isinstance(node.value, ast.Name):
            member = enum_member(node, self.context.aliases)
            if member is not None:
                return self._hold(member, overlay, node)
            base = self.value(node.value, scope)
            if isinstance(base, Record) and base.has(node.attr):
                return self._hold(base.get(node.attr), overlay, node)
            return ast.copy_location(ast.Attribute(self._hold(base, overlay, node.value), node.attr, ast.Load()), node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base = scope.get(node.value.id)
            if isinstance(base, Record) and base.has(node.attr):
                return self._hold(base.get(node.attr), overlay, node)
            if isinstance(base, Klass) and base.method(node.attr) is not None:
                return self._hold(base.method(node.attr), overlay, node)
            if isinstance(base, Ctx):
                return self._hold(base.attrs.get(node.attr, Sym(f"ctx.{node.attr}")), overlay, node)
            return node
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in IDENTITY:
            left, right = self.value(node.left, scope), self.value(node.comparators[0], scope)
            return self._hold(identity(node.ops[0], left, right, node), overlay, node)
        if isinstance(node, ast.BoolOp):
            return self._hold(self._boolean(node, scope), overlay, node)
        if isinstance(node, ast.Name | ast.Constant):
            return node
        fields = {}
        for name, field in ast.iter_fields(node):
            if isinstance(field, ast.expr):
                fields[name] = self._substitute(field, scope, overlay)
            elif isinstance(field, list):
                fields[name] = [self._substitute(f, scope, overlay) if isinstance(f, ast.expr) else f for f in field]
            else:
                fields[name] = field
        return ast.copy_location(type(node)(**fields), node)

    def _boolean(self, node: ast.BoolOp, scope: Mapping[str, Value]) -> Value:
        last: Value = None
        for operand in node.values:
            last = self.value(operand, scope)
            test = truth(last)
            if test is None:
                return Sym(ast.unparse(node)[:80])
            if test is isinstance(node.op, ast.Or):
                return last
        return last

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.SetComp, scope: Mapping[str, Value]) -> Value:
        out: list[Value] = []
        built = 0  # the size of what `out` holds, paid for item by item: past MAX_SIZE the budget ends

        def walk(index: int, env: Mapping[str, Value]) -> bool:
            nonlocal built
            if index == len(node.generators):
                self.tick()
                item = self.value(node.elt, env)
                grown = 1 + size(item)
                built += grown
                if built > MAX_SIZE:
                    too_large()
                charge_size(grown)
                out.append(item)
                return len(out) <= MAX_ITEMS
            gen = node.generators[index]
            items = items_of(self.value(gen.iter, env))
            if items is None:
                return False
            for item in items:
                charge()  # every item walked, whether or not the filters let it through
                child: ChainMap[str, Value] = ChainMap({}, env)  # type: ignore[arg-type]  # ChainMap only reads the scopes it is given
                self.assign(gen.target, item, child)
                tests = [truth(self.value(test, child)) for test in gen.ifs]
                if None in tests:
                    return False
                if all(tests) and not walk(index + 1, child):
                    return False
            return True

        return tuple(out) if walk(0, scope) else Sym(ast.unparse(node)[:80])

    def _dict(self, node: ast.Dict, scope: Mapping[str, Value]) -> Value:
        items: dict[Value, Value] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                merged = self.value(value, scope)
                if not isinstance(merged, Record):
                    return Sym(ast.unparse(node)[:80])
                items.update(merged.items)
                continue
            name = self.value(key, scope)
            if not isinstance(name, str | int | bool):
                return Sym(ast.unparse(node)[:80])
            items[name] = self.value(value, scope)
        return admitted(Record(tuple(items.items())))

    def assign(self, target: ast.expr, value: Value, scope: MutableMapping[str, Value]) -> None:
        if isinstance(target, ast.Name):
            scope[target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            names = target.elts
            items = value if isinstance(value, tuple) else None
            starred = [i for i, e in enumerate(names) if isinstance(e, ast.Starred)]
            if items is not None and not starred and len(items) == len(names):
                for element, item in zip(names, items, strict=True):
                    self.assign(element, item, scope)
            elif items is not None and len(starred) == 1 and len(items) >= len(names) - 1:
                cut = starred[0]
                tail = len(names) - cut - 1
                for element, item in zip(names[:cut], items[:cut], strict=True):
                    self.assign(element, item, scope)
                self.assign(names[cut].value, tuple(items[cut : len(items) - tail]), scope)  # type: ignore[attr-defined]  # the starred target was checked to be a Starred
                for element, item in zip(names[cut + 1 :], items[len(items) - tail :], strict=True):
                    self.assign(element, item, scope)
            else:
                for element in names:
                    inner = element.value if isinstance(element, ast.Starred) else element
                    self.assign(inner, Sym(ast.unparse(inner)[:80]), scope)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            owner = scope.get(target.value.id)
            if isinstance(owner, Ctx):
                owner.attrs[target.attr] = value
            else:
                scope[f"{target.value.id}.{target.attr}"] = value
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            base = scope.get(target.value.id)
            key = self.value(target.slice, scope)
            if isinstance(base, Record) and isinstance(key, str | int | bool):
                scope[target.value.id] = admitted(Record(tuple({**dict(base.items), key: value}.items())))
            elif isinstance(base, Record):
                scope[target.value.id] = Sym(target.value.id)

    def _arguments(self, node: ast.Call, scope: Mapping[str, Value]) -> tuple[list[Value], dict[str, Value], bool]:
        """Positional and keyword values, and whether a ``*``/``**`` part is unknown."""
        args: list[Value] = []
        kwargs: dict[str, Value] = {}
        opaque = False
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                items = items_of(self.value(arg.value, scope))
                opaque = opaque or items is None
                args.extend(items or ())
            else:
                args.append(self.value(arg, scope))
        for keyword in node.keywords:
            value = self.value(keyword.value, scope)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
            elif isinstance(value, Record) and all(isinstance(k, str) for k, _ in value.items):
                kwargs.update(value.items)
            else:
                opaque = True
        return args, kwargs, opaque

    def _call(self, node: ast.Call, scope: Mapping[str, Value], overlay: dict[str, Value]) -> ast.expr:
        func = node.func
        kernel = self._kernel_called(func, scope)
        callee: Value = None  # the called object or the attribute's owner, evaluated first as Python does
        if isinstance(func, ast.Attribute):
            callee = self.value(func.value, scope)
        elif not isinstance(func, ast.Name):
            callee = self.value(func, scope)
        args, kwargs, opaque = self._arguments(node, scope)
        if kernel is not None:
            self.record(kernel, node, args, kwargs, opaque)
            return self._hold(Built(kernel), overlay, node)
        result = self._follow(func, callee, scope, args, kwargs, opaque)
        if not isinstance(result, Library):
            return self._hold(result, overlay, node)
        if any(self._may_build(v) for v in [*args, *kwargs.values()]):
            raise Stop  # a library call gets a function of the file that builds kernels: when it runs is unknown
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not understood(name):
            return self._hold(Sym(f"{name or 'call'}(…)"), overlay, node)  # nothing evaluate knows: unknown
        held_func: ast.expr = func
        if isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name):
            held_func = ast.copy_location(ast.Attribute(self._hold(callee, overlay, func.value), func.attr), func)
        elif not isinstance(func, ast.Name | ast.Attribute):
            held_func = self._hold(callee, overlay, func)
        held_args: list[ast.expr] = [self._hold(a, overlay, node) for a in args]
        if opaque:
            held_args.append(ast.Starred(self._hold(Sym("*"), overlay, node), ast.Load()))
        keywords = [ast.keyword(k, self._hold(v, overlay, node)) for k, v in kwargs.items()]
        return ast.copy_location(ast.Call(held_func, held_args, keywords), node)

    def _kernel_called(self, func: ast.expr, scope: Mapping[str, Value]) -> str | None:
        """The kernel a call builds: ``matmul(...)``, ``matmul.compile(...)``, an alias of it."""
        if isinstance(func, ast.Attribute) and func.attr in _BUILDS and isinstance(func.value, ast.Name):
            func = func.value
        if not isinstance(func, ast.Name):
            return None
        target = scope.get(func.id)
        if isinstance(target, Func) and target.node.name in self.kernels and target.scope is self.globals:
            return target.node.name
        return func.id if func.id in self.kernels and target is None else None

    def _follow(
        self,
        func: ast.expr,
        base: Value,
        scope: Mapping[str, Value],
        args: list[Value],
        kwargs: dict[str, Value],
        opaque: bool,
    ) -> Value | Library:
        """The value of a call the run-along can answer (the file's functions, builtins, methods
        of known values), or ``LIBRARY``."""
        if isinstance(func, ast.Name) and self.context.tilelang.get(func.id, "").endswith(".determine_fp8_type"):
            return fp8_type(self.context.target, args, kwargs)
        if isinstance(func, ast.Name):
            target = scope.get(func.id)
            if isinstance(target, Func):
                return Sym(f"{func.id}(…)") if opaque else self.invoke(target, args, kwargs)
            if isinstance(target, Klass):
                return Sym(f"{func.id}(…)")
            found = None if opaque else builtin(func.id, "", args, kwargs)
            return found if found is not None else LIBRARY
        if not isinstance(func, ast.Attribute):
            if isinstance(base, Func) and not opaque:
                return self.invoke(base, args, kwargs)
            return LIBRARY
        owner_name = func.value.id if isinstance(func.value, ast.Name) else ""
        attr = func.attr
        if isinstance(base, Ctx) and not opaque:
            if attr == "save_for_backward":
                base.attrs["saved_tensors"] = admitted(tuple(args))
            return None
        if isinstance(base, Tracked | Output) and base.ctx is not None and attr == "backward" and not opaque:
            backward = base.ctx.klass.methods.get("backward")
            if backward is None:
                return None
            grad = args[0] if args else Sym("grad")
            return self.invoke(backward, [base.ctx, grad], {})
        if isinstance(base, Klass):
            method = base.method(attr)
            if method is None or opaque:
                return Sym(f"{base.name}.{attr}(…)")
            return self.invoke(method, args, kwargs)
        return known_method(owner_name, base, attr, args, kwargs, scope, self.context.aliases, opaque)

    def record(self, kernel: str, node: ast.Call, args: list[Value], kwargs: dict[str, Value], opaque: bool) -> None:
        """Keep a kernel call: placeholder names for its values, so ``bindings`` reads it like any call."""
        env: dict[str, Value] = {}
        names: list[ast.expr] = []
        for index, value in enumerate(args):
            env[f"_a{index}"] = value
            names.append(ast.Name(f"_a{index}", ast.Load()))
        if opaque:
            names.append(ast.Starred(ast.Name("_star", ast.Load()), ast.Load()))
        keywords = []
        for key, value in kwargs.items():
            env[f"_k_{key}"] = value
            keywords.append(ast.keyword(key, ast.Name(f"_k_{key}", ast.Load())))
        call = ast.copy_location(ast.Call(ast.Name(kernel, ast.Load()), names, keywords), node)
        self.reached.setdefault(kernel, []).append(Reached(call, env, self.delta, tuple(self.stack)))

    def reaching(self) -> frozenset[str]:
        """Names whose call may build a kernel (``flow_reach``), worked out once per file."""
        if self._reaching is None:
            self._reaching = reaching_names(self.context, self.kernels)
        return self._reaching

    def may_reach(self, node: ast.AST, scope: Mapping[str, Value]) -> bool:
        mentioned = mentioned_names(node)
        return bool(mentioned & self.reaching()) or any(self._may_build(scope.get(n)) for n in mentioned)

    def _may_build(self, value: Value) -> bool:
        if isinstance(value, Func):
            return value.node.name in self.reaching()
        return isinstance(value, Klass) and value.name in self.reaching()
