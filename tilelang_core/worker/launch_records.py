"""Launch records, in the worker: one per ``T.Kernel`` of a PrimFunc, with its line.

Grid and threads come from the PrimFunc as TileLang built it (128 threads where ``threads=`` is
absent, as TileLang defaults), threads after warp specialisation from the final device module,
and the producer/consumer thread ranges from the module right after ``tl.LayoutInference``.
"""

from __future__ import annotations

import math
from typing import Any

from tilescope.core.compat import spans
from tilescope.core.model import Launch, Span, ThreadRange
from tilescope.core.worker.extract import _has, _int, _line, _visit
from tvm import tirx


def launches(func: Any, device_mod: Any | None, layout_module: Any | None, path: str) -> list[Launch]:
    """One record per ``T.Kernel``, in program order.

    Grid, ``threads=`` and line come from the PrimFunc as built; a kernel without ``threads=`` gets
    the backend's default, read with the threads after warp specialisation from the final device
    kernels (one per launch, in order); producer/consumer ranges from the module after layout
    inference, where the warp-specialised split is still one ``if`` on the thread index.
    """
    found = [_launch_decl(node, path) for node in _outer_launches(func.body)]
    if not found:
        return []
    kernels = _device_kernels(device_mod)
    after = _device_threads(kernels)
    grids = _device_grids(kernels)
    ranges = _ws_ranges(layout_module)
    result = []
    for i, (grid, threads, line) in enumerate(found):
        declared = math.prod(threads) if threads else _DEFAULT_THREADS
        built = after[i] if len(after) == len(found) else declared
        split = ranges[i] if len(ranges) == len(found) else None
        exprs = grids[i][: len(grid)] if -1 in grid and len(grids) == len(found) else []
        thread_ranges = []
        if split is not None and built > split[0]:
            low, high = ("consumer", "producer") if split[1] else ("producer", "consumer")
            thread_ranges = [ThreadRange(low, 0, split[0]), ThreadRange(high, split[0], built)]
        result.append(
            Launch(
                grid=grid,
                threads=declared,
                threads_after_ws=built,
                span=Span(line=line) if line else None,
                threads_given=bool(threads),
                thread_ranges=thread_ranges,
                grid_exprs=exprs,
            )
        )
    return result


_DEFAULT_THREADS = 128
"""What ``MaterializeKernelLaunch`` gives a ``T.Kernel`` without ``threads=`` on every GPU backend."""


def _outer_launches(body: Any) -> list[Any]:
    """The outermost ``blockIdx`` loops: each opens one ``T.Kernel``."""
    outer: list[Any] = []

    def walk(node: Any, inside: bool) -> None:
        is_block = _block_binding(node)
        if is_block and not inside:
            outer.append(node)
        for child in _children(node):
            walk(child, inside or is_block)

    walk(body, False)
    return outer


def _block_binding(node: Any) -> bool:
    """A ``blockIdx`` loop as built, or the ``launch_thread`` attribute it becomes once launches are materialised."""
    if isinstance(node, tirx.For) and node.thread_binding is not None:
        return str(node.thread_binding.thread_tag).startswith("blockIdx")
    if isinstance(node, tirx.AttrStmt) and str(node.attr_key) == "thread_extent":
        return str(getattr(node.node, "thread_tag", "")).startswith("blockIdx")
    return False


def _children(node: Any) -> list[Any]:
    if isinstance(node, tirx.SeqStmt):
        return list(node.seq)
    if isinstance(node, tirx.IfThenElse):
        return [node.then_case] + ([node.else_case] if node.else_case is not None else [])
    if isinstance(node, tirx.SBlockRealize):
        return [node.block]
    body = getattr(node, "body", None)
    return [body] if isinstance(body, tirx.Stmt) else []


def _launch_decl(node: Any, path: str) -> tuple[list[int], list[int], int | None]:
    grid: dict[str, int] = {}
    threads: list[int] = []
    line = _line(spans.stmt_span(node), path)

    bound_threads: dict[str, int] = {}

    def visit(n: Any) -> None:
        tag, extent = None, None
        if isinstance(n, tirx.For) and n.thread_binding is not None:
            tag, extent = str(n.thread_binding.thread_tag), n.extent
        elif isinstance(n, tirx.AttrStmt) and str(n.attr_key) == "thread_extent":
            tag, extent = str(getattr(n.node, "thread_tag", "")), n.value  # releases before 0.1.15
        if tag is not None and tag.startswith("blockIdx"):
            grid[tag] = _int(extent)
        elif tag is not None and tag.startswith("threadIdx"):
            bound_threads[tag] = _int(extent)
        if isinstance(n, tirx.SBlock) and "tl.launch_threads" in n.annotations and not threads:
            threads[:] = [_int(t) for t in n.annotations["tl.launch_threads"]]

    _visit(node, visit)
    if not threads and bound_threads:
        threads[:] = list(bound_threads.values())
    return [grid.get(f"blockIdx.{axis}", 1) for axis in "xyz"][: max(1, len(grid))], threads, line


def _device_threads(kernels: list[dict[str, Any]]) -> list[int]:
    """Threads per block of each device kernel (``_device_kernels``), in launch order."""
    return [math.prod(int(v) for k, v in extent.items() if k.startswith("threadIdx")) for extent in kernels]


def _device_kernels(device_mod: Any | None) -> list[dict[str, Any]]:
    """The ``thread_extent`` of each device kernel, in launch order (``main_kernel``, ``main_kernel_1``...)."""
    if device_mod is None:
        return []
    kernels = []
    for var, f in device_mod.functions.items():
        if _has(f, "thread_extent"):
            name = str(var.name_hint)
            suffix = name.rsplit("_", 1)[-1]
            kernels.append((int(suffix) if suffix.isdigit() else 0, name, dict(f.attrs["thread_extent"])))
    return [extent for _, _, extent in sorted(kernels, key=lambda k: k[:2])]


def _device_grids(kernels: list[dict[str, Any]]) -> list[list[str]]:
    """Each device kernel's grid (``_device_kernels``) as it is launched, extent by extent as text
    (``(M + 31) // 32``)."""
    return [[str(extent.get(f"blockIdx.{axis}", 1)) for axis in "xyz"] for extent in kernels]


def _ws_ranges(layout_module: Any | None) -> list[tuple[int, bool] | None]:
    """For each launch, ``n`` of its warp-specialised ``if tx < n`` split, and whether threads below ``n`` compute."""
    if layout_module is None:
        return []
    result: list[tuple[int, bool] | None] = []
    for func in layout_module.functions.values():
        if not isinstance(func, tirx.PrimFunc):
            continue
        for launch_node in _outer_launches(func.body):
            scopes: list[Any] = []

            def visit(n: Any, scopes: list[Any] = scopes) -> None:
                if isinstance(n, tirx.AttrStmt) and str(n.attr_key) == "kWarpSpecializationScope":
                    scopes.append(n.body)

            _visit(launch_node, visit)
            result.append(_split(scopes[-1]) if scopes else None)
    return result


def _split(body: Any) -> tuple[int, bool] | None:
    if not isinstance(body, tirx.IfThenElse) or body.else_case is None:
        return None
    cond = body.condition
    if not isinstance(cond, tirx.LT) or not isinstance(cond.b, tirx.IntImm):
        return None
    return int(cond.b.value), _has_gemm(body.then_case)


def _has_gemm(stmt: Any) -> bool:
    found = []

    def visit(n: Any) -> None:
        if isinstance(n, tirx.Call) and "gemm" in str(getattr(n.op, "name", "")):
            found.append(n)

    _visit(stmt, visit)
    return bool(found)
