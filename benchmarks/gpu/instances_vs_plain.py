"""Each recorded instance of a kernel library: ``tilescope check``'s rebuild against plain TileLang.

Reads ``WORKSPACE/.tilescope/instances.json`` (what ``tilescope record`` kept) and the JSON of
``tilescope check --json WORKSPACE/src/PACKAGE`` run after it, lowers every instance with plain
TileLang (``benchmarks/plain_lowering.py``: import the module, build the kernel with the recorded
arguments, ``tilelang.lower``, no Tilescope code in between) and compares the facts the corpus
benchmark compares: buffers (name, shape, dtype, scope), launches (grid and threads of every
device kernel) and layouts right after ``tl.LayoutInference``. Prints one line per instance and
writes the table as JSON.

    python benchmarks/gpu/instances_vs_plain.py WORKSPACE CHECK_JSON OUT_JSON [--src src]

A second use compares two recordings' instance sets (what a dry run on the CPU learnt against
what a real run on the GPU saw), by kernel, arguments and the test or command that built them:

    python benchmarks/gpu/instances_vs_plain.py --same-instances A.json B.json OUT_JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_corpus_compiler import _facts, _same  # noqa: E402


def _key(kernel: str, args: dict[str, Any]) -> str:
    return kernel + json.dumps(args, sort_keys=True)


def _models(check: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every kernel model of ``check --json`` with its file."""
    return [(file["path"], model) for file in check.get("files", [check]) for model in file.get("kernels", [])]


def _matches(entry: dict[str, Any], path: str, model: dict[str, Any]) -> bool:
    """Whether ``model`` was built from the recorded ``entry``: same file and kernel, the arguments it
    says were recorded are the entry's, and those that are plain values are equal."""
    if model["kernel"] != entry["kernel"] or not path.endswith(entry["file"]):
        return False
    sources = model.get("arg_sources") or {}
    recorded = {k for k, v in sources.items() if v == "recorded"}
    args = entry.get("args") or {}
    if not set(args) <= recorded <= set(args) | set(entry.get("consts") or {}):
        return False
    plain = (int, float, str, bool)
    return all(model["args"].get(k) == v for k, v in args.items() if isinstance(v, plain))


def _with_module(entry: dict[str, Any], src: str) -> dict[str, Any]:
    """The entry with its dotted module name (the library's modules import each other relatively)."""
    path = Path(entry["file"])
    if entry.get("module") or not path.is_relative_to(src):
        return entry
    return {**entry, "module": ".".join(path.relative_to(src).with_suffix("").parts)}


def _plain(entries: list[dict[str, Any]], workspace: Path, src: str) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(workspace / src), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "plain_lowering.py"), str(workspace)],
        input="".join(json.dumps(_with_module(e, src)) + "\n" for e in entries),
        capture_output=True,
        text=True,
        cwd=workspace,
        env=env,
        check=False,
    )
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    if len(results) != len(entries):
        raise SystemExit(f"plain lowering gave {len(results)} of {len(entries)}: {done.stderr[-2000:]}")
    return results


def _differences(ours: dict[str, Any], plain: dict[str, Any]) -> list[str]:
    mine = _facts(ours)
    out = []
    theirs = sorted({(b[0], json.dumps(b[1]), b[2], b[3]) for b in plain["buffers"]})
    if sorted(map(tuple, mine["buffers"])) != theirs:
        out.append(f"buffers {mine['buffers']} != {plain['buffers']}")
    if json.dumps(mine["launches"]) != json.dumps(plain["launches"]):
        out.append(f"launches {mine['launches']} != {plain['launches']}")
    for name, layout in (plain.get("layouts") or {}).items():
        other = mine["layouts"].get(name)
        if other is None or any(not _same(other.get(k), layout.get(k)) for k in ("input_shape", "index", "thread")):
            out.append(f"layout of {name}")
    return out


def compare(workspace: Path, check_json: Path, src: str) -> dict[str, Any]:
    entries = json.loads((workspace / ".tilescope" / "instances.json").read_text())["instances"]
    models = _models(json.loads(check_json.read_text()))
    plain = _plain(entries, workspace, src)
    rows = []
    for entry, lowered in zip(entries, plain, strict=True):
        model = next((m for path, m in models if _matches(entry, path, m)), None)
        row: dict[str, Any] = {"kernel": entry["kernel"], "args": entry.get("args"), "file": entry["file"]}
        if not lowered.get("ok"):
            row["verdict"] = f"plain TileLang failed: {lowered.get('error', '')[:300]}"
        elif model is None or not model.get("passes"):
            row["verdict"] = "not analysed by check" if model is None else "check did not lower it"
        else:
            wrong = _differences(model, lowered)
            row["verdict"] = "equal" if not wrong else "DIFFERENT: " + "; ".join(wrong)[:600]
        rows.append(row)
        print(f"{entry['kernel']} {json.dumps(entry.get('args'), sort_keys=True)[:160]}: {row['verdict']}", flush=True)
    equal = sum(r["verdict"] == "equal" for r in rows)
    print(f"{equal} of {len(rows)} recorded instances rebuilt by check equal to plain TileLang")
    return {"equal": equal, "instances": len(rows), "rows": rows}


def same_instances(a: Path, b: Path) -> dict[str, Any]:
    """Two recordings' instances as sets of (kernel, arguments, test or command). A command is compared
    without its interpreter's path: the CPU's run and the GPU machine's start Python from different places."""

    def origin(entry: dict[str, Any]) -> str:
        if entry.get("test"):
            return str(entry["test"])
        words = str(entry.get("command") or "").split(" ", 1)
        return " ".join(["python", *words[1:]]) if words[0] else ""

    def keys(path: Path) -> set[str]:
        found = json.loads(path.read_text())["instances"]
        return {f"{_key(e['kernel'], e.get('args') or {})} @ {origin(e)}" for e in found}

    left, right = keys(a), keys(b)
    report = {"both": sorted(left & right), "only_first": sorted(left - right), "only_second": sorted(right - left)}
    print(f"{len(left & right)} in both; only in {a.name}: {len(left - right)}; only in {b.name}: {len(right - left)}")
    for k in report["only_first"]:
        print(f"  only in {a}: {k}")
    for k in report["only_second"]:
        print(f"  only in {b}: {k}")
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--src", default="src", help="the folder of the library's package, in WORKSPACE")
    parser.add_argument("--same-instances", action="store_true", help="compare two instances.json files")
    args = parser.parse_args()
    if args.same_instances:
        report = same_instances(args.first, args.second)
    else:
        report = compare(args.first, args.second, args.src)
    args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
