"""Build ``benchmarks/corpus_truth.json``: which corpus kernels plain TileLang lowers with each file's own sizes.

1. **record**: every file of ``../shared/corpus/tilelang-examples`` that mentions TileLang (tests
   and ``conftest.py`` aside) runs as its author runs it, ``python FILE`` in its own folder (of a
   scratch copy of the corpus, since some examples write plots next to themselves), under
   ``tilescope record``'s hook, 90 s at most. The instances a file builds of its *own* kernels are
   its own sizes. Without a GPU, the tensors the program asks for on the GPU are made on the CPU
   (same shapes and dtypes: ``TILESCOPE_RECORD_CPU_TENSORS``), and each compile returns a stand-in
   (``tilelang_core/record/dry_run_standin.py``, the dry run's: zero outputs of the right shapes, result checks and
   timings off, ``python -O``) so the program goes on to its later kernels; a run ends at its end,
   an error, 90 s, or 25 s without a new kernel. The first instance of each of the file's kernels
   is kept, with its ``order`` (how many instances the run built before it: above 0, it ran after
   stand-ins, whose outputs are zeros). Kernels an autotuner tuned are left out (it timed
   stand-ins). ``--first-only`` records as before stand-ins: each run stops at its first compile.
2. **lower**: plain TileLang (``benchmarks/plain_lowering.py``: ordinary import, the file's build,
   ``tilelang.lower`` in ``tilelang.compile``'s pass context for sm_90 or the decorator's target) lowers
   each recorded instance, one after another in one process, and the facts it yields (buffers,
   launches, layouts) are the truth.

    python benchmarks/corpus_truth.py [--jobs 2] [--only DIR] [--retry] [--first-only] [--out FILE]

``--retry`` records again only the files whose instances plain TileLang did not lower, and
lowers those again (after a fix to the reference itself), keeping the rest of the truth.
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

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))
TRUTH = ROOT / "benchmarks" / "corpus_truth.json"
sys.path.insert(0, str(ROOT))

from tilescope.core.record.recorder import record  # noqa: E402

CPU_TENSORS = {"TILESCOPE_RECORD_CPU_TENSORS": "1"}
STAND_IN = {
    **CPU_TENSORS,
    "TILESCOPE_RECORD_STAND_IN": "1",
    "TILELANG_DEFAULT_TARGET": '{"kind": "cuda", "arch": "sm_90"}',  # what a compile on the H200 detects
}


_KEPT = ("kernel", "line", "style", "args", "consts", "out_idx", "order")


def candidates(corpus: Path, only: str | None) -> list[Path]:
    files = []
    for path in sorted(corpus.rglob("*.py")):
        rel = path.relative_to(corpus).as_posix()
        if only and not rel.startswith(only):
            continue
        if path.name.startswith("test_") or path.name == "conftest.py":
            continue
        if "tilelang" in path.read_text(errors="replace"):
            files.append(path)
    return files


def record_file(path: Path, corpus: Path, stand_in: bool = True) -> dict[str, Any]:
    start = time.perf_counter()
    command = [sys.executable, "-O", path.name] if stand_in else [sys.executable, path.name]
    env = {**(STAND_IN if stand_in else CPU_TENSORS), "OMP_NUM_THREADS": "1"}
    code, lines = record(command, path.parent, timeout_s=90, env=env, idle_s=25 if stand_in else None)
    own = str(path.resolve())
    kernels: dict[str, dict[str, Any]] = {}
    built = 0  # instances of any kernel before this one: those after the first ran past stand-ins
    for line in lines:
        if line.get("event") != "instance":
            continue
        if line.get("file") == own and line.get("kernel") not in kernels:
            kernels[line["kernel"]] = {**line, "order": built}
        built += 1
    if stand_in:  # an autotuner timed stand-ins: which config it built first means nothing
        tuned = {x.get("kernel") for x in lines if x.get("event") == "autotune" and x.get("config")}
        kernels = {k: v for k, v in kernels.items() if k not in tuned}
    stop = next((x.get("error") for x in lines if x.get("event") == "exit" and x.get("error")), None)
    return {
        "file": path.relative_to(corpus).as_posix(),
        "exit": code,
        "stop": "timeout" if code == 124 else "idle" if code == 125 else stop,
        "seconds": round(time.perf_counter() - start, 1),
        "instances": [
            {
                "file": path.relative_to(corpus).as_posix(),
                **{k: v for k, v in e.items() if k in _KEPT},
                **{k: e.get(k) for k in ("pass_configs", "target")},
            }
            for e in kernels.values()
        ],
    }


def lower_all(instances: list[dict[str, Any]], corpus: Path) -> tuple[list[dict[str, Any]], float]:
    """Plain lowering of every instance in one child process; the results and the wall time."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:  # some examples write plots where they run
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "plain_lowering.py"), str(corpus)],
            input="".join(json.dumps(i) + "\n" for i in instances),
            capture_output=True,
            text=True,
            cwd=cwd,
            check=False,
        )
    wall = time.perf_counter() - start
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="a folder of the corpus, e.g. examples/gemm")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--retry", action="store_true", help="only the files whose instances did not lower")
    parser.add_argument("--first-only", action="store_true", help="no stand-ins: each run stops at its first compile")
    parser.add_argument("--out", type=Path, default=TRUTH)
    args = parser.parse_args()
    previous = json.loads(TRUTH.read_text()) if args.retry else None
    with tempfile.TemporaryDirectory(prefix="tilescope-corpus-") as scratch:
        corpus = Path(scratch) / "corpus"
        shutil.copytree(args.corpus.resolve(), corpus)
        build_truth(corpus, args.only, args.jobs, previous, not args.first_only, args.out)


def build_truth(
    corpus: Path,
    only: str | None,
    jobs: int,
    previous: dict[str, Any] | None = None,
    stand_in: bool = True,
    out: Path = TRUTH,
) -> None:
    files = candidates(corpus, only)
    if previous is not None:
        again = {f["file"] for f in previous["not_lowered"]}
        files = [f for f in files if f.relative_to(corpus).as_posix() in again]
    print(f"recording {len(files)} files with {jobs} at a time", file=sys.stderr)
    with ThreadPoolExecutor(jobs) as pool:
        runs = list(pool.map(lambda p: record_file(p, corpus, stand_in), files))
    instances = [i for run in runs for i in run["instances"]]
    print(f"recorded {len(instances)} own-kernel instances; lowering them plainly", file=sys.stderr)
    results, wall = lower_all(instances, corpus)
    lowered = {(r["file"], r["kernel"]): r for r in results}
    kernels, failed = [], []
    for inst in instances:
        result = lowered.get((inst["file"], inst["kernel"]), {"ok": False, "error": "no answer"})
        if result["ok"]:
            kernels.append({**inst, "truth": {k: v for k, v in result.items() if k not in ("ok", "file", "kernel")}})
        else:
            failed.append({**inst, "error": result["error"]})
    runs_kept = [{k: v for k, v in run.items() if k != "instances"} for run in runs]
    wall_s = round(wall, 1)
    if previous is not None:
        redone = {r["file"] for r in runs_kept}
        kernels = [k for k in previous["kernels"] if k["file"] not in redone] + kernels
        runs_kept = [r for r in previous["runs"] if r["file"] not in redone] + runs_kept
        files_count, wall_s = previous["corpus_files"], previous["plain_lowering_wall_s"]
    else:
        files_count = len(files)
    how = (
        "each file run as `python -O FILE` under tilescope record's hook on a machine without a GPU, compiles "
        "returning stand-ins so the run goes on to later kernels"
        if stand_in
        else "each file run as `python FILE` under tilescope record's hook on a machine without a GPU (up to its "
        "first device call)"
    )
    truth = {
        "how": f"benchmarks/corpus_truth.py: {how}; the first instance of each of its own kernels lowered by plain "
        "TileLang",
        "corpus_files": files_count,
        "plain_lowering_wall_s": wall_s,
        "kernels": sorted(kernels, key=lambda k: (k["file"], k["kernel"])),
        "not_lowered": failed,
        "runs": sorted(runs_kept, key=lambda r: r["file"]),
    }
    out.write_text(json.dumps(truth, indent=1) + "\n")
    print(f"{len(kernels)} kernels lowered plainly, {len(failed)} did not; wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
