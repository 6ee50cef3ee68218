"""Expressions for the run-along (``flow.py``): calls of the file's functions are followed, the rest
goes to ``evaluate`` with what was computed put in place as names.

``torch.randn(ceil_div(n, 2), 64)`` becomes ``torch.randn(_ts0, 64)`` with ``_ts0`` bound to
``ceil_div``'s result, so ``evaluate`` stays the one place that knows sizes, tensors and dtypes.
"""

from __future__ import annotations

import ast
from collections import ChainMap
from collections.abc import Mapping, MutableMapping

from tilescope.core.static.context import ModuleContext
from tilescope.core.static.enums import enum_member
from tilescope.core.static.evaluate import Shaped, Sym, Value, dtype_name, evaluate, understood
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
    known,
    truth,
)

_STR_METHODS = {"isdigit", "isalpha", "isalnum", "lower", "upper", "strip", "startswith", "endswith", "replace"}
_STR_METHODS |= {"split"}


_BUILDS = {"compile", "get_tir", "get_kernel_source"}
"""Methods of a ``@tilelang.jit`` kernel that build it with the arguments they get."""


class Stop(Exception):
    """The path from here on depends on something unknown."""


class _Library:
    """A call the run-along does not follow: ``evaluate`` decides what it yields."""


_LIBRARY = _Library()


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

    def value(self, node: ast.expr, scope: Mapping[str, Value]) -> Value:
        overlay: dict[str, Value] = {}
        plain = self._substitute(node, scope, overlay)
        return evaluate(plain, ChainMap(overlay, scope), self.context.aliases)  # type: ignore[arg-type]

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
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _IDENTITY:
            left, right = self.value(node.left, scope), self.value(node.comparators[0], scope)
            return self._hold(_identity(node.ops[0], left, right, node), overlay, node)
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

        def walk(index: int, env: Mapping[str, Value]) -> bool:
            if index == len(node.generators):
                self.tick()
                out.append(self.value(node.elt, env))
                return len(out) <= MAX_ITEMS
            gen = node.generators[index]
            items = items_of(self.value(gen.iter, env))
            if items is None:
                return False
            for item in items:
                child: ChainMap[str, Value] = ChainMap({}, env)  # type: ignore[arg-type]
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
        return Record(tuple(items.items()))

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
                self.assign(names[cut].value, tuple(items[cut : len(items) - tail]), scope)  # type: ignore[attr-defined]
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
                scope[target.value.id] = Record(tuple({**dict(base.items), key: value}.items()))
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
                kwargs.update(value.items)  # type: ignore[arg-type]
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
        if not isinstance(result, _Library):
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
    ) -> Value | _Library:
        """The value of a call the run-along can answer (the file's functions, builtins, methods
        of known values), or ``_LIBRARY``."""
        if isinstance(func, ast.Name) and self.context.tilelang.get(func.id, "").endswith(".determine_fp8_type"):
            return self._fp8_type(args, kwargs)
        if isinstance(func, ast.Name):
            target = scope.get(func.id)
            if isinstance(target, Func):
                return Sym(f"{func.id}(…)") if opaque else self.invoke(target, args, kwargs)
            if isinstance(target, Klass):
                return Sym(f"{func.id}(…)")
            found = None if opaque else builtin(func.id, "", args, kwargs)
            return found if found is not None else _LIBRARY
        if not isinstance(func, ast.Attribute):
            if isinstance(base, Func) and not opaque:
                return self.invoke(base, args, kwargs)
            return _LIBRARY
        owner_name = func.value.id if isinstance(func.value, ast.Name) else ""
        attr = func.attr
        if isinstance(base, Ctx) and not opaque:
            if attr == "save_for_backward":
                base.attrs["saved_tensors"] = tuple(args)
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
        if owner_name in ("itertools", "math") and not opaque:
            found = builtin(attr, owner_name, args, kwargs)
            if found is not None:
                return found
        if owner_name in self.context.aliases and attr == "dtype" and len(args) == 1 and dtype_name(args[0]):
            return dtype_name(args[0])
        if attr == "as_torch" and dtype_name(base) and not args:
            return base
        if isinstance(base, str) and attr in _STR_METHODS and all(isinstance(a, str) for a in args) and not kwargs:
            try:
                result = getattr(base, attr)(*args)
                return tuple(result) if isinstance(result, list) else result
            except (TypeError, ValueError):
                return Sym(f"{attr}(…)")
        if isinstance(base, str) and attr == "join" and len(args) == 1 and isinstance(args[0], tuple):
            return base.join(args[0]) if all(isinstance(a, str) for a in args[0]) else Sym("join(…)")
        if owner_name and attr in ("append", "extend", "update") and isinstance(scope, MutableMapping):
            return self._mutate(owner_name, base, attr, args, scope)
        if isinstance(base, Record) and attr in ("get", "items", "keys", "values"):
            if attr == "get" and args:
                return base.get(args[0]) if base.has(args[0]) else (args[1] if len(args) > 1 else None)
            pairs = base.items
            return tuple(pairs if attr == "items" else (p[0 if attr == "keys" else 1] for p in pairs))
        return _LIBRARY

    def _fp8_type(self, args: list[Value], kwargs: dict[str, Value]) -> Value:
        """TileLang's ``determine_fp8_type``: with a CUDA build of PyTorch (a CUDA target), E4M3FN or E5M2."""
        fmt = args[0] if args else kwargs.get("fp8_format", "e4m3")
        if not self.context.target.startswith("sm_") or fmt not in ("e4m3", "e5m2"):
            return Sym("determine_fp8_type(…)")
        return "float8_e4m3fn" if fmt == "e4m3" else "float8_e5m2"

    def _mutate(
        self, name: str, base: Value, attr: str, args: list[Value], scope: MutableMapping[str, Value]
    ) -> Value | _Library:
        if isinstance(base, tuple) and attr == "append" and len(args) == 1 and len(base) < MAX_ITEMS:
            scope[name] = (*base, args[0])
        elif isinstance(base, tuple) and attr == "extend" and len(args) == 1 and items_of(args[0]) is not None:
            scope[name] = (*base, *(items_of(args[0]) or ()))
        elif isinstance(base, Record) and attr == "update" and len(args) == 1 and isinstance(args[0], Record):
            scope[name] = Record(tuple({**dict(base.items), **dict(args[0].items)}.items()))
        elif isinstance(base, tuple | Record):
            scope[name] = Sym(name)
        else:
            return _LIBRARY
        return None

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
        """Names whose call may build a kernel: the kernels, the functions (and classes) that call or
        mention one, transitively, and module names bound to them."""
        if self._reaching is None:
            mentions: dict[str, set[str]] = {}
            for placed in self.context.blocks:
                for stmt in placed.block.statements:
                    for node in ast.walk(stmt):
                        if isinstance(node, ast.FunctionDef | ast.ClassDef):
                            mentions.setdefault(node.name, set()).update(_names(node))
                    if isinstance(stmt, ast.Assign | ast.AnnAssign) and stmt.value is not None:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                        for target in targets:
                            if isinstance(target, ast.Name):
                                mentions.setdefault(target.id, set()).update(_names(stmt.value))
            found = set(self.kernels)
            changed = True
            while changed:
                changed = False
                for name, used in mentions.items():
                    if name not in found and used & found:
                        found.add(name)
                        changed = True
            self._reaching = frozenset(found)
        return self._reaching

    def may_reach(self, node: ast.AST, scope: Mapping[str, Value]) -> bool:
        names = _names(node)
        return bool(names & self.reaching()) or any(self._may_build(scope.get(n)) for n in names)

    def _may_build(self, value: Value) -> bool:
        if isinstance(value, Func):
            return value.node.name in self.reaching()
        return isinstance(value, Klass) and value.name in self.reaching()


_IDENTITY = {ast.Is, ast.IsNot, ast.In, ast.NotIn}


def _identity(op: ast.cmpop, left: Value, right: Value, node: ast.AST) -> Value:
    """``x is None``, ``k in {...}`` on known values."""
    if isinstance(op, ast.Is | ast.IsNot):
        if left is None or right is None:
            if isinstance(left, Sym) or isinstance(right, Sym):
                return Sym(ast.unparse(node)[:80])
            same = left is None and right is None
        elif isinstance(left, bool) and isinstance(right, bool):
            same = left == right
        else:
            return Sym(ast.unparse(node)[:80])  # the identity of other objects is not known here
        return same if isinstance(op, ast.Is) else not same
    keys = items_of(right)
    if keys is None or not known(left) or not all(known(k) for k in keys) or isinstance(left, Shaped):
        return Sym(ast.unparse(node)[:80])
    inside = left in keys if not isinstance(right, str) else isinstance(left, str) and left in right
    return inside if isinstance(op, ast.In) else not inside


def _names(node: ast.AST) -> set[str]:
    """Every name a subtree mentions, attributes included (``X.apply`` mentions ``X`` and ``apply``)."""
    found: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            found.add(child.id)
        elif isinstance(child, ast.Attribute):
            found.add(child.attr)
    return found
