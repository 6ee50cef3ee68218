"""Plain TileLang, as a user runs it: import the file, build the kernel, ``tilelang.lower`` it.

This is the reference the compiler-tier corpus benchmark compares Tilescope with, so it shares
no code with Tilescope's loader or extractor. The module is imported the ordinary way (top-level
code runs, as it does for the user; when a top-level launch fails for want of a GPU, the
definitions above it stay in place, as in an interactive session); ``@autotune`` is unwrapped to
the ``@tilelang.jit`` it tunes (the recorded config is built, nothing is tuned); the pass
context is the one ``tilelang.compile`` opens; the facts (buffers, one launch per device
kernel, layouts right after ``tl.LayoutInference``) are read here with TVM's own API. Run as a
script it reads instances as JSON lines on stdin and writes one result per line, all in this one
process, one after another.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import json
import math
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

_modules: dict[str, Any] = {}


def _import(path: str, name: str | None = None) -> Any:
    """The file's module; ``name`` imports it by that dotted name (a namespace package's module)."""
    if path in _modules:
        return _modules[path]
    if name is not None:
        _modules[path] = importlib.import_module(name)
        return _modules[path]
    folder = os.path.dirname(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    root = folder
    while os.path.isfile(os.path.join(root, "__init__.py")):
        parts.insert(0, os.path.basename(root))
        root = os.path.dirname(root)
    for entry in dict.fromkeys([folder, root]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    if len(parts) > 1:
        module = importlib.import_module(".".join(parts))
    else:
        spec = importlib.util.spec_from_file_location(f"plain_{len(_modules)}_{parts[0]}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        with contextlib.suppress(Exception):  # a top-level launch needing a GPU: definitions above it stay
            spec.loader.exec_module(module)
    _modules[path] = module
    return module


def _arch(target: Any) -> str:
    text = str(target or "")
    match = re.search(r"sm_\d+a?", text)
    return match.group(0) if match else "sm_90"


def build(entry: dict[str, Any], root: str) -> tuple[Any, Any]:
    """The PrimFunc of a recorded instance and the kernel object it came from."""
    from tilescope.core.worker.record_rebuild import decode  # the record's own form: dataclasses, enums, dtypes

    if root not in sys.path:
        sys.path.insert(0, root)
    module = _import(os.path.join(root, entry["file"]), entry.get("module"))
    obj = getattr(module, entry["kernel"])
    obj = getattr(obj, "jit_impl", obj)  # @autotune over @tilelang.jit: build the recorded config, tune nothing
    args = {k: decode(v) for k, v in (entry.get("args") or {}).items()}
    extra = {k: v for k, v in (entry.get("consts") or {}).items() if k not in args}
    make = getattr(obj, "get_tir", obj)
    if not extra:
        return make(**args), obj
    try:
        return make(**args, **extra), obj  # eager kernels: the T.const values the tensors bound
    except TypeError:
        return make(**args), obj  # a factory whose tensor extents are not parameters of its own


def lower(entry: dict[str, Any], root: str) -> dict[str, Any]:
    start = time.perf_counter()
    func, obj = build(entry, root)
    return facts(func, obj, start)


def facts(func: Any, obj: Any, start: float) -> dict[str, Any]:
    """Lower ``func`` (built from the kernel object ``obj``) as ``tilelang.compile`` would, and read the facts
    compared with Tilescope's: buffers, one launch per device kernel, layouts after ``tl.LayoutInference``;
    ``seconds`` counts from ``start`` (before the build)."""
    import tilelang
    import tvm
    from tvm import tirx

    configs: dict[str, Any] = {}
    if func.attrs is not None and "tilelang_pass_configs" in func.attrs:
        configs.update({str(k): v for k, v in dict(func.attrs["tilelang_pass_configs"]).items()})
    configs.update({str(getattr(k, "value", k)): v for k, v in (getattr(obj, "pass_configs", None) or {}).items()})
    arch = _arch(getattr(obj, "target", None))
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    after_layout: list[Any] = []

    @tvm.instrument.pass_instrument
    class Grab:
        def run_after_pass(self, mod: Any, info: Any) -> None:
            if info.name == "tl.LayoutInference" and not after_layout:
                after_layout.append(mod)

    with target, tvm.transform.PassContext(opt_level=3, config=configs, instruments=[Grab()]):
        artifact = tilelang.lower(func, target=target)
    seconds = time.perf_counter() - start

    buffers = [_buffer(func.buffer_map[p]) for p in func.params if p in func.buffer_map]

    def allocs(node: Any) -> None:
        if isinstance(node, tirx.SBlock):
            buffers.extend(_buffer(b) for b in node.alloc_buffers)

    tirx.stmt_functor.post_order_visit(func.body, allocs)
    launches = []
    for var, device in artifact.device_mod.functions.items():
        if device.attrs is None or "thread_extent" not in device.attrs:
            continue
        extent = {k: _extent(v) for k, v in dict(device.attrs["thread_extent"]).items()}
        suffix = str(var.name_hint).rsplit("_", 1)[-1]
        grid = [extent.get(f"blockIdx.{a}", 1) for a in "xyz"]
        counts = [v for k, v in extent.items() if k.startswith("threadIdx")]
        threads = math.prod(counts) if all(isinstance(v, int) for v in counts) else " * ".join(map(str, counts))
        launches.append((int(suffix) if suffix.isdigit() else 0, grid, threads))
    layouts: dict[str, Any] = {}

    def layout_maps(node: Any) -> None:
        if isinstance(node, tirx.SBlock) and "layout_map" in node.annotations:
            for buf, layout in node.annotations["layout_map"].items():
                layouts.setdefault(
                    str(buf.name),
                    {
                        "input_shape": [int(d) for d in layout.get_input_shape()],
                        "index": [str(e) for e in layout.get_forward_index()],
                        "thread": str(layout.forward_thread) if hasattr(layout, "forward_thread") else None,
                    },
                )

    for f in (after_layout[0] if after_layout else tvm.IRModule()).functions.values():
        if isinstance(f, tirx.PrimFunc):
            tirx.stmt_functor.post_order_visit(f.body, layout_maps)
    return {
        "target": arch,
        "pass_configs": {k: v if isinstance(v, bool | int | float | str) else str(v) for k, v in configs.items()},
        "buffers": sorted(buffers),
        "launches": [[grid, threads] for _, grid, threads in sorted(launches)],
        "layouts": layouts,
        "seconds": round(seconds, 3),
    }


def _extent(value: Any) -> int | str:
    """A launch extent: a number, or the expression of a size known at run time (a dynamic grid)."""
    from tvm import tirx

    return int(value) if isinstance(value, int | tirx.IntImm) else str(value)


def _buffer(buf: Any) -> list[Any]:
    from tvm import tirx

    shape = [int(d) if isinstance(d, int | tirx.IntImm) else str(d) for d in buf.shape]
    return [str(buf.name), shape, str(buf.dtype), str(buf.scope())]


def serve(
    lower_one: Callable[[dict[str, Any], str], dict[str, Any]],
    failed: Callable[[BaseException, dict[str, Any], str], dict[str, Any]],
    echoed: tuple[str, ...] = ("file", "kernel"),
    root: str | None = None,
) -> None:
    """Lower every instance on stdin in this process, one result line each (the entry's ``echoed`` keys,
    then ``lower_one``'s facts or ``failed``'s account); the user's prints go to stderr. ``root``: the
    corpus the entries' paths are under (default: the first command-line argument)."""
    root = root if root is not None else sys.argv[1]
    out = sys.stdout
    sys.stdout = sys.stderr
    import tilelang  # noqa: F401  (imported once, before the clock of the first kernel)

    for line in sys.stdin:
        entry = json.loads(line)
        try:
            with contextlib.redirect_stderr(io.StringIO()):
                result = {"ok": True, **lower_one(entry, root)}
        except BaseException as err:  # SystemExit from a top level counts as a failure too
            result = {"ok": False, **failed(err, entry, root)}
        out.write(json.dumps({**{k: entry[k] for k in echoed}, **result}) + "\n")
        out.flush()


def _failed(err: BaseException, _entry: dict[str, Any], _root: str) -> dict[str, Any]:
    return {"error": f"{type(err).__name__}: {str(err).strip()[:300]}"}


def main() -> None:
    serve(lower, _failed)


if __name__ == "__main__":
    main()
