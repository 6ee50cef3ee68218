"""The compiler tier on the Ascend corpus against plain TileLang 0.1.15 (``benchmarks/ascend/truth.json``).

For every kernel instance of the truth (each corpus file's own kernels at its own sizes, see
``benchmarks/ascend/truth.py``), Tilescope analyses the file with its ordinary default target
(``sm_90``: the kernel's own Ascend declaration must win) and the instance's arguments, and the
table says: did plain TileLang lower it, did Tilescope analyse it, and is Tilescope's model equal
to the truth in buffers (name, shape, dtype, scope), levels, pass names, flag count (the
``asc_sync_*`` calls of the AscendC) and core split (kernel kind, and per Cube/Vector section the
buffers it names and its flags). A kernel plain TileLang refuses must come back as an error
diagnostic at a line of the file (never an internal error). Then the time: Tilescope's analysis
of a kernel (a warm worker: build, lower with every pass recorded, extract) over plain TileLang
building and lowering the same kernel in one warm process, the median of the ratios.

    .venv/bin/python benchmarks/bench_ascend.py [--corpus DIR] [--only SUBSTRING] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_ASCEND_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-ascend-examples"))
TRUTH = ROOT / "benchmarks" / "ascend" / "truth.json"
sys.path.insert(0, str(ROOT))

from tilescope.core.compiler.service import Analyzer  # noqa: E402
from tilescope.core.model import KernelModel  # noqa: E402
from tilescope.core.targets import ascend_level  # noqa: E402

ASPECTS = ("buffers", "levels", "passes", "flags", "cores")


def compare(model: KernelModel, truth: dict[str, Any]) -> dict[str, bool]:
    """Each aspect of ``model`` against the plain-lowering ``truth`` of the same instance."""
    # as sets: TileLang names the scalars of a T.macro's T.alloc_var "" (several alike), Tilescope lists them once
    mine = sorted({json.dumps([b.name, list(b.shape), b.dtype, b.scope]) for b in model.buffers})
    plain = sorted({json.dumps(list(b)) for b in truth["buffers"]})
    plan = model.ascend
    levels_plain = sorted((b[0], ascend_level(b[3])) for b in truth["buffers"] if ascend_level(b[3]))
    levels_mine = sorted((b.name, b.level) for b in plan.buffers) if plan else []
    cores_plain = truth["cores"]
    cores_mine: dict[str, Any] = {"kind": plan.kernel_kind} if plan else {}
    if plan:
        cores_mine.update({k: {"buffers": v.buffers, "flags": v.flags} for k, v in plan.sections.items()})
    return {
        "buffers": mine == plain,
        "levels": levels_mine == levels_plain,
        "passes": [p.name for p in model.passes] == truth["passes"],
        "flags": plan is not None and len(plan.flags) == truth["flags"]["total"],
        "cores": _sections_equal(cores_mine, cores_plain),
    }


def _sections_equal(mine: dict[str, Any], plain: dict[str, Any]) -> bool:
    """Kernel kind and each section; a one-core kernel's section in the truth is the whole source, which also
    names the SimtVF/SimdVF device functions' arguments, so only its flags and kind are compared then."""
    if mine.get("kind") != plain.get("kind"):
        return False
    if plain["kind"] != "mix":
        core = "aic" if plain["kind"] == "cube" else "aiv"
        return mine.get(core, {}).get("flags") == plain.get(core, {}).get("flags")
    return all(mine.get(c) == plain.get(c) for c in ("aic", "aiv"))


def analyse(analyzer: Analyzer, path: Path, entry: dict[str, Any]) -> tuple[KernelModel | None, list[Any], float]:
    args = {**entry["args"], **entry.get("consts", {})}
    start = time.perf_counter()
    result = analyzer.analyze(str(path), kernel=entry["kernel"], args=args, hazards_s=0.0, timeout_s=300)
    seconds = time.perf_counter() - start
    model = result.kernel(entry["kernel"])
    return model, result.all_diagnostics(), seconds


class Plain:
    """Plain TileLang in one warm child (``ascend/plain_ascend.py``), asked one kernel at a time, so that each
    kernel's plain lowering and Tilescope's analysis of it run side by side under the same load."""

    def __init__(self, corpus: Path, cwd: str) -> None:
        script = str(ROOT / "benchmarks" / "ascend" / "plain_ascend.py")
        self.child = subprocess.Popen(
            [sys.executable, script, str(corpus)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=cwd,
        )

    def lower(self, entry: dict[str, Any]) -> dict[str, Any]:
        assert self.child.stdin is not None and self.child.stdout is not None
        self.child.stdin.write(json.dumps(entry) + "\n")
        self.child.stdin.flush()
        while True:
            line = self.child.stdout.readline()
            if not line or line.startswith("{"):
                return json.loads(line) if line else {"ok": False, "error": "no answer"}

    def close(self) -> None:
        if self.child.stdin is not None:
            self.child.stdin.close()
        self.child.wait()


def _key(entry: dict[str, Any]) -> str:
    return json.dumps([entry["file"], entry["kernel"], entry["args"]], sort_keys=True)


def verdict(entry: dict[str, Any], model: KernelModel | None, diagnostics: list[Any]) -> dict[str, Any]:
    """One row of the table."""
    errors = [d for d in diagnostics if d.severity == "error"]
    if not entry["ok"]:
        told = [d for d in errors if d.code != "internal-error" and d.span.line]
        return {
            "analysed": False,
            "diagnosed": bool(told),
            "said": f"{told[0].code} at line {told[0].span.line}" if told else "; ".join(d.code for d in errors),
        }
    if model is None or model.ascend is None or errors:
        return {"analysed": False, "said": "; ".join(f"{d.code}: {d.message[:120]}" for d in errors)}
    return {"analysed": True, "equal": compare(model, entry)}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--truth", type=Path, default=TRUTH)
    parser.add_argument("--only", help="only files whose path contains this")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    truth = json.loads(args.truth.read_text())
    entries = [e for e in truth["instances"] if not args.only or args.only in e["file"]]
    rows = []
    # no answer cache: the warm-up kernel is analysed again when its turn comes
    with Analyzer(timeout_s=300, cache_size=0) as analyzer, tempfile.TemporaryDirectory() as cwd:
        analyzer.warm()  # the worker's start is not an analysis's time
        reference = Plain(args.corpus, cwd)
        lowered = [e for e in entries if e["ok"]]
        if lowered:  # both sides warm on one kernel first: TileLang's first lowering in a process costs more
            reference.lower(lowered[0])
            analyse(analyzer, args.corpus / lowered[0]["file"], lowered[0])
        plain = {}
        for entry in entries:
            if entry["ok"]:
                plain[_key(entry)] = reference.lower(entry)
            model, diagnostics, seconds = analyse(analyzer, args.corpus / entry["file"], entry)
            lower_ms = model.lower_ms if model is not None else 0.0
            base = plain.get(_key(entry), {})
            rows.append(
                {
                    "entry": entry,
                    "seconds": seconds,
                    "lower_ms": lower_ms,
                    "phases": analyzer.phases,
                    "plain_s": {k: base[k] for k in ("build_s", "lower_s") if k in base},
                    **verdict(entry, model, diagnostics),
                }
            )
        reference.close()
        # files that stop before building any kernel of their own (an import 0.1.15 cannot satisfy)
        unbuilt = [
            r for r in truth["runs"] if r.get("stop") and not any(i["file"] == r["file"] for i in truth["instances"])
        ]
        unbuilt = [r for r in unbuilt if not args.only or args.only in r["file"]]
        stopped = []
        for run in unbuilt:
            result = analyzer.analyze(str(args.corpus / run["file"]), hazards_s=0.0, timeout_s=300)
            told = [d for d in result.all_diagnostics() if d.severity == "error" and d.code != "internal-error"]
            said = f"{told[0].code} at line {told[0].span.line}" if told else "NOT DIAGNOSED"
            stopped.append({"file": run["file"], "stop": run["stop"], "diagnosed": bool(told), "said": said})
    ratios, lowering_ratios, spent, plain_spent = [], [], 0.0, 0.0
    print(f"{'file':38} {'kernel':24} plain  tilescope  " + " ".join(f"{a:7}" for a in ASPECTS) + "  ratio")
    for row in rows:
        entry = row["entry"]
        name = entry["file"].rsplit("/", 1)[-1][:38]
        base = plain.get(_key(entry))
        if not entry["ok"]:
            mark = "error at its line" if row["diagnosed"] else "NOT DIAGNOSED"
            print(f"{name:38} {entry['kernel'][:24]:24} no     {mark}: {row['said']}")
            continue
        if not row["analysed"]:
            print(f"{name:38} {entry['kernel'][:24]:24} yes    NO: {row['said']}")
            continue
        ratio = None
        if base and base.get("ok"):
            ratio = row["seconds"] / (base["build_s"] + base["lower_s"])
            ratios.append(ratio)
            lowering_ratios.append(row["lower_ms"] / 1000 / base["lower_s"])
            spent += row["seconds"]
            plain_spent += base["build_s"] + base["lower_s"]
        flags = " ".join(f"{'yes' if row['equal'][a] else 'NO':7}" for a in ASPECTS)
        print(f"{name:38} {entry['kernel'][:24]:24} yes    yes        {flags}  {ratio and round(ratio, 2)}")
    for row in stopped:
        name = row["file"].rsplit("/", 1)[-1][:38]
        print(f"{name:38} {'(file)':24} no     stops at import: {row['said']}")
    analysed = [r for r in rows if r["entry"]["ok"] and r["analysed"]]
    equal = [r for r in analysed if all(r["equal"].values())]
    failing = [r for r in rows if not r["entry"]["ok"]]
    diagnosed = [r for r in failing if r["diagnosed"]]
    median = statistics.median(ratios) if ratios else None
    lowering = statistics.median(lowering_ratios) if lowering_ratios else None
    total = spent / plain_spent if plain_spent else None
    print(
        f"\n{len(lowered)} kernels lower plainly: {len(analysed)} analysed, {len(equal)} equal in every aspect; "
        f"{len(failing)} fail plainly: {len(diagnosed)} diagnosed at a line; {len(stopped)} files stop before "
        f"building a kernel: {sum(r['diagnosed'] for r in stopped)} diagnosed at a line"
    )
    print(
        f"time: analysis (a warm worker's answer: fork, load, build, lower with every pass kept, extract) / plain "
        f"build and lowering, all kernels together {total and round(total, 2)} ({spent:.1f} s / {plain_spent:.1f} s; "
        f"target <= 1.2), median of kernels {median and round(median, 2)}; the recorded lowering alone / plain "
        f"lowering, median {lowering and round(lowering, 2)}"
    )
    if args.json:
        figures = {"median_ratio": median, "total_ratio": total, "lowering_ratio": lowering, "stopped": stopped}
        args.json.write_text(json.dumps({"rows": rows, **figures}, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
