"""Evaluate an inferred layout over its whole tile, from the expression strings in the model.

The model carries TVM's printed expressions (``_i % 64 // 16 * 32 + _i % 8 * 4 + _j % 8 // 2``), so
every consumer can answer "which thread owns cell (r, c), in which register, at which shared
address" without loading TVM. The expressions are parsed with ``ast`` and walked against a fixed
whitelist of operators, each applied to numpy arrays spanning the whole tile at once: a 128×128
fragment costs one pass over 16,384 integers per node, and nothing the model holds is ever
executed as code. TVM's ``//`` and ``%`` are floor division and floor modulo, as numpy's are.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from tilescope.core.model import Layout


class LayoutExprError(ValueError):
    """An expression uses syntax or a function outside what TVM prints for index arithmetic."""


def _truncdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) ^ (b < 0), -q, q)


def _truncmod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - b * _truncdiv(a, b)


def _cast(_dtype: str, value: np.ndarray) -> np.ndarray:
    return np.asarray(value, dtype=np.int64)


_BINOPS: dict[type, Callable[[np.ndarray | int | bool, np.ndarray | int | bool], np.ndarray]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.FloorDiv: np.floor_divide,
    ast.Mod: np.mod,
    ast.BitXor: np.bitwise_xor,
    ast.BitAnd: np.bitwise_and,
    ast.BitOr: np.bitwise_or,
    ast.LShift: np.left_shift,
    ast.RShift: np.right_shift,
}

_COMPARE: dict[type, Callable[[np.ndarray | int | bool, np.ndarray | int | bool], np.ndarray]] = {
    ast.Lt: np.less,
    ast.LtE: np.less_equal,
    ast.Gt: np.greater,
    ast.GtE: np.greater_equal,
    ast.Eq: np.equal,
    ast.NotEq: np.not_equal,
}

_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "floordiv": np.floor_divide,
    "floormod": np.mod,
    "truncdiv": _truncdiv,
    "Div": _truncdiv,
    "truncmod": _truncmod,
    "shift_right": np.right_shift,
    "shift_left": np.left_shift,
    "bitwise_xor": np.bitwise_xor,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_not": np.invert,
    "min": np.minimum,
    "max": np.maximum,
    "if_then_else": np.where,
    "Select": np.where,
    "Cast": _cast,
    "abs": np.abs,
}
"""``T.<name>`` calls TVM prints inside index expressions (``T.Div`` is its truncating division)."""

_INT_CONSTRUCTORS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


@lru_cache(maxsize=512)
def _parse(expr: str) -> ast.expr:
    try:
        return ast.parse(expr.strip(), mode="eval").body
    except SyntaxError as exc:
        raise LayoutExprError(f"not an index expression: {expr!r}") from exc


def evaluate(expr: str, env: Mapping[str, np.ndarray | int]) -> np.ndarray:
    """Evaluate one printed TVM index expression with numpy, variables bound by ``env``.

    Arrays in ``env`` broadcast against each other, so binding ``_i`` to a column and ``_j`` to a
    row evaluates the whole tile in one walk.
    """
    return np.asarray(_eval(_parse(expr), env), dtype=np.int64)


def _eval(node: ast.expr, env: Mapping[str, np.ndarray | int]) -> np.ndarray | int | bool:
    match node:
        case ast.Constant(value=bool() | int() as value):
            return value
        case ast.Name(id=name):
            if name not in env:
                raise LayoutExprError(f"unknown variable {name!r} (known: {', '.join(env)})")
            return env[name]
        case ast.BinOp(left=left, op=op, right=right) if type(op) in _BINOPS:
            return _BINOPS[type(op)](_eval(left, env), _eval(right, env))
        case ast.UnaryOp(op=ast.USub(), operand=operand):
            return np.negative(_eval(operand, env))
        case ast.UnaryOp(op=ast.Invert(), operand=operand):
            return np.invert(_eval(operand, env))
        case ast.UnaryOp(op=ast.Not(), operand=operand):
            return np.logical_not(_eval(operand, env))
        case ast.BoolOp(op=op, values=values):
            combine = np.logical_and if isinstance(op, ast.And) else np.logical_or
            combined = _eval(values[0], env)
            for value in values[1:]:
                combined = combine(combined, _eval(value, env))
            return combined
        case ast.Compare(left=left, ops=ops, comparators=comparators):
            result: np.ndarray | bool = True
            lhs = _eval(left, env)
            for op, comparator in zip(ops, comparators, strict=True):
                if type(op) not in _COMPARE:
                    raise LayoutExprError(f"unsupported comparison {type(op).__name__}")
                rhs = _eval(comparator, env)
                result = np.logical_and(result, _COMPARE[type(op)](lhs, rhs))
                lhs = rhs
            return result
        case ast.IfExp(test=test, body=body, orelse=orelse):
            return np.where(_eval(test, env), _eval(body, env), _eval(orelse, env))
        case ast.Call(func=ast.Attribute(value=ast.Name(id="T"), attr=attr), args=args, keywords=[]):
            if attr in _INT_CONSTRUCTORS and len(args) == 1:
                return _eval(args[0], env)
            if attr == "Cast" and len(args) == 2:
                return _eval(args[1], env)
            if attr not in _FUNCTIONS:
                raise LayoutExprError(f"unsupported function T.{attr}")
            return _FUNCTIONS[attr](*(_eval(arg, env) for arg in args))
        case ast.Call(func=ast.Name(id="min" | "max" as name), args=args, keywords=[]):
            return _FUNCTIONS[name](*(_eval(arg, env) for arg in args))
    raise LayoutExprError(f"unsupported syntax in index expression: {ast.unparse(node)!r}")


def _grid(shape: list[int], names: list[str]) -> dict[str, np.ndarray]:
    """One broadcastable coordinate array per input variable (``np.ogrid``), tile-shaped together."""
    axes = np.ogrid[tuple(slice(0, n) for n in shape)]
    return {name: axis.astype(np.int64) for name, axis in zip(names, axes, strict=True)}


def _row_major(coords: list[np.ndarray], shape: list[int]) -> np.ndarray:
    flat = np.zeros(np.broadcast(*coords).shape if coords else (), dtype=np.int64)
    for coord, extent in zip(coords, shape, strict=True):
        flat = flat * extent + coord
    return flat


def _input_names(layout: Layout) -> list[str]:
    """The tile's own coordinates: ``input_vars`` without the replicate variable, if listed there."""
    names = [v for v in layout.input_vars if v != layout.replicate_var]
    if len(names) != len(layout.input_shape):
        raise LayoutExprError(
            f"{layout.buffer}: {len(names)} input variables {names} for a rank-{len(layout.input_shape)} tile"
        )
    return names


@dataclass(frozen=True)
class FragmentMap:
    """Who holds each element of a fragment, and where in its registers.

    ``thread[r, *cell]`` is the thread holding replica ``r`` of ``cell``; ``local[*cell]`` is the
    row-major offset into that thread's ``elements_per_thread`` registers (the same for every
    replica); ``cells[t, k]`` is the flat row-major cell thread ``t`` holds in register ``k``
    (``-1`` where it holds nothing).
    """

    buffer: str
    shape: tuple[int, ...]
    thread: np.ndarray
    local: np.ndarray
    cells: np.ndarray
    thread_extent: int
    replicate: int

    @property
    def elements_per_thread(self) -> int:
        return int(self.cells.shape[1])

    def owners(self, *cell: int) -> list[int]:
        """Every thread holding ``cell``, one per replica."""
        return [int(t) for t in self.thread[(slice(None), *cell)]]

    def cell_of(self, thread: int, register: int) -> tuple[int, ...] | None:
        flat = int(self.cells[thread, register])
        return None if flat < 0 else tuple(int(x) for x in np.unravel_index(flat, self.shape))


def fragment_map(layout: Layout) -> FragmentMap:
    """Evaluate a fragment's thread and index mappings on every cell and replica."""
    if layout.kind != "fragment" or layout.thread is None:
        raise LayoutExprError(f"{layout.buffer} is a {layout.kind}, not a fragment")
    shape = list(layout.input_shape)
    names = _input_names(layout)
    replicate = layout.replicate or 1
    env: dict[str, np.ndarray | int] = dict(_grid(shape, names))
    full = (replicate, *shape)
    if layout.replicate_var:
        env[layout.replicate_var] = np.arange(replicate, dtype=np.int64).reshape((replicate,) + (1,) * len(shape))
    thread = np.broadcast_to(evaluate(layout.thread, env), full).copy()
    index_coords = [np.broadcast_to(evaluate(e, env), full) for e in layout.index]
    local_full = _row_major(index_coords, list(layout.output_shape))
    local = local_full[0].copy()

    extent = layout.thread_extent or int(thread.max()) + 1
    per_thread = layout.elements_per_thread or int(np.prod(layout.output_shape))
    cells = np.full((extent, per_thread), -1, dtype=np.int64)
    flat_cell = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), full)
    inside = (thread >= 0) & (thread < extent) & (local_full >= 0) & (local_full < per_thread)
    cells[thread[inside], local_full[inside]] = flat_cell[inside]
    return FragmentMap(layout.buffer, tuple(shape), thread, local, cells, extent, replicate)


@dataclass(frozen=True)
class SharedMap:
    """Where each logical element of a shared buffer lives.

    ``coords`` holds one array per output dimension of the layout; ``offset`` is the row-major
    element offset into the physical buffer (what ``FlattenBuffer`` later produces), the quantity
    bank arithmetic needs.
    """

    buffer: str
    shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    coords: tuple[np.ndarray, ...]
    offset: np.ndarray


def shared_map(layout: Layout) -> SharedMap:
    """Evaluate a (shared-memory) layout's forward index on every logical element."""
    shape = list(layout.input_shape)
    env = _grid(shape, _input_names(layout))
    coords = tuple(np.broadcast_to(evaluate(e, env), tuple(shape)) for e in layout.index)
    offset = _row_major(list(coords), list(layout.output_shape))
    return SharedMap(layout.buffer, tuple(shape), tuple(layout.output_shape), coords, offset)


def is_bijective(smap: SharedMap) -> bool:
    """True when no two logical elements share a physical slot (a sound layout, padded or not)."""
    return np.unique(smap.offset).size == smap.offset.size
