"""Write ``ascend_truth.json``: which kernels of the Ascend corpus plain TileLang lowers, and where
the others fail, the truth ``test_ascend_corpus.py`` holds the static tier's errors against.

How it is made (no NPU, no CANN; this machine's CPU and the TileLang beside Tilescope): each file of
``../shared/corpus/tilelang-ascend-examples`` is imported in a child process of its own, under its
own module name and folder, with an empty stand-in for ``torch_npu`` (absent here). Every kernel the
static tier finds in it is built at the sizes that tier reads from the file (its ``__main__`` calls,
argparse defaults, parameter defaults: the file's own sizes): a ``@T.prim_func`` as it is, a factory
called with them, a ``@tilelang.jit`` kernel through ``get_tir``. Each is then lowered as TileLang's
Ascend guide says, ``with tvm.target.Target("ascend") as t: tilelang.lower(f, target=t)``. Nothing of
Tilescope runs in the child: it reports ``lowered``, or the exception and the line of the file the
traceback last passes through. A factory that builds its kernel through an inner ``@tilelang.jit``
call gets that kernel's PrimFunc from the call (``get_tir``) instead of a compiled kernel, which would
need Ascend's ``bisheng`` (absent here; ``lowered`` is ``null`` wherever it is still asked for). A
kernel whose sizes the file does not give is left out.

    .venv/bin/python tests/static/ascend_truth.py   # about a minute
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tilescope.core.static import analyze_source

HERE = Path(__file__).resolve().parent
CORPUS = Path(
    os.environ.get("TILESCOPE_ASCEND_CORPUS", HERE.parents[1] / ".." / "shared" / "corpus" / "tilelang-ascend-examples")
).resolve()
TRUTH = HERE / "ascend_truth.json"

_CHILD = r"""
import importlib.util, json, sys, traceback, types
path, kernels = sys.argv[1], json.loads(sys.argv[2])
sys.modules.setdefault("torch_npu", types.ModuleType("torch_npu"))
sys.path.insert(0, str(__import__("pathlib").Path(path).parent))
import tilelang
from tilelang import tvm
from tilelang.jit import JITImpl

# a factory that builds its kernel through an inner @tilelang.jit call would compile it with Ascend's
# bisheng (absent here): the inner call gives the PrimFunc instead, which is all lowering needs
JITImpl.__call__ = lambda self, *args, **kwargs: self.get_tir(*args, **kwargs)

def line_of(error):
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    return frames[-1].lineno if frames else None

def failed(error):
    # a factory that compiles (needs Ascend's bisheng) says nothing about lowering: unknown
    text = f"{type(error).__name__}: {error}"
    return {"lowered": None if "bisheng" in text else False, "error": text[:300], "line": line_of(error)}

answer = {}
try:
    spec = importlib.util.spec_from_file_location("corpus_file", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
except BaseException as error:
    answer = {k["name"]: failed(error) for k in kernels}
    print(json.dumps(answer))
    sys.exit(0)
for k in kernels:
    try:
        obj = getattr(module, k["name"])
        if k["style"] == "prim_func":
            func = obj
        elif hasattr(obj, "get_tir"):
            func = obj.get_tir(**k["args"])
        else:
            func = obj(**k["args"])
        if hasattr(func, "get_tir"):
            func = func.get_tir()
        with tvm.target.Target("ascend") as target:
            tilelang.lower(func, target=target)
        answer[k["name"]] = {"lowered": True, "error": None, "line": None}
    except BaseException as error:
        answer[k["name"]] = failed(error)
print(json.dumps(answer))
"""


def kernels_of(path: Path) -> list[dict[str, object]]:
    """The file's kernels and the sizes the static tier reads from it (those with every size)."""
    found = []
    for kernel in analyze_source(path.read_text(), str(path)).kernels:
        args = {b.name: b.value for b in kernel.bindings}
        if all(isinstance(v, int | float | str | bool) for v in args.values()):
            found.append({"name": kernel.ref.name, "style": kernel.ref.style, "args": args})
    return found


def main() -> None:
    truth: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(CORPUS.rglob("*.py")):
        kernels = kernels_of(path)
        if not kernels:
            continue
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(path), json.dumps(kernels)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=path.parent,
            check=False,
        )
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        crashed = {"*": {"lowered": False, "error": done.stderr[-300:], "line": None}}
        result: dict[str, dict[str, Any]] = json.loads(lines[-1]) if lines else crashed
        truth[str(path.relative_to(CORPUS))] = result
        print(path.relative_to(CORPUS), {k: v["lowered"] for k, v in result.items()}, flush=True)
    TRUTH.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
