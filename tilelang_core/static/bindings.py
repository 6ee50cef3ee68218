"""Where each kernel parameter's value comes from: a directive, a call in the file, or a default.

Order: the ``# tilescope: K=V ...`` comment above the def (or its decorators, or between them and
the def), then what ``tilescope record`` saw the program pass, then a call in the
same file (also inside a ``main()`` whose defaults, locals or ``argparse`` defaults supply the
values), then the parameter's default. Each ``Binding`` records the line it was found at, so a
hover can say where a number came from.
"""

from __future__ import annotations

import ast
import re

from tilescope.core.model import KernelRef
from tilescope.core.static.context import ModuleContext, bind_assignment
from tilescope.core.static.discover import autotune_configs, default_nodes, discover_block, tuned_names
from tilescope.core.static.evaluate import evaluate
from tilescope.core.static.flow import first_config, reached_calls
from tilescope.core.static.records import Binding
from tilescope.core.static.recover import ParsedBlock, PlacedBlock
from tilescope.core.static.symbolic import Shaped, Sym, Value, is_known_int

_DIRECTIVE = re.compile(r"#\s*tilescope:\s*(.*)")

Call = tuple[ast.Call, dict[str, Value], int]
"""A call, the env around it, and what to add to its line numbers to get file lines."""


def directive(lines: list[str], func: ast.FunctionDef, offset: int) -> tuple[dict[str, str], int | None]:
    """The ``# tilescope: K=V ...`` comment just above the def or its decorators, or between the
    decorators and the ``def``, and its line."""
    if func.decorator_list:
        after = offset + max(d.end_lineno or d.lineno for d in func.decorator_list)
        for index in range(after, offset + func.lineno - 1):
            match = _DIRECTIVE.match(lines[index].strip()) if index < len(lines) else None
            if match:
                pairs = (item.split("=", 1) for item in match.group(1).split() if "=" in item)
                return {k: v for k, v in pairs if v not in ("", "?")}, index + 1
    first = offset + min([func.lineno, *(d.lineno for d in func.decorator_list)])
    index = first - 2
    while 0 <= index < len(lines):
        text = lines[index].strip()
        match = _DIRECTIVE.match(text)
        if match:
            pairs = (item.split("=", 1) for item in match.group(1).split() if "=" in item)
            return {k: v for k, v in pairs if v not in ("", "?")}, index + 1
        if not text.startswith("#"):
            break
        index -= 1
    return {}, None


def _directive_value(text: str) -> Value:
    if text.startswith("[") and text.endswith("]"):
        items = [item.strip() for item in text[1:-1].split(",") if item.strip()]
        if items and all(re.fullmatch(r"-?\d+", item) for item in items):
            return tuple(int(item) for item in items)
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
    for placed in _calling_blocks(context).get(name, ()):
        env = _block_env(placed, context)
        found.extend((call, env, placed.delta) for call in block_calls(placed.block)[name])
    found.sort(key=lambda item: (item[2] + item[0].lineno, item[0].col_offset))
    return found


def _calling_blocks(context: ModuleContext) -> dict[str, list[PlacedBlock]]:
    """For each called name, the blocks that call it (computed once per analysis)."""
    index = context.memo.get("calling-blocks")
    if index is None:
        index = {}
        for placed in context.blocks:
            for name in block_calls(placed.block):
                index.setdefault(name, []).append(placed)
        context.memo["calling-blocks"] = index
    return index


def block_calls(block: ParsedBlock) -> dict[str, list[ast.Call]]:
    """The calls in the block, by the name called (computed once per block)."""
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
        block.keep("calls", calls)
    return calls


def _block_env(placed: PlacedBlock, context: ModuleContext) -> dict[str, Value]:
    """The module env plus the block's function parameters and assignments: ``def main(M=4096)``
    gives ``M=4096``, unless another block calls ``main(args.M)`` with a value known there (the
    ``argparse`` default that ``__main__`` passes in is what runs)."""
    block = placed.block
    key = ("env", context.env_key, _caller_key(placed, context))
    cached = block.memo.get(key)
    if cached is not None:
        return cached
    env = dict(context.env)
    for stmt in block.statements:
        if isinstance(stmt, ast.FunctionDef):
            env.update(_parameter_values(stmt, placed, context, env))
    for node in block.nodes:
        if isinstance(node, ast.Assign):
            bind_assignment(node, env, context.aliases)
    block.keep(key, env)
    return env


def _plain_env(placed: PlacedBlock, context: ModuleContext) -> dict[str, Value]:
    """The module env plus the block's own assignments (what a ``__main__`` block sees)."""
    key = ("plain-env", context.env_key)
    cached = placed.block.memo.get(key)
    if cached is None:
        cached = dict(context.env)
        for node in placed.block.nodes:
            if isinstance(node, ast.Assign):
                bind_assignment(node, cached, context.aliases)
        placed.block.keep(key, cached)
    return cached


def _callers(func: str, placed: PlacedBlock, context: ModuleContext) -> list[tuple[ast.Call, dict[str, Value]]]:
    return [
        (call, _plain_env(other, context))
        for other in _calling_blocks(context).get(func, ())
        if other is not placed
        for call in block_calls(other.block)[func]
    ]


def _caller_key(placed: PlacedBlock, context: ModuleContext) -> tuple[int, ...]:
    """The blocks that call this block's functions (immutable while cached, so their identity
    stands for their text): with the module env, what the block env depends on."""
    names = {s.name for s in placed.block.statements if isinstance(s, ast.FunctionDef)}
    if not names:
        return ()
    index = _calling_blocks(context)
    return tuple(id(other.block) for name in sorted(names) for other in index.get(name, ()) if other is not placed)


def _parameter_values(
    func: ast.FunctionDef, placed: PlacedBlock, context: ModuleContext, env: dict[str, Value]
) -> dict[str, Value]:
    values = {name: evaluate(node, env, context.aliases) for name, node in default_nodes(func).items()}
    positional = [a.arg for a in [*func.args.posonlyargs, *func.args.args]]
    for name in [*positional, *(a.arg for a in func.args.kwonlyargs)]:
        found, _ = _from_calls(
            name, positional, [(c, e, 0) for c, e in _callers(func.name, placed, context)], context.aliases
        )
        if found is not None:
            values[name] = found
    return values


def kernel_names(context: ModuleContext) -> frozenset[str]:
    """The names of every kernel the file defines (computed once per analysis)."""
    names = context.memo.get("kernel-names")
    if names is None:
        names = frozenset(
            ref.name
            for placed in context.blocks
            for ref, _, _ in discover_block(placed.block, context.aliases, context.tilelang)
        )
        context.memo["kernel-names"] = names
    return names


def run_calls(context: ModuleContext, name: str) -> list[Call]:
    """The call that builds ``name`` first when the file runs (``flow.py``); failing that, its calls
    in file order with the values known around each."""
    reached = reached_calls(context, kernel_names(context)).get(name)
    if reached:
        first = reached[0]
        return [(first.call, first.env, first.delta)]
    return call_sites(context, name)


def bindings(
    ref: KernelRef,
    outer: ast.FunctionDef,
    offset: int,
    context: ModuleContext,
    recorded: dict[str, Value] | None = None,
) -> tuple[list[Binding], str]:
    """Each parameter's value and origin (file lines), and the kernel's target. ``recorded`` holds what
    ``tilescope record`` saw the program build with: after the directive, before the file's own calls."""
    written, directive_line = directive(context.lines, outer, offset)
    recorded = recorded or {}
    target = written.pop("target", context.target)
    calls = run_calls(context, ref.name)
    result: list[Binding] = []
    positional = [a.arg for a in [*outer.args.posonlyargs, *outer.args.args]]
    defaults = default_nodes(outer)
    tuned = tuned_names(outer, context.tilelang)
    called: dict[str, tuple[Value, int | None]] = {}
    for param in ref.params:
        value, line = _from_calls(param.name, positional, calls, context.aliases)
        if value is None and ref.style == "jit-eager":
            value, line = _from_tensors(param.name, outer, calls, context.aliases)
        if value is not None:
            called[param.name] = (value, line)
    # The call the run reaches first passes ``*sizes``, ``**config`` or ``topk=x.shape[1]``, of values not
    # known here: what they fill is known only when the program runs. (A call the run does not reach, in a
    # helper with parameters of its own, keeps the old reading: such pass-through values are unknowable.)
    reached = reached_calls(context, kernel_names(context)).get(ref.name)
    first = reached[0] if reached else None
    spread = first is not None and (
        any(k.arg is None for k in first.call.keywords) or any(isinstance(a, ast.Starred) for a in first.call.args)
    )
    passed = _run_only(first.call, first.env, positional, context.aliases) if first is not None else set()
    config, config_line = _config_zero(outer, offset, context, called, tuned) if not spread else ({}, None)
    for param in ref.params:
        if param.name in written:
            result.append(Binding(param.name, _directive_value(written[param.name]), "directive", directive_line))
        elif param.name in recorded:
            result.append(Binding(param.name, recorded[param.name], "recorded", None))
        elif param.name in called:
            result.append(Binding(param.name, called[param.name][0], "call", called[param.name][1]))
        elif param.name in defaults and (spread or param.name in passed):  # not the default: only a run knows
            result.append(Binding(param.name, None, "passed"))
        elif param.name in config:
            result.append(Binding(param.name, config[param.name], "autotune config 0", config_line))
        elif param.name in defaults and _tuned(param.name, defaults[param.name], tuned):
            result.append(Binding(param.name, None, "autotune", offset + defaults[param.name].lineno))
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
    for name, value in recorded.items():  # T.const values the recorded tensors bound
        if name not in written and name not in {p.name for p in ref.params}:
            result.append(Binding(name, value, "recorded", None))
    return result, target


def _config_zero(
    outer: ast.FunctionDef,
    offset: int,
    context: ModuleContext,
    called: dict[str, tuple[Value, int | None]],
    tuned: frozenset[str] | None,
) -> tuple[dict[str, Value], int | None]:
    """The values of an ``@autotune``'s first config and the decorator's line: what the compiler tier
    builds first. None when a call passes a tunable value (TileLang then tunes nothing) or the
    configs are not known."""
    is_tuned, configs = autotune_configs(outer, context.tilelang)
    if not is_tuned or configs is None or (tuned is not None and set(called) & tuned):
        return {}, None
    found = first_config(context, kernel_names(context), configs, {k: v for k, (v, _) in called.items()})
    if not found or (tuned is None and set(called) & set(found)):
        return {}, None
    plain = {k: v for k, v in found.items() if isinstance(v, int | float | str) or _sizes(v)}
    return plain, offset + configs.lineno


def _tuned(name: str, default: ast.expr, tuned: frozenset[str] | None) -> bool:
    """Whether the autotuner picks ``name``: listed in literal configs, or, when the configs are
    computed, any parameter with a number for default (tile sizes, stages, threads; not dtypes)."""
    if tuned is not None:
        return name in tuned
    return isinstance(default, ast.Constant) and isinstance(default.value, int | float)


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
        if isinstance(value, int | float | str) or _sizes(value):
            return value, offset + call.lineno
    return None, None


def _run_only(call: ast.Call, env: dict[str, Value], positional: list[str], aliases: frozenset[str]) -> set[str]:
    """The parameters ``call`` passes a value the source cannot evaluate (``topk=topk_block_index.shape[1]``),
    by keyword or by position; an explicit ``None`` is a value."""
    nodes = {k.arg: k.value for k in call.keywords if k.arg is not None}
    plain = [a for a in call.args if not isinstance(a, ast.Starred)]
    if len(plain) == len(call.args):
        nodes.update(zip(positional, plain, strict=False))
    return {name for name, node in nodes.items() if isinstance(evaluate(node, env, aliases), Sym)}


def _sizes(value: Value) -> bool:
    """A list of known sizes (``[64, 128, 256]``), passed on as a list."""
    return isinstance(value, tuple) and 0 < len(value) <= 256 and all(is_known_int(v) for v in value)


def _tensor_dims(func: ast.FunctionDef, aliases: frozenset[str]) -> dict[str, list[ast.expr]]:
    """``{"A": [M, K]}`` for ``A: T.Tensor((M, K), dtype)`` in an eager kernel's body."""
    found: dict[str, list[ast.expr]] = {}
    for stmt in func.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is None):
            continue
        annotation = stmt.annotation
        shape: ast.expr | None = None
        if isinstance(annotation, ast.Subscript):
            parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
            shape = parts[0]
        elif isinstance(annotation, ast.Call) and annotation.args:
            shape = annotation.args[0]
        if isinstance(shape, ast.Tuple | ast.List):
            found[stmt.target.id] = list(shape.elts)
    return found


def _from_tensors(
    name: str, outer: ast.FunctionDef, calls: list[Call], aliases: frozenset[str]
) -> tuple[Value, int | None]:
    """A ``T.const`` name bound by the shape of the tensor a call passes (``torch.randn(M, K)``)."""
    positional = [a.arg for a in [*outer.args.posonlyargs, *outer.args.args]]
    for tensor, dims in _tensor_dims(outer, aliases).items():
        index = next((i for i, d in enumerate(dims) if isinstance(d, ast.Name) and d.id == name), None)
        if index is None:
            continue
        for call, env, offset in calls:
            node = next((k.value for k in call.keywords if k.arg == tensor), None)
            if node is None and tensor in positional and positional.index(tensor) < len(call.args):
                node = call.args[positional.index(tensor)]
            value = evaluate(node, env, aliases) if node is not None else None
            if isinstance(value, Shaped) and len(value.shape) == len(dims):
                dim = value.shape[index]
                if isinstance(dim, int) and not isinstance(dim, bool):
                    return dim, offset + call.lineno
    return None, None
