"""What the fake device lights up: the editor's analysis of TileLang's examples with and without it.

The editor's way: a trusted workspace, the dry run allowed, no ``.tilescope/instances.json``, no
directive, an empty dry-run cache (a private ``TILESCOPE_CACHE_DIR``), over a scratch copy of the
sampled files' folders (examples write plots beside themselves). A kernel counts as analysed with
the file's own sizes when it lowered (it has passes) with no ``missing-args`` diagnostic; "by the dry
run" counts those whose sizes came from it. "Before" is the same analysis by another Tilescope
(``--baseline-python``: the interpreter of a checkout without the fake device, e.g. main's venv);
"after" is this checkout's.

    python benchmarks/bench_fake_device.py [--corpus DIR] [--files 30] [--jobs 2] [--needing-run]
        [--baseline-python /work/main/.venv/bin/python] [--json OUT]

Every file of the examples runs on a GPU upstream; here none is visible, so each one that needs the
device to reach its kernels is what the fake device is for. A loaded machine makes runs slower, and a
dry run past its time limit counts as a miss for that side alike.
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
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))


def _needs_run(path: Path) -> bool:
    """Whether the static sources leave some kernel of the file without every size (the dry run's work)."""
    from tilescope.core.compiler.discovery import instantiations

    return any(inst.missing for inst in instantiations(path.read_text(errors="replace"), str(path)))


def sample(corpus: Path, count: int, needing_run: bool = False) -> list[Path]:
    """``count`` example files spread evenly over the corpus, tests and helpers left out (they have no main);
    with ``needing_run``, only files with a kernel the static sources leave without every size."""
    files = sorted(
        p
        for p in (corpus / "examples").rglob("*.py")
        if not p.name.startswith(("test_", "conftest", "__init__")) and "__main__" in p.read_text(errors="replace")
    )
    if needing_run:
        files = [f for f in files if _needs_run(f)]
    step = max(1, len(files) // count)
    return files[::step][:count]


def check(python: str, files: list[Path], corpus: Path, jobs: int) -> tuple[dict[str, dict[str, Any]], float]:
    """``tilescope check FILES --format json`` by ``python``, over a scratch copy, with an empty cache: each
    file's analysis by its path in the corpus, and the wall time."""
    with tempfile.TemporaryDirectory(prefix="tilescope-fake-device-") as scratch:
        copy = Path(scratch) / "corpus"
        for folder in sorted({f.parent for f in files}):
            shutil.copytree(folder, copy / folder.relative_to(corpus), dirs_exist_ok=True)
        paths = [str(copy / f.relative_to(corpus)) for f in files]
        start = time.perf_counter()
        done = subprocess.run(
            [python, "-m", "tilescope", "check", *paths, "-j", str(jobs), "--format", "json", "--timeout", "300"],
            cwd=scratch,
            env={**os.environ, "TILESCOPE_CACHE_DIR": str(Path(scratch) / "cache")},
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        try:
            data = json.loads(done.stdout)
        except json.JSONDecodeError:
            print(done.stderr[-3000:], file=sys.stderr)
            raise
    analyses = data.get("files", [data])
    return {(Path(scratch) / a["path"]).resolve().relative_to(copy.resolve()).as_posix(): a for a in analyses}, wall


def figures(analyses: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per folder: kernels, analysed with the file's own sizes, and of those by the dry run."""
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for path, analysis in analyses.items():
        row = table[str(Path(path).parent)]
        for model in analysis.get("kernels", []):
            row["kernels"] += 1
            missing = any(d["code"] == "missing-args" for d in model["diagnostics"])
            if model["passes"] and not missing:
                row["analysed"] += 1
                row["dry_run"] += any(str(s).startswith("dry run") for s in model.get("arg_sources", {}).values())
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--needing-run", action="store_true", help="sample only files the static sources leave without every size"
    )
    parser.add_argument("--baseline-python", help="the interpreter of a Tilescope without the fake device")
    parser.add_argument("--json", type=Path, help="write the table here too")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    files = sample(corpus, args.files, args.needing_run)
    after, after_s = check(sys.executable, files, corpus, args.jobs)
    before, before_s = check(args.baseline_python, files, corpus, args.jobs) if args.baseline_python else ({}, 0.0)
    now, then = figures(after), figures(before)
    print(f"{len(files)} files of {corpus}")
    print(f"{'folder':<40} {'kernels':>7} {'before':>6} {'after':>6} {'by dry run':>10}")
    total: dict[str, int] = defaultdict(int)
    for folder in sorted(now.keys() | then.keys()):
        row, old = now.get(folder, {}), then.get(folder, {})
        kernels = row.get("kernels", old.get("kernels", 0))
        shown = old.get("analysed", 0) if args.baseline_python else "-"
        print(f"{folder:<40} {kernels:>7} {shown:>6} {row.get('analysed', 0):>6} {row.get('dry_run', 0):>10}")
        total["kernels"] += kernels
        total["before"] += old.get("analysed", 0)
        total["after"] += row.get("analysed", 0)
        total["dry_run"] += row.get("dry_run", 0)
    n = max(1, total["kernels"])
    print(
        f"{'total':<40} {total['kernels']:>7} {total['before']:>6} {total['after']:>6} {total['dry_run']:>10}"
        f"   ({100 * total['before'] / n:.0f} % -> {100 * total['after'] / n:.0f} %;"
        f" wall {before_s:.0f} s -> {after_s:.0f} s)"
    )
    if args.json:
        rows = {f: {"after": dict(now.get(f, {})), "before": dict(then.get(f, {}))} for f in now.keys() | then.keys()}
        args.json.write_text(json.dumps({"files": [str(f) for f in files], "folders": rows, "total": total}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
