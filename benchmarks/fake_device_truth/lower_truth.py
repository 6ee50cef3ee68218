"""Plain TileLang's lowering of every kernel instance read by hand from the examples: the truth of the fake device.

``sizes/*.json`` say, file by file, which kernels ``python FILE`` builds and with which arguments; they
were read from each file's source (its main, argparse defaults and the calls it makes, sizes computed
by hand), nothing run, no Tilescope involved. This script builds each instance the way a user's
program would (the file imported the ordinary way, each argument evaluated as written in the file's
own namespace, ``@autotune`` kernels whose main tunes them at the decorator's first config (with that
config's own ``pass_configs`` over the decorator's, as TileLang's autotuner compiles it), as
Tilescope's analysis and ``run`` choose when nothing was recorded) and lowers it with plain TileLang
(``benchmarks/plain_lowering.py``'s ``facts``: ``tilelang.compile``'s pass context, the kernel's own
target and pass configs). The device queries a build makes (the SM count, the capability) are answered
as the H100 the sizes were read for. Nothing of Tilescope is imported. One process per file, two at a
time, over a scratch copy of the corpus (some files write plots when imported).

The interpreter is the examples' own world: TileLang and torch, plus the packages the examples import
(``pip install --no-deps einops triton flash-linear-attention fla-core scipy``); files that need what
does not install here (bitblas, vLLM, CUDA-only extensions) keep the kernels defined before that import.

    python benchmarks/fake_device_truth/lower_truth.py [--jobs 2] [--only SUBSTRING] [--retry] [--out FILE]

Writes ``truth.json`` beside this script: per instance the hand-read arguments and either the facts
(``buffers``, ``launches``, ``layouts``, ``target``) or plain TileLang's error.
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

HERE = Path(__file__).resolve().parent
BENCHMARKS = HERE.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", BENCHMARKS.parent / ".." / "shared" / "corpus" / "tilelang-examples"))
TRUTH = HERE / "truth.json"


def _files() -> dict[str, dict[str, Any]]:
    """Every hand-read file's entry, from all the parts."""
    return {
        f: e
        for part in sorted((HERE / "sizes").glob("*.json"))
        for f, e in json.loads(part.read_text())["files"].items()
    }


def instances(files: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every hand-read instance, in file order, each with its ``file`` and its place among the file's
    instances of the same kernel (``nth``: 0 for the first call)."""
    found: list[dict[str, Any]] = []
    for file, entry in files.items():
        seen: dict[str, int] = {}
        for inst in entry["instances"]:
            nth = seen.get(inst["kernel"], 0)
            seen[inst["kernel"]] = nth + 1
            found.append({"file": file, "nth": nth, **inst})
    return found


def kernels_of(done: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The truth per kernel, in the form ``bench_corpus_compiler.py`` compares: each kernel under the file that
    defines it (where the editor analyses it), at its first instance built by that file's own main, else (a
    module with no main of its own, e.g. a library a runner imports) at the first instance any file builds;
    only instances plain TileLang lowers."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for inst in done:
        key = (inst.get("defined_in") or inst["file"], inst["kernel"])
        own = inst["file"] == key[0]
        held = chosen.get(key)
        if held is None or (own and held["file"] != key[0]):
            chosen[key] = inst
    return [
        {"file": file, "kernel": kernel, "line": inst["line"], "args": inst["truth"]["values"], "order": 0}
        | {"from": inst["file"], "truth": inst["truth"]}
        for (file, kernel), inst in chosen.items()
        if inst["truth"]["ok"]
    ]


def build(inst: dict[str, Any], root: str) -> tuple[Any, Any, dict[str, Any]]:
    """The PrimFunc of one hand-read instance, the kernel object it came from, and the hand-read arguments'
    values (as JSON: numbers, strings for dtypes)."""
    import tilelang.language
    import torch
    from plain_lowering import _import  # the ordinary import, top-level launches that need a GPU tolerated

    module = _import(os.path.join(root, inst["file"]))
    # The file's names; T and torch for a value written as the file's helpers write it (a regression runner
    # passes a sibling's dtype without importing its alias).
    namespace = {"T": tilelang.language, "torch": torch, **vars(module)}
    obj = vars(module).get(inst["kernel"])
    if obj is None:  # defined in a sibling module the file imports under another name
        obj = getattr(_import(os.path.join(root, inst["defined_in"])), inst["kernel"])
    args = {name: eval(text, namespace) for name, text in inst.get("args", {}).items()}  # the file's own expressions
    values = {name: _plain(value) for name, value in args.items()}
    if inst.get("tuned") and not hasattr(obj, "jit_impl"):
        # AutoTuner.from_kernel inside the function: calling it runs the tuner (compiles every config, then
        # times them on the GPU); which config the program builds is known only after that.
        raise LookupError("an autotuner runs inside this function: the config it builds is chosen on the GPU")
    if hasattr(obj, "jit_impl"):  # @autotune over @tilelang.jit
        per_config: dict[str, Any] = {}
        if inst.get("tuned"):
            configs = obj.configs(**args) if callable(obj.configs) else obj.configs
            first = dict(next(iter(configs)))
            per_config = dict(first.pop("pass_configs", None) or {})
            args = {**args, **first}
        obj = obj.jit_impl
        if per_config:  # the config's own pass_configs over the decorator's, as the autotuner compiles it
            obj.pass_configs = {**(obj.pass_configs or {}), **per_config}
    make = getattr(obj, "get_tir", obj)
    func = make(**args)
    func = getattr(func, "prim_func", func)  # a factory that returns a compiled kernel
    return func, obj, values


def _plain(value: Any) -> Any:
    """A built argument as JSON, as Tilescope's model writes it: numbers as they are, a dtype by its name."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return str(value).removeprefix("torch.")


class _H100Properties:
    """What ``torch.cuda.get_device_properties`` says of the H100 the sizes were read for."""

    name = "NVIDIA H100 80GB HBM3"
    major, minor = 9, 0
    multi_processor_count = 132
    total_memory = 80 * 1024**3
    max_threads_per_multi_processor = 2048
    shared_memory_per_block_optin = 232448
    regs_per_multiprocessor = 65536
    L2_cache_size = 50 * 1024**2
    warp_size = 32


def _answer_as_h100() -> None:
    """Device queries a kernel's build makes (the SM count, the capability) answered as the H100 the sizes
    were read for: on the GPU the build asks the GPU. Tensors and launches are not involved in a build."""
    import torch

    cuda = torch.cuda
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.get_device_capability = lambda device=None: (9, 0)
    cuda.get_device_name = lambda device=None: _H100Properties.name
    cuda.get_device_properties = lambda device=None: _H100Properties()


def _lower_one(inst: dict[str, Any], root: str) -> dict[str, Any]:
    from plain_lowering import facts

    start = time.perf_counter()
    func, obj, values = build(inst, root)
    return {"values": values, **facts(func, obj, start)}


def _failed(err: BaseException, _inst: dict[str, Any], _root: str) -> dict[str, Any]:
    return {"error": f"{type(err).__name__}: {str(err).strip()[:400]}"}


def serve(root: str) -> None:
    """Lower the instances on stdin (JSON lines) in this process, one result line each on stdout, through
    ``plain_lowering.serve`` (results in the order of the input)."""
    sys.path.insert(0, str(BENCHMARKS))
    import plain_lowering

    _answer_as_h100()
    plain_lowering.serve(_lower_one, _failed, echoed=(), root=root)


def lower_file(group: list[dict[str, Any]], corpus: Path, timeout: float) -> list[dict[str, Any]]:
    """The results of one file's instances, lowered in one fresh process (in the file's folder)."""
    lines = "".join(json.dumps(i) + "\n" for i in group)
    try:
        done = subprocess.run(
            [sys.executable, __file__, "--serve", str(corpus)],
            input=lines,
            capture_output=True,
            text=True,
            timeout=timeout * len(group),
            cwd=corpus / Path(group[0]["file"]).parent,
            check=False,
        )
        results = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
        tail = done.stderr.strip().splitlines()[-1:] if done.stderr.strip() else []
    except subprocess.TimeoutExpired:
        results, tail = [], [f"no answer within {timeout:.0f} s"]
    results += [{"ok": False, "error": f"the process ended early: {' '.join(tail)}"}] * (len(group) - len(results))
    return [{**inst, "truth": r} for inst, r in zip(group, results, strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="only files whose path contains this")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per instance")
    parser.add_argument("--retry", action="store_true", help="lower again only the files with an instance not lowered")
    parser.add_argument("--out", type=Path, default=TRUTH)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    corpus = args.corpus.resolve()
    by_file: dict[str, list[dict[str, Any]]] = {}
    failed = set()
    if args.retry and args.out.exists():
        failed = {i["file"] for i in json.loads(args.out.read_text())["instances"] if not i["truth"]["ok"]}
    files = _files()
    for inst in instances(files):
        if (args.only is None or args.only in inst["file"]) and (not args.retry or inst["file"] in failed):
            by_file.setdefault(inst["file"], []).append(inst)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tilescope-truth-") as scratch:  # some files write plots on import
        copy = Path(scratch) / "corpus"
        shutil.copytree(corpus, copy)
        with ThreadPoolExecutor(args.jobs) as pool:
            done = [r for rs in pool.map(lambda g: lower_file(g, copy, args.timeout), by_file.values()) for r in rs]
    wall = time.perf_counter() - start
    lowered = sum(r["truth"]["ok"] for r in done)
    print(f"{len(done)} instances of {len(by_file)} files: {lowered} lowered by plain TileLang ({wall:.0f} s)")
    for r in done:
        if not r["truth"]["ok"]:
            print(f"  not lowered: {r['file']} {r['kernel']}: {r['truth']['error'][:160]}")
    if (args.only is not None or args.retry) and args.out.exists():  # a partial run keeps the other files' truth
        kept = [i for i in json.loads(args.out.read_text())["instances"] if i["file"] not in by_file]
        done = sorted(kept + done, key=lambda i: (i["file"], i["kernel"], i["nth"]))
    without = {f: e.get("why_none", "") for f, e in files.items() if not e["instances"]}
    record = {
        "how": (
            "sizes read by hand from each file (benchmarks/fake_device_truth/sizes/*.json, nothing run); each "
            "instance built as the file's main builds it and lowered by plain TileLang "
            "(benchmarks/fake_device_truth/lower_truth.py, no Tilescope code); `kernels` are, per kernel under the "
            "file that defines it, the first instance its own main builds (else the first any file builds) when plain "
            "TileLang lowers it, in the form bench_corpus_compiler.py compares"
        ),
        "corpus_files": len({i["file"] for i in done}) + len(without),
        "without_kernels": without,
        "kernels": kernels_of(done),
        "not_lowered": [i for i in done if not i["truth"]["ok"]],
        "instances": done,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
