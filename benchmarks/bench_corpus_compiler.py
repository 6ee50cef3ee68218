"""The compiler tier over TileLang's examples, against plain TileLang (``benchmarks/corpus_truth.json``).

Figures per corpus folder and in total, and every kernel of the truth that misses (why):

* of the kernels in the truth (those plain TileLang lowers with the file's own sizes, see
  ``corpus_truth.py``), how many ``tilescope check`` analysed with no manual step and found equal
  to plain lowering in buffers, launches (grid and threads of every device kernel) and layouts
  (index and thread expressions right after ``tl.LayoutInference``), for how many it chose the
  file's own sizes by itself, and for how many of those the sizes came from a dry run. Files are
  opened as the editor opens them in a trusted workspace: no ``.tilescope/instances.json``, no
  directive, the dry run allowed (``--no-dry-run``: the static sources only), its cache empty at
  the start (a private ``TILESCOPE_CACHE_DIR``). ``check`` runs over a scratch copy of the corpus,
  so nothing a program writes beside itself lands in the shared one;
* the wall time of ``tilescope check CORPUS -j 2`` against plain TileLang lowering the kernels
  Tilescope lowered, with the same arguments, one after another in one process.

    python benchmarks/bench_corpus_compiler.py [--corpus DIR] [--jobs 2] [--json OUT] [--truth FILE]
        [--truth-files]     # check only the files the truth holds kernels of (no timing figure then)
        [--check-json KEEP [--reuse]]   # keep check's output; compare a kept one with (another) truth
        [--no-dry-run]

``python benchmarks/bench_corpus.py --compiler`` runs this too.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
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

from tilescope.core.model import Launch, from_json

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))
TRUTH = ROOT / "benchmarks" / "corpus_truth.json"
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus_truth import lower_all  # noqa: E402

LIMIT = ("--timeout", "180")
"""Plain lowering has no limit: a build slowed by a loaded machine is not a miss."""


def check(paths: list[Path], jobs: int, extra: tuple[str, ...] = LIMIT) -> tuple[list[dict[str, Any]], float]:
    """``tilescope check PATH... -j N --format json`` run from a scratch folder (some examples write plots
    where they run), with an empty dry-run cache; its files and wall time."""
    with tempfile.TemporaryDirectory() as cwd:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "tilescope", "check", *map(str, paths), "-j", str(jobs), "--format", "json", *extra],
            cwd=cwd,
            env={**os.environ, "TILESCOPE_CACHE_DIR": str(Path(cwd) / "cache")},
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
    data = json.loads(done.stdout)
    return data.get("files", [data]), wall  # one file: its FileAnalysis alone


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return float(a) == float(b)
    if isinstance(a, list | str) and isinstance(b, list | str) and (isinstance(a, list) or isinstance(b, list)):
        return _sequence(a) == _sequence(b)  # the truth's JSON has no tuples: ``(64, 128)`` is ``[64, 128]``
    return str(a).removeprefix("T.") == str(b).removeprefix("T.")


def _sequence(value: Any) -> Any:
    """A list or tuple, whether given as one or as its text (``"(64, 128)"``), as a list; else the value."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError, SyntaxError):
            value = ast.literal_eval(value)
    return list(value) if isinstance(value, list | tuple) else value


def _facts(model: dict[str, Any]) -> dict[str, Any]:
    buffers = sorted({(b["name"], json.dumps(b["shape"]), b["dtype"], b["scope"]) for b in model["buffers"]})
    launches = [
        [[*from_json(Launch, launch).grid_dims(), 1, 1, 1][:3], launch["threads_after_ws"]]
        for launch in model.get("launches") or []
    ]
    layouts = {
        x["buffer"]: {"input_shape": x["input_shape"], "index": x["index"], "thread": x.get("thread")}
        for x in model["layouts"]
    }
    return {"buffers": buffers, "launches": launches, "layouts": layouts}


def _defaults(path: Path, kernel: str, model: dict[str, Any]) -> dict[str, Any]:
    """The parameter defaults the compiler tier built with (``arg_sources`` says ``default``), as the
    static tier reads them: a model lists only the values passed."""
    from tilescope.core.static import analyze_source

    static = analyze_source(path.read_text(), str(path))
    found = next((k for k in static.kernels if k.ref.name == kernel), None)
    sources = model.get("arg_sources", {})
    return {
        b.name: b.value
        for b in (found.bindings if found else [])
        if b.origin == "default" and sources.get(b.name) == "default"
    }


def compare(
    truth: dict[str, Any], files: list[dict[str, Any]], corpus: Path, misses: list[str] | None = None
) -> dict[str, dict[str, int]]:
    """The table of figures; ``misses`` gets one line per truth kernel not analysed, equal and own."""
    by_file = {Path(f["path"]).resolve().relative_to(corpus).as_posix(): f for f in files}
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    misses = misses if misses is not None else []
    first: dict[str, int] = defaultdict(int)
    for entry in truth["kernels"]:
        folder = str(Path(entry["file"]).parent)
        row = table[folder]
        row["truth"] += 1
        first["truth"] += entry.get("order", 0) == 0
        analysis = by_file.get(entry["file"])
        model = next((k for k in (analysis or {}).get("kernels", []) if k["kernel"] == entry["kernel"]), None)
        where = f"{entry['file']} {entry['kernel']}"
        if model is None or not model["passes"] or any(d["severity"] == "error" for d in model["diagnostics"]):
            found = (model or analysis or {}).get("diagnostics", [])
            errors = [d["message"] for d in sorted(found, key=lambda d: d["severity"] != "error")]
            why = "not checked" if analysis is None else "not found" if model is None else "not lowered"
            misses.append(f"{where}: {why}: {(errors or [''])[0][:160]}")
            continue
        row["analysed"] += 1
        # Arguments as called, and T.const values the tensors bound; a name the hook read off a
        # tensor annotation that is no parameter of the kernel (a factory's local) is not a size to choose.
        built = {**_defaults(corpus / entry["file"], entry["kernel"], model), **model["args"]}
        consts = {k: v for k, v in entry.get("consts", {}).items() if k in built}
        wanted = {**consts, **entry.get("args", {})}
        own = all(name in built and _same(built[name], v) for name, v in wanted.items())
        row["own_sizes"] += own
        row["dry_run"] += own and any(str(s).startswith("dry run") for s in model.get("arg_sources", {}).values())
        facts, plain = _facts(model), entry["truth"]
        plain_buffers = sorted({(b[0], json.dumps(b[1]), b[2], b[3]) for b in plain["buffers"]})
        equal = (
            facts["buffers"] == plain_buffers
            and facts["launches"] == plain["launches"]
            and facts["layouts"] == plain["layouts"]
        )
        row["equal"] += equal
        row["equal_and_own"] += equal and own
        if entry.get("order", 0) == 0:  # recorded before any stand-in ran (corpus_truth.py)
            first["analysed"] += 1
            first["equal"] += equal
            first["equal_and_own"] += equal and own
            first["own_sizes"] += own
            first["dry_run"] += own and any(str(s).startswith("dry run") for s in model.get("arg_sources", {}).values())
        if not own:
            other = {
                n: model["args"].get(n, "missing") for n, v in wanted.items() if not _same(model["args"].get(n), v)
            }
            misses.append(f"{where}: other sizes: built {other}, the file runs { ({n: wanted[n] for n in other}) }")
        if not equal:
            parts = [
                k
                for k in ("buffers", "launches", "layouts")
                if facts[k] != (plain_buffers if k == "buffers" else plain[k])
            ]
            misses.append(f"{where}: differs from plain lowering in {', '.join(parts)}")
    total: dict[str, int] = defaultdict(int)
    for row in table.values():
        for key, value in row.items():
            total[key] += value
    return {**{k: dict(v) for k, v in sorted(table.items())}, "total": dict(total), "total, order 0": dict(first)}


def _same_kernels(files: list[dict[str, Any]], corpus: Path) -> list[dict[str, Any]]:
    """Every kernel Tilescope lowered, with the arguments it used, for plain TileLang to lower too."""
    instances = []
    for f in files:
        for k in f["kernels"]:
            if k["passes"]:
                rel = Path(f["path"]).resolve().relative_to(corpus).as_posix()
                instances.append({"file": rel, "kernel": k["kernel"], "args": k["args"], "consts": {}})
    return instances


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--only", help="one folder of the corpus, e.g. examples/gemm")
    parser.add_argument("--check-json", type=Path, help="keep check's output here; with --reuse, read it instead")
    parser.add_argument("--reuse", action="store_true", help="compare a kept check output with the truth only")
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--truth-files", action="store_true", help="check only the files the truth names")
    parser.add_argument("--no-timing", action="store_true", help="skip plain lowering of what check lowered")
    parser.add_argument("--no-dry-run", action="store_true", help="the static sources of sizes only")
    args = parser.parse_args(argv)
    if not args.corpus.resolve().is_dir():
        print(f"no corpus at {args.corpus.resolve()}; pass --corpus", file=sys.stderr)
        raise SystemExit(2)
    run(args, args.corpus.resolve())


def checked(paths: list[Path], corpus: Path, jobs: int, extra: tuple[str, ...]) -> tuple[list[dict[str, Any]], float]:
    """``check`` over a scratch copy of the corpus, its file paths given back under ``corpus``."""
    with tempfile.TemporaryDirectory(prefix="tilescope-corpus-") as scratch:
        copy = Path(scratch).resolve() / "corpus"
        shutil.copytree(corpus, copy)
        files, wall = check([copy / p.relative_to(corpus) for p in paths], jobs, extra)
    for f in files:
        f["path"] = str(corpus / Path(f["path"]).resolve().relative_to(copy))
    return files, wall


def run(args: argparse.Namespace, corpus: Path) -> None:
    extra = (*LIMIT, "--no-dry-run") if args.no_dry_run else LIMIT
    truth = json.loads(args.truth.read_text())
    if args.only:
        truth["kernels"] = [k for k in truth["kernels"] if k["file"].startswith(args.only.rstrip("/") + "/")]
    if args.reuse and args.check_json:
        kept = json.loads(args.check_json.read_text())
        files, check_s, plain_s, plain_ok = kept["files"], kept["check_s"], kept["plain_s"], kept["plain_ok"]
    elif args.truth_files:
        files, check_s = checked(sorted({corpus / k["file"] for k in truth["kernels"]}), corpus, args.jobs, extra)
    else:
        files, check_s = checked([corpus / args.only if args.only else corpus], corpus, args.jobs, extra)
    misses: list[str] = []
    table = compare(truth, files, corpus, misses)
    same = _same_kernels(files, corpus)
    if (args.truth_files or args.no_timing) and not args.reuse:
        plain_s, plain_ok = float("nan"), 0
        if args.check_json:
            kept = {"files": files, "check_s": check_s, "plain_s": plain_s, "plain_ok": plain_ok}
            args.check_json.write_text(json.dumps(kept) + "\n")
    elif not args.reuse:
        results, plain_s = lower_all(same, corpus)
        plain_ok = sum(r["ok"] for r in results)
        if args.check_json:
            kept = {"files": files, "check_s": check_s, "plain_s": plain_s, "plain_ok": plain_ok}
            args.check_json.write_text(json.dumps(kept) + "\n")
    print(f"{'folder':<40} {'truth':>5} {'analysed':>8} {'equal':>5} {'own sizes':>9} {'both':>5} {'dry run':>7}")
    for folder, row in table.items():
        print(
            f"{folder:<40} {row.get('truth', 0):>5} {row.get('analysed', 0):>8} {row.get('equal', 0):>5} "
            f"{row.get('own_sizes', 0):>9} {row.get('equal_and_own', 0):>5} {row.get('dry_run', 0):>7}"
        )
    total = table["total"]
    n = max(total.get("truth", 0), 1)
    print(f"\n{len(misses)} misses:")
    for line in misses:
        print("  " + line)
    print(
        f"\nanalysed and equal to plain lowering: {total.get('equal', 0)}/{n} "
        f"({100 * total.get('equal', 0) / n:.1f} %); own sizes chosen: {total.get('own_sizes', 0)}/{n} "
        f"({100 * total.get('own_sizes', 0) / n:.1f} %), {total.get('dry_run', 0)} of them from a dry run"
    )
    lowered = sum(1 for f in files for k in f["kernels"] if k["passes"])
    print(
        f"tilescope check {len(files)} files -j {args.jobs}: {check_s:.1f} s ({lowered} kernels lowered); plain "
        f"TileLang lowering the same {len(same)} kernels one after another in one process: {plain_s:.1f} s "
        f"({plain_ok} lowered); ratio {check_s / plain_s:.2f}"
    )
    if args.json:
        figures = {"table": table, "check_s": check_s, "plain_s": plain_s, "lowered": lowered, "plain_ok": plain_ok}
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
