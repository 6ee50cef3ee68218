"""Build ``benchmarks/ascend/truth.json``: what plain TileLang 0.1.15 gives for every Ascend corpus kernel.

How it is made (no NPU, no CANN: this machine's CPU):

1. **record**: each of the 30 files of ``../shared/corpus/tilelang-ascend-examples`` (a scratch copy)
   runs as its author runs it, ``python -O FILE`` in its own folder with its own defaults, under
   ``tilescope record``'s hook with the fake NPU (``torch_npu`` and ``device="npu"`` answered with
   shape-only tensors, ``fake_device.py``) and stand-in compiles (``dry_run_standin.py``), so a run
   goes on to its later kernels. A result check that reads a value (``.item()``, ``torch.equal``) is
   answered with zero (``TILESCOPE_FAKE_VALUES=zero``) so the run goes on past it too; every instance
   built after such a made-up value says so (``after_fake_value``), so it can be checked or left out.
   90 s at most, 25 s without a new kernel. Every distinct ``(kernel, arguments)`` instance of the
   file's *own* kernels is kept, with the target and ``pass_configs`` its ``tilelang.compile`` (or
   ``@tilelang.jit``) gave: those are the kernels each file builds at its own sizes. A
   ``@tilelang.jit`` that a function defines and calls counts as that function's kernel, with that
   function's arguments (``"inner": true``).
2. **lower**: ``benchmarks/ascend/plain_ascend.py``, one child process, lowers each instance as the
   package's guide says (``with tvm.target.Target("ascend") as t: tilelang.lower(f, target=t)``), sharing
   no code with Tilescope's worker, and writes the facts: lowered or the error (with the user's line),
   buffers with scope, shape and dtype, pass names, synchronisation flags in the AscendC source,
   and the core split (kernel kind and what each of AIC/AIV touches).

    .venv/bin/python benchmarks/ascend/truth.py [--jobs 2] [--corpus DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(os.environ.get("TILESCOPE_ASCEND_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-ascend-examples"))
TRUTH = ROOT / "benchmarks" / "ascend" / "truth.json"
sys.path.insert(0, str(ROOT))

from tilescope.core.record.recorder import factory_of_inner_jit, fake_env, fake_profile, record  # noqa: E402

ENV = {
    **fake_env(fake_profile("ascend", npu=True)),
    "TILESCOPE_RECORD_STAND_IN": "1",
    "TILESCOPE_FAKE_VALUES": "zero",  # a result check's .item() answers 0: the run goes on (fake_device.py)
    "OMP_NUM_THREADS": "1",
}


def candidates(corpus: Path) -> list[Path]:
    return [p for p in sorted(corpus.rglob("*.py")) if "tilelang" in p.read_text(errors="replace")]


def record_file(path: Path, corpus: Path) -> dict[str, Any]:
    start = time.perf_counter()
    code, lines = record([sys.executable, "-O", path.name], path.parent, timeout_s=90, env=ENV, idle_s=25)
    own = str(path.resolve())
    compiles = {(x.get("pid"), x.get("seq")): x for x in lines if x.get("event") == "compile"}
    instances: dict[str, dict[str, Any]] = {}
    faked: set[Any] = set()  # processes that read a made-up value: their later instances ran past it
    for line in lines:
        if line.get("event") == "fake-value":
            faked.add(line.get("pid"))
        if line.get("event") != "instance" or line.get("file") != own:
            continue
        compiled = compiles.get((line.get("pid"), line.get("seq")), {})
        outer = line.get("outer")
        line = factory_of_inner_jit(line)  # a jit a factory defines and calls: the program's kernel is the factory
        entry = {
            "file": path.relative_to(corpus).as_posix(),
            "kernel": line["kernel"],
            "line": line["line"],
            "style": line["style"],
            "inner": bool(outer),
            "args": line.get("args") or {},
            "consts": line.get("consts") or {},
            "target": compiled.get("target") or line.get("target"),
            "pass_configs": {**(line.get("pass_configs") or {}), **(compiled.get("pass_configs") or {})},
            "after_fake_value": line.get("pid") in faked,
        }
        key = json.dumps([entry["kernel"], entry["args"], entry["consts"], entry["pass_configs"]], sort_keys=True)
        instances.setdefault(key, entry)
    stop = next((x.get("error") for x in lines if x.get("event") == "exit" and x.get("error")), None)
    return {
        "file": path.relative_to(corpus).as_posix(),
        "exit": code,
        "stop": "timeout" if code == 124 else "idle" if code == 125 else (stop or "")[:300] or None,
        "seconds": round(time.perf_counter() - start, 1),
        "instances": list(instances.values()),
    }


def lower_all(instances: list[dict[str, Any]], corpus: Path) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as cwd:  # some examples write files where they run
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "ascend" / "plain_ascend.py"), str(corpus)],
            input="".join(json.dumps(i) + "\n" for i in instances),
            capture_output=True,
            text=True,
            cwd=cwd,
            check=False,
        )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--out", type=Path, default=TRUTH)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tilescope-ascend-") as scratch:
        corpus = Path(scratch) / "corpus"
        shutil.copytree(args.corpus.resolve(), corpus)
        files = candidates(corpus)
        print(f"recording {len(files)} files, {args.jobs} at a time", file=sys.stderr)
        with ThreadPoolExecutor(args.jobs) as pool:
            runs = list(pool.map(lambda p: record_file(p, corpus), files))
        instances = [i for run in runs for i in run["instances"]]
        print(f"{len(instances)} instances; lowering them plainly", file=sys.stderr)
        results = lower_all(instances, corpus)
    kernels = []
    for inst, result in zip(instances, results + [{"ok": False, "error": "no answer"}] * len(instances), strict=False):
        facts = {k: v for k, v in result.items() if k not in ("file", "kernel", "args")}
        kernels.append({**inst, **facts})
    truth = {
        "how": "benchmarks/ascend/truth.py (its docstring): each file run with its own defaults under the record "
        "hook with a fake NPU and stand-in compiles; every instance of its own kernels lowered by plain TileLang "
        "0.1.15 for Target('ascend') in benchmarks/ascend/plain_ascend.py",
        "tilelang": _version(),
        "corpus_files": len(files),
        "kernels": len(kernels),
        "lowered": sum(1 for k in kernels if k["ok"]),
        "instances": kernels,
        "runs": [{k: v for k, v in run.items() if k != "instances"} for run in runs],
    }
    args.out.write_text(json.dumps(truth, indent=1) + "\n")
    print(f"{truth['lowered']} of {len(kernels)} kernels lowered plainly; wrote {args.out}", file=sys.stderr)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tilelang")
    except Exception:
        return "unknown"


if __name__ == "__main__":
    main()
