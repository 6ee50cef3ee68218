"""Wall time of ``tilescope check CORPUS -j N`` against plain TileLang lowering the same kernels.

Both sides run cold, as fresh processes, in turns (check, plain, check, plain, ...) so that a
shared machine's load falls on both alike; the load average is printed before each run. The
plain side is ``plain_lowering.py``: one process importing each file the ordinary way and
lowering, one after another, every kernel the first check run lowered, with the arguments that
run used. Nothing is cached between runs. Each run's CPU seconds (its whole process tree, sampled from ``/proc``) are
printed too: they depend little on the load, so ``check CPU / N`` against ``plain CPU`` shows what
a quiet machine would give, where wall time on a loaded one favours the side with more processes.

    python benchmarks/bench_check.py [--corpus DIR] [--jobs 2] [--repeat 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("TILESCOPE_CORPUS", ROOT / ".." / "shared" / "corpus" / "tilelang-examples"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_corpus_compiler import check  # noqa: E402
from corpus_truth import lower_all  # noqa: E402


class TreeCpu:
    """CPU seconds of every process below this one, sampled from ``/proc`` while a side runs.

    ``getrusage(RUSAGE_CHILDREN)`` misses the compiler workers (their supervisor ends them
    without passing their usage up), so each descendant's own CPU time is read every 0.2 s and
    its last reading kept; a process's last 0.2 s can be missed, on both sides alike.
    """

    def __init__(self) -> None:
        self._seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeCpu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def seconds(self) -> float:
        return sum(self._seen.values())

    def _sample(self) -> None:
        tick = os.sysconf("SC_CLK_TCK")
        while not self._stop.wait(0.2):
            for pid, fields in _descendants(os.getpid()):
                self._seen[pid] = (int(fields[11]) + int(fields[12])) / tick


def _descendants(root: int) -> list[tuple[int, list[bytes]]]:
    children: dict[int, list[tuple[int, list[bytes]]]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append((int(entry), fields))
    found, frontier = [], [root]
    while frontier:
        for pid, fields in children.get(frontier.pop(), []):
            found.append((pid, fields))
            frontier.append(pid)
    return found


def lowered_kernels(files: list[dict[str, Any]], corpus: Path) -> list[dict[str, Any]]:
    """Every kernel the check lowered, with the arguments it used, for plain TileLang to lower too."""
    return [
        {
            "file": Path(f["path"]).resolve().relative_to(corpus).as_posix(),
            "kernel": k["kernel"],
            "args": k["args"],
            "consts": {},
        }
        for f in files
        for k in f["kernels"]
        if k["passes"]
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2, help="runs of each side, taken in turns (default 2)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        print(f"no corpus at {corpus}; pass --corpus or TILESCOPE_CORPUS", file=sys.stderr)
        raise SystemExit(2)
    runs: list[dict[str, Any]] = []
    same: list[dict[str, Any]] = []
    for round_ in range(args.repeat):
        load = os.getloadavg()[0]
        with TreeCpu() as tree:
            files, check_s = check([corpus], args.jobs, extra=())
        check_cpu = tree.seconds
        lowered = sum(1 for f in files for k in f["kernels"] if k["passes"])
        if not same:
            same = lowered_kernels(files, corpus)
        runs.append(
            {"side": "check", "round": round_, "seconds": check_s, "cpu_s": check_cpu, "load": load, "lowered": lowered}
        )
        print(
            f"check -j {args.jobs}: {check_s:6.1f} s wall, {check_cpu:6.1f} s CPU  ({lowered} kernels lowered; "
            f"load {load:.2f} before)",
            flush=True,
        )
        load = os.getloadavg()[0]
        with TreeCpu() as tree:
            results, plain_s = lower_all(same, corpus)
        plain_cpu = tree.seconds
        plain_ok = sum(r["ok"] for r in results)
        plain_run = {"side": "plain", "round": round_, "seconds": plain_s, "cpu_s": plain_cpu, "load": load}
        runs.append({**plain_run, "lowered": plain_ok})
        print(
            f"plain     : {plain_s:6.1f} s wall, {plain_cpu:6.1f} s CPU  ({plain_ok}/{len(same)} kernels lowered; "
            f"load {load:.2f} before)",
            flush=True,
        )
    check_median = statistics.median(r["seconds"] for r in runs if r["side"] == "check")
    plain_median = statistics.median(r["seconds"] for r in runs if r["side"] == "plain")
    check_cpu = statistics.median(r["cpu_s"] for r in runs if r["side"] == "check")
    plain_cpu = statistics.median(r["cpu_s"] for r in runs if r["side"] == "plain")
    print(
        f"\n{len(same)} kernels; median tilescope check -j {args.jobs}: {check_cpu:.1f} s CPU, "
        f"{check_cpu / args.jobs:.1f} s per worker if evenly shared; plain: {plain_cpu:.1f} s CPU; "
        f"CPU ratio per worker {check_cpu / args.jobs / plain_cpu:.2f}"
    )
    print(
        f"{len(same)} kernels; median tilescope check -j {args.jobs}: {check_median:.1f} s, median plain TileLang "
        f"lowering one after another in one process: {plain_median:.1f} s; ratio {check_median / plain_median:.2f}"
        f" (load average now {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores)"
    )
    if args.json:
        figures = {
            "jobs": args.jobs,
            "cores": os.cpu_count(),
            "kernels": len(same),
            "runs": runs,
            "check_median_s": round(check_median, 2),
            "plain_median_s": round(plain_median, 2),
            "ratio": round(check_median / plain_median, 3),
            "check_cpu_median_s": round(check_cpu, 2),
            "plain_cpu_median_s": round(plain_cpu, 2),
            "cpu_ratio_per_worker": round(check_cpu / args.jobs / plain_cpu, 3),
        }
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
