"""Where each kernel parameter's value comes from: a directive, a call in the file, or a default.

Order: the ``# tilescope: K=V ...`` comment above the def (or its decorators), then a call in the
same file (also inside a ``main()`` whose defaults, locals or ``argparse`` defaults supply the
values), then the parameter's default. Each ``Binding`` records the line it was found at, so a
hover can say where a number came from.
"""

from __future__ import annotations

import ast
import re

from tilescope.core.model import KernelRef
from tilescope.core.static.context import ModuleContext, bind_assignment
from tilescope.core.static.discover import default_nodes
from tilescope.core.static.evaluate import Sym, Value, evaluate
from tilescope.core.static.records import Binding
from tilescope.core.static.recover import ParsedBlock, PlacedBlock

_DIRECTIVE = re.compile(r"#\s*tilescope:\s*(.*)")

Call = tuple[ast.Call, dict[str, Value], int]
"""A call, the env around it, and what to add to its line numbers to get file lines."""


def directive(lines: list[str], func: ast.FunctionDef, offset: int) -> tuple[dict[str, str], int | None]:
    """The ``# tilescope: K=V ...`` comment just above the def or its decorators, and its line."""
    first = offset + min([func.lineno, *(d.lineno for d in func.decorator_list)])
    index = first - 2
    while 0 <= index < len(lines):
        text = lines[index].strip()
        match = _DIRECTIVE.match(text)
        if match:
            return dict(item.split("=", 1) for item in match.group(1).split() if "=" in item), index + 1
        if not text.startswith("#"):
            break
        index -= 1
    return {}, None


def _directive_value(text: str) -> Value:
    try:
        return int(text, 0)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text.strip("\"'")


def call_sites(context: ModuleContext, name: str) -> list[Call]:
    """Calls of ``name(...)`` / ``name.compile(...)`` in the file, in file order, each with its env."""
    found: list[Call] = []
    for placed in context.blocks:
        calls = _block_calls(placed.block).get(name)
        if calls:
            env = _block_env(placed, context)
            found.extend((call, env, placed.delta) for call in calls)
    found.sort(key=lambda item: (item[2] + item[0].lineno, item[0].col_offset))
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


def _block_env(placed: PlacedBlock, context: ModuleContext) -> dict[str, Value]:
    """The module env plus the block's own defaults and assignments (``def main(M=4096)``)."""
    block = placed.block
    key = ("env", context.env_key)
    cached = block.memo.get(key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    env = dict(context.env)
    for stmt in block.statements:
        if isinstance(stmt, ast.FunctionDef):
            for name, default in default_nodes(stmt).items():
                env[name] = evaluate(default, env, context.aliases)
    for node in block.nodes:
        if isinstance(node, ast.Assign):
            bind_assignment(node, env, context.aliases)
    block.memo[key] = env
    return env


def bindings(ref: KernelRef, outer: ast.FunctionDef, offset: int, context: ModuleContext) -> tuple[list[Binding], str]:
    """Each parameter's value and origin (file lines), and the kernel's target."""
    written, directive_line = directive(context.lines, outer, offset)
    target = written.pop("target", context.target)
    calls = call_sites(context, ref.name)
    result: list[Binding] = []
    positional = [a.arg for a in [*outer.args.posonlyargs, *outer.args.args]]
    defaults = default_nodes(outer)
    for param in ref.params:
        if param.name in written:
            result.append(Binding(param.name, _directive_value(written[param.name]), "directive", directive_line))
            continue
        value, line = _from_calls(param.name, positional, calls, context.aliases)
        if value is not None:
            result.append(Binding(param.name, value, "call", line))
        elif param.name in defaults:
            default = evaluate(defaults[param.name], context.env, context.aliases)
            known = None if isinstance(default, Sym | tuple) else default
            origin = "default" if known is not None else "unknown"
            result.append(Binding(param.name, known, origin, offset + defaults[param.name].lineno))
        else:
            result.append(Binding(param.name, None, "unknown"))
    for name, text in written.items():
        if name not in {p.name for p in ref.params}:
            result.append(Binding(name, _directive_value(text), "directive", directive_line))
    return result, target


def _from_calls(
    name: str, positional: list[str], calls: list[Call], aliases: frozenset[str]
) -> tuple[Value, int | None]:
    for call, env, offset in calls:
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
            return value, offset + call.lineno
    return None, None
