"""Plain TileLang 0.1.15 lowering an Ascend kernel, as its guide says: the reference for the Ascend truth.

It shares nothing with Tilescope's worker: the file is imported the ordinary way and the kernel
built from its recorded arguments (``benchmarks/plain_lowering.build``), then lowered with
``with tvm.target.Target("ascend") as t: tilelang.lower(f, target=t)`` in the pass context
``tilelang.compile`` opens (``opt_level=3`` and the instance's ``pass_configs``). The facts are read
with TVM's own API and from the generated AscendC text:

- ``buffers``: the PrimFunc's parameters and every ``alloc_buffer`` of its blocks, as
  ``[name, shape, dtype, scope]`` (``shared.l1`` is L1, ``shared.l0a/b/c`` L0A/B/C, ``shared.dyn``
  and ``shared`` the Unified Buffer, ``global`` GM);
- ``passes``: the top-level pass names in order;
- ``flags``: the synchronisation calls in the AscendC source, by name (``asc_sync_notify``,
  ``asc_sync_wait``, ``asc_sync_intra_arrive``, ``asc_sync_intra_wait`` between Cube and Vector,
  ``asc_sync_inter_arrive``, ``asc_sync_inter_wait`` between AI cores), and their total;
- ``cores``: the kernel's kind (``mix``, ``cube`` or ``vector`` from ``__mix__``/``__cube__``/
  ``__vector__``) and, per section (``if ASC_IS_AIC {`` and ``if ASC_IS_AIV {``, or the whole body of
  a one-core kernel), the kernel's buffers and parameters it names and the flag calls it holds.

Run as a script it reads instances as JSON lines on stdin (``truth.py`` writes them) and answers one
line per instance, in this one process.
"""

from __future__ import annotations

import os
import re
import sys
import time
import traceback
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import plain_lowering  # (benchmarks/plain_lowering.py: the ordinary import and build)

FLAG_CALLS = (
    "asc_sync_notify",
    "asc_sync_wait",
    "asc_sync_intra_arrive",
    "asc_sync_intra_wait",
    "asc_sync_inter_arrive",
    "asc_sync_inter_wait",
)
_FLAG = re.compile(r"\b(" + "|".join(FLAG_CALLS) + r")\(")
_KIND = re.compile(r"__global__\s+(__mix__|__cube__|__vector__)")
_DECL = re.compile(r"(?:__gm__|__cbuf__|__ca__|__cb__|__cc__|__ubuf__)\s+[\w:]+\s*\*\s*(\w+)")


def sections(source: str) -> dict[str, str]:
    """The text of each core's section: ``{"aic": ..., "aiv": ...}``; a one-core kernel is all one section."""
    found: dict[str, str] = {}
    for name, marker in (("aic", "if ASC_IS_AIC {"), ("aiv", "if ASC_IS_AIV {")):
        at = source.find(marker)
        if at < 0:
            continue
        depth, i = 0, at + len(marker) - 1
        for i in range(at + len(marker) - 1, len(source)):
            depth += {"{": 1, "}": -1}.get(source[i], 0)
            if depth == 0:
                break
        found[name] = source[at : i + 1]
    return found


def cores(source: str) -> dict[str, Any]:
    kind = _KIND.search(source)
    mode = kind.group(1).strip("_") if kind else "unknown"
    names = sorted(set(_DECL.findall(source)))
    parts = sections(source)
    if not parts:
        parts = {"aic" if mode == "cube" else "aiv": source}
    split = {}
    for core, text in parts.items():
        split[core] = {
            "buffers": sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", text)),
            "flags": len(_FLAG.findall(text)),
        }
    return {"kind": mode, **split}


def _buffer(buf: Any) -> list[Any]:
    from tvm import tirx

    shape = [int(d) if isinstance(d, int | tirx.IntImm) else str(d) for d in buf.shape]
    return [str(buf.name), shape, str(buf.dtype), str(buf.scope())]


def user_line(err: BaseException, path: str) -> int | None:
    """The last line of the user's file in the failure's traceback."""
    lines = [f.lineno for f in traceback.extract_tb(err.__traceback__) if os.path.abspath(f.filename) == path]
    return lines[-1] if lines else None


class _Stop(BaseException):
    pass


def _inner(entry: dict[str, Any], root: str) -> tuple[Any, Any]:
    """A factory whose own ``@tilelang.jit`` it calls (``return _build()``): called as the program calls it,
    and its jit's ``compile`` stopped with the PrimFunc it was about to compile (and the jit, for its
    ``target`` and ``pass_configs``)."""
    from tilelang.jit import JITImpl

    factory = getattr(plain_lowering._import(os.path.join(root, entry["file"])), entry["kernel"])
    seen: list[Any] = []
    original = JITImpl.compile

    def compile(self: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append((self.get_tir(*args, **kwargs), self))
        raise _Stop

    JITImpl.compile = compile
    try:
        factory(**entry["args"])
    except _Stop:
        pass
    finally:
        JITImpl.compile = original
    return seen[0]


def lower(entry: dict[str, Any], root: str) -> dict[str, Any]:
    import tilelang
    import tvm
    from tvm import tirx

    start = time.perf_counter()
    func, obj = _inner(entry, root) if entry.get("inner") else plain_lowering.build(entry, root)
    built = time.perf_counter()
    configs: dict[str, Any] = {}
    if func.attrs is not None and "tilelang_pass_configs" in func.attrs:
        configs.update({str(k): v for k, v in dict(func.attrs["tilelang_pass_configs"]).items()})
    configs.update({str(getattr(k, "value", k)): v for k, v in (getattr(obj, "pass_configs", None) or {}).items()})
    configs.update(entry.get("pass_configs") or {})
    names: list[str] = []
    depth = [0]

    @tvm.instrument.pass_instrument
    class Names:
        def run_before_pass(self, mod: Any, info: Any) -> None:
            depth[0] += 1

        def run_after_pass(self, mod: Any, info: Any) -> None:
            depth[0] -= 1
            if depth[0] == 0:
                names.append(str(info.name))

    with (
        tvm.target.Target("ascend") as target,
        tvm.transform.PassContext(opt_level=3, config=configs, instruments=[Names()]),
    ):
        artifact = tilelang.lower(func, target=target)
    lowered = time.perf_counter()
    buffers = [_buffer(func.buffer_map[p]) for p in func.params if p in func.buffer_map]

    def allocs(node: Any) -> None:
        if isinstance(node, tirx.SBlock):
            buffers.extend(_buffer(b) for b in node.alloc_buffers)

    tirx.stmt_functor.post_order_visit(func.body, allocs)
    source = artifact.kernel_source
    flags = {name: len(re.findall(rf"\b{name}\(", source)) for name in FLAG_CALLS}
    return {
        "pass_configs": {k: v if isinstance(v, bool | int | float | str) else str(v) for k, v in configs.items()},
        "buffers": sorted(buffers),
        "passes": names,
        "flags": {**{k: v for k, v in flags.items() if v}, "total": sum(flags.values())},
        "cores": cores(source),
        "source_lines": source.count("\n"),
        "lower_s": round(lowered - built, 4),
        "build_s": round(built - start, 4),
    }


def _failed(err: BaseException, entry: dict[str, Any], root: str) -> dict[str, Any]:
    """The error's first line and the user's line it came from."""
    message = str(err).strip()
    first = next((x for x in message.splitlines() if x.strip()), "")
    return {
        "error": f"{type(err).__name__}: {first[:300]}",
        "error_line": user_line(err, os.path.abspath(os.path.join(root, entry["file"]))),
    }


def main() -> None:
    plain_lowering.serve(lower, _failed, echoed=("file", "kernel", "args"))


if __name__ == "__main__":
    main()
