"""The hazard check's detection and false-positive counts: planted fixtures, controls, the corpus.

* Fixtures (``benchmarks/hazards/fixtures``): every ``# planted: CODE`` line must get an error of
  that code at that line (detected), every other hazard error is a false positive (on a control,
  or at an unmarked line); information notes are counted apart. With compute-sanitizer's results
  from the H200 (``benchmarks/gpu/wrong.sh``, kept in ``benchmarks/results/wrong-sanitizer.json``),
  the two side by side: what each tool reported per fixture, and whether Tilescope, with no GPU,
  found every bug the sanitizer found.
* Shared-access degrees (``benchmarks/banks``): kernels written with thread indices, every shared access's
  ways, wavefronts and warp requests beside a truth made by hand (``truth.json``, each entry derived).
* Corpus (TileLang's examples, which run correctly upstream): any ``data-race``,
  ``missing-barrier``, ``out-of-bounds`` or ``uninitialised-read`` error is a false one. Every
  information note is listed with why it is there (``EXPLAINED``, written after reading each).
  Which kernels the interpreter could not run, and why, is counted by reason.

    python benchmarks/bench_hazards.py [--corpus DIR] [--jobs 2] [--no-corpus] [--corpus-json KEPT]
        [--keep-corpus-json OUT] [--sanitizer FILE] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_corpus_compiler import CORPUS, check  # noqa: E402

FIXTURES = ROOT / "benchmarks" / "hazards" / "fixtures"
BANKS = ROOT / "benchmarks" / "banks"
SANITIZER = ROOT / "benchmarks" / "results" / "wrong-sanitizer.json"
CODES = ("data-race", "missing-barrier", "out-of-bounds", "uninitialised-read")
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
_MARK = re.compile(r"#\s*planted:\s*([a-z-]+)")

MLA = (
    "eight producer threads ((tx - 256) // 8 alike) store `indices_local <= max_kv_i` into one is_kv_valid byte; "
    "each loaded indices_local from the same Indices element, so they store one value (benign); the check does "
    "not follow what a register was loaded from, so it says they may be one value"
)
TOPK = (
    "`s_threshold_bin_id[0] = tx` under `s_histogram[tx] >= k and s_histogram[tx + 1] < k`: the suffix counts "
    "fall as tx grows, so one thread at most passes, which the check cannot know (the condition is on data: it "
    "counts every lane)"
)
EXPLAINED: dict[str, str] = {
    "examples/deepseek_v32/sparse_mla_fwd_pipelined.py:206": MLA,
    "examples/deepseek_v32/sparse_mla_fwd_seesaw.py:199": MLA,
    "examples/deepseek_v32/topk_selector.py:99": TOPK,
    "examples/deepseek_v32/topk_selector.py:162": TOPK,
    "examples/deepseek_v4/act_quant.py:160": (
        "y_shared is float4_e2m1fn, two elements a byte: the final IR's copy from the fragment stores thread 0's "
        "and thread 1's elements into the two halves of byte 4 (the check keys shared memory by byte); whether "
        "the GPU merges them into one byte store is not known here, and the example passes its tests upstream"
    ),
    "examples/deepseek_v4/act_quant.py:161": "the copy out reads back line 160's byte, half of it another thread's",
    "examples/flash_decoding/example_gqa_decode_varlen_logits.py:122": (
        "S_shared[h, k] is written for the blocks k the pipelined loop visits, ceildiv(seqlen // num_split, "
        "block_N) of them, and line 122 rescales all ceil(max_seqlen_kv / block_N) columns: past a short "
        "sequence it reads columns nothing wrote (the interpreter's witness) and copies them to S, whose caller "
        "sets every position past the sequence to 0 (`S_tl[i, :, valid_blocks:] = 0`): garbage read, then "
        "discarded"
    ),
}
"""Why each information note on the corpus is there, by ``file:line``, after reading it."""


def planted(path: Path) -> set[tuple[int, str]]:
    return {(n, m.group(1)) for n, line in enumerate(path.read_text().splitlines(), 1) if (m := _MARK.search(line))}


def _diagnostics(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [*result["diagnostics"], *(d for k in result["kernels"] for d in k["diagnostics"])]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def fixtures(jobs: int, budget: float) -> dict[str, Any]:
    paths = sorted(FIXTURES.glob("*.py"))
    start = time.perf_counter()
    results, wall = check(paths, jobs, ("--timeout", "180", "--hazard-budget", str(budget)))
    by_stem = {Path(r["path"]).stem: r for r in results}
    rows = []
    for path in paths:
        result = by_stem[path.stem]
        expected = planted(path)
        found = [d for d in _diagnostics(result) if d["code"] in CODES]
        errors = {(d["span"]["line"], d["code"]) for d in found if d["severity"] == "error"}
        check_s = [k["hazard_check"]["seconds"] for k in result["kernels"] if k.get("hazard_check")]
        rows.append(
            {
                "fixture": path.stem,
                "planted": sorted(expected),
                "detected": sorted(expected & errors),
                "missed": sorted(expected - errors),
                "false_errors": sorted(errors - expected),
                "information": sorted((d["span"]["line"], d["code"]) for d in found if d["severity"] == "information"),
                "interpret_s": sum(check_s),
                "witness": next((d.get("witness") for d in found if d["severity"] == "error"), None),
            }
        )
    return {"rows": rows, "wall_s": round(wall, 1), "elapsed_s": round(time.perf_counter() - start, 1)}


def banks(jobs: int) -> dict[str, Any]:
    """Every shared access of the bank fixtures beside its hand-made truth: equal, missing or extra."""
    truth: dict[str, list[dict[str, Any]]] = json.loads((BANKS / "truth.json").read_text())["files"]
    results, wall = check(sorted((BANKS / "fixtures").glob("*.py")), jobs)
    rows = []
    for result in results:
        name = Path(result["path"]).name
        found = {
            (a["buffer"], a["line"], a["op"]): (
                a["ways"],
                a["wavefronts"],
                a["ideal_wavefronts"],
                a["requests_per_block"],
            )
            for k in result["kernels"]
            for a in k["shared_accesses"]
        }
        want = {
            (t["buffer"], t["line"], t["op"]): (t["ways"], t["wavefronts"], t["ideal"], t["requests"])
            for t in truth[name]
        }
        for key in sorted(found.keys() | want.keys(), key=str):
            rows.append({"file": name, "access": list(key), "truth": want.get(key), "tilescope": found.get(key)})
    return {"rows": rows, "equal": sum(r["truth"] == r["tilescope"] for r in rows), "wall_s": round(wall, 1)}


def corpus(files: list[dict[str, Any]]) -> dict[str, Any]:
    errors, notes, stopped, ran, seconds = [], [], Counter(), 0, []
    for result in files:
        rel = str(Path(result["path"]).resolve().relative_to(CORPUS.resolve()))
        for d in _diagnostics(result):
            if d["code"] not in CODES:
                continue
            where = f"{rel}:{d['span']['line']}"
            entry = {"where": where, "code": d["code"], "message": d["message"], "witness": d.get("witness")}
            (errors if d["severity"] == "error" else notes).append(entry)
        for k in result["kernels"]:
            h = k.get("hazard_check")
            if h is None:
                continue
            if h["blocks"]:
                ran += 1
                seconds.append(h["seconds"])
            if h["stopped"]:
                stopped[_reason(h["stopped"])] += 1
    return {
        "files": len(files),
        "kernels": sum(len(r["kernels"]) for r in files),
        "interpreted": ran,
        "interpret_s_median": round(statistics.median(seconds), 3) if seconds else None,
        "interpret_s_p95": round(_pct(seconds, 0.95), 3) if seconds else None,
        "stopped": dict(stopped.most_common()),
        "errors": errors,
        "information": [{**n, "why": EXPLAINED.get(n["where"], "UNEXPLAINED")} for n in notes],
    }


def _reason(text: str) -> str:
    """A stop reason without its specifics: ``not interpretable: uses X``, ``stopped after 2 s``."""
    text = re.sub(r" at line \d+", "", text)
    text = re.sub(r" in block \(.*\)", "", text)
    text = re.sub(r"\(.*?\)", "(...)", text)
    return text[:90]


def _in_kernel(report: dict[str, Any] | None) -> bool:
    """Whether a tool's first report is in the TileLang kernel (``main_kernel``), not in a torch
    kernel that ran after it (initcheck flags torch reading an output the kernel wrote by TMA,
    which it does not see)."""
    first = (report or {}).get("first") or []
    return bool((report or {}).get("errors")) and any("main_kernel" in line for line in first[:2])


def side_by_side(rows: list[dict[str, Any]], sanitizer: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        said = sanitizer.get("fixtures", {}).get(row["fixture"], {})
        tools = {t: (said.get(t) or {}).get("errors") for t in TOOLS}
        outside = [t for t in TOOLS if tools[t] and not _in_kernel(said.get(t))]
        flagged = any(_in_kernel(said.get(t)) for t in TOOLS)
        out.append(
            {
                "fixture": row["fixture"],
                "plain_exit": (said.get("plain") or {}).get("exit"),
                **tools,
                "outside_kernel": outside,
                "flagged": flagged,
                "sanitizer_first": next(
                    ((said.get(t) or {}).get("first") or [None])[0] for t in TOOLS if _in_kernel(said.get(t))
                )
                if flagged
                else None,
                "tilescope": [f"{code}@{line}" for line, code in row["detected"] + row["false_errors"]],
                "sanitizer_only": flagged and not (row["detected"] or row["false_errors"]),
            }
        )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-corpus", action="store_true")
    parser.add_argument("--corpus-json", type=Path, help="read a kept `tilescope check CORPUS --format json` output")
    parser.add_argument("--keep-corpus-json", type=Path, help="keep the corpus check's output here")
    parser.add_argument("--sanitizer", type=Path, default=SANITIZER)
    parser.add_argument("--hazard-budget", type=float, default=2.0, help="check's --hazard-budget (default 2)")
    parser.add_argument("--json", type=Path, help="write every figure here")
    args = parser.parse_args(argv)

    fx = fixtures(args.jobs, args.hazard_budget)
    rows = fx["rows"]
    bugs = sum(len(r["planted"]) for r in rows)
    detected = sum(len(r["detected"]) for r in rows)
    controls = [r for r in rows if not r["planted"]]
    print(f"fixtures: {len(rows)} files, {bugs} planted bugs in {len(rows) - len(controls)}, {len(controls)} controls")
    print(f"  detected at their line with their code: {detected}/{bugs}")
    print(
        f"  false errors: {sum(len(r['false_errors']) for r in rows)} "
        f"({sum(len(r['false_errors']) for r in controls)} on controls)"
    )
    print(f"  information notes: {sum(len(r['information']) for r in rows)}")
    times = [r["interpret_s"] for r in rows]
    print(
        f"  interpretation per file: median {statistics.median(times):.3f} s, p95 {_pct(times, 0.95):.3f} s; "
        f"check -j {args.jobs} of all fixtures {fx['wall_s']} s wall (under load where the machine is shared)"
    )
    for r in rows:
        mark = "ok " if not r["missed"] and not r["false_errors"] else "BAD"
        what = ", ".join(f"{c}@{n}" for n, c in r["planted"]) or "control"
        extra = f"; missed {r['missed']}" if r["missed"] else ""
        extra += f"; false {r['false_errors']}" if r["false_errors"] else ""
        extra += f"; notes {r['information']}" if r["information"] else ""
        print(f"  {mark} {r['fixture']:<28} {what}{extra}")

    report: dict[str, Any] = {"fixtures": fx}
    if args.sanitizer.exists():
        sanitizer = json.loads(args.sanitizer.read_text())
        table = side_by_side(rows, sanitizer)
        report["side_by_side"] = table
        found = [t for t in table if t["flagged"]]
        both = [t for t in found if not t["sanitizer_only"]]
        planted_rows = {r["fixture"] for r in rows if r["planted"]}
        only_ours = [t for t in table if t["fixture"] in planted_rows and not t["flagged"]]
        on_controls = [t for t in found if t["fixture"] not in planted_rows]
        outside = [t for t in table if t["outside_kernel"]]
        print(
            f"\ncompute-sanitizer ({sanitizer.get('tool')}, {sanitizer.get('seconds')} s on the GPU): flagged "
            f"{len(found)} of {len(table)} fixtures in the TileLang kernel ({len(on_controls)} of them controls); "
            f"Tilescope, without a GPU, reports an error at the bug's line in {len(both)} of those {len(found)}, "
            f"and in {len(only_ours)} planted fixtures the sanitizer did not flag"
        )
        note = f"  reports outside the TileLang kernel (marked *, not counted): {len(outside)} fixtures"
        if outside and all(t["outside_kernel"] == ["initcheck"] for t in outside):
            note += (
                ", all initcheck, in torch's comparison kernel reading an output the TileLang kernel "
                "wrote with a TMA store (which initcheck does not see)"
            )
        print(note)
        print(f"  {'fixture':<28} {'plain':>5} " + " ".join(f"{t:>9}" for t in TOOLS) + "  tilescope")
        for t in table:
            cells = " ".join(
                f"{('-' if t[tool] is None else str(t[tool]) + ('*' if tool in t['outside_kernel'] else '')):>9}"
                for tool in TOOLS
            )
            print(f"  {t['fixture']:<28} {t['plain_exit']!s:>5} {cells}  {', '.join(t['tilescope']) or '-'}")
            if t["sanitizer_first"]:
                print(f"      sanitizer: {t['sanitizer_first']}")
    else:
        print(f"\n(no sanitizer results at {args.sanitizer}: run benchmarks/gpu/wrong.sh on a GPU)")

    bk = banks(args.jobs)
    report["banks"] = bk
    print(
        f"\nshared-access degrees (benchmarks/banks, thread-index kernels, truth by hand): "
        f"{bk['equal']}/{len(bk['rows'])} accesses equal in ways, wavefronts, ideal and requests ({bk['wall_s']} s)"
    )
    print(f"  {'file:line':<26} {'buffer':<6} {'op':<5} {'truth (ways wf ideal req)':<27} tilescope")
    for r in bk["rows"]:
        buffer, line, op = r["access"]
        mark = "" if r["truth"] == r["tilescope"] else "  DIFFERS"
        truth, ours = (" ".join(map(str, v)) if v else "-" for v in (r["truth"], r["tilescope"]))
        print(f"  {r['file'] + ':' + str(line):<26} {buffer:<6} {op:<5} {truth:<27} {ours}{mark}")

    if not args.no_corpus:
        if args.corpus_json:
            files = json.loads(args.corpus_json.read_text())["files"]
        else:
            extra = ("--timeout", "180", "--hazard-budget", str(args.hazard_budget))
            files, wall = check([args.corpus], args.jobs, extra)
            print(f"\ncorpus check -j {args.jobs} --hazard-budget {args.hazard_budget:g}: {wall:.0f} s wall")
            if args.keep_corpus_json:
                args.keep_corpus_json.write_text(json.dumps({"files": files}))
        c = corpus(files)
        report["corpus"] = c
        print(
            f"\ncorpus: {c['files']} files, {c['kernels']} kernels analysed, {c['interpreted']} interpreted "
            f"(median {c['interpret_s_median']} s, p95 {c['interpret_s_p95']} s per kernel)"
        )
        print(f"  hazard errors (all would be false): {len(c['errors'])}")
        for e in c["errors"]:
            print(f"    {e['where']}: {e['code']}: {e['message']}")
        print(f"  information notes: {len(c['information'])}")
        for n in c["information"]:
            print(f"    {n['where']}: {n['code']}: {n['message']}\n      why: {n['why']}")
        print("  not interpreted or stopped early, by reason:")
        for reason, count in c["stopped"].items():
            print(f"    {count:>3}  {reason}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
