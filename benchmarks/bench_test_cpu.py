"""Where the test suite's CPU goes: each test's CPU time, its own and its processes', and the busiest files.

CI runs on two cores that the suite keeps busy, so its time is its CPU time over two: a test's wall time
(pytest's ``--durations``, JUnit) says little, since it waits on processes that also serve other tests
(the session's compiler worker is charged to whichever test ends the session). This counts, around
each test, the CPU of the test process, of the processes it waited for, and of every process still below
it (read from ``/proc``: its compiler workers, servers, their children), so a shared worker's work is
charged to the test that asked for it.

    .venv/bin/python benchmarks/bench_test_cpu.py run [-- PYTEST ARGS]   # the suite as .ci/test runs it
    .venv/bin/python benchmarks/bench_test_cpu.py summary FILE.jsonl...  # the figures of an earlier run

``run`` prints the figures and leaves one JSON line per test in ``$TMPDIR/tilescope-test-cpu/``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import IO, Any

import pytest

TICKS = os.sysconf("SC_CLK_TCK")
OUT = Path(tempfile.gettempdir()) / "tilescope-test-cpu"
_log: IO[str] | None = None


def _below_s() -> float:
    """The CPU seconds of every process below this one (their own and their reaped children's)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    seconds: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path("/proc", entry, "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone since the listing
        children[int(fields[1])].append(int(entry))
        seconds[int(entry)] = sum(int(f) for f in fields[11:15]) / TICKS  # utime stime cutime cstime
    total, todo = 0.0, [os.getpid()]
    while todo:
        for child in children[todo.pop()]:
            total += seconds[child]
            todo.append(child)
    return total


def _cpu_s() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, waited.ru_utime + waited.ru_stime + _below_s()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    global _log
    if _log is None:
        OUT.mkdir(exist_ok=True)
        _log = (OUT / f"{os.getpid()}.jsonl").open("a")
    own0, below0 = _cpu_s()
    start = time.perf_counter()
    yield
    own1, below1 = _cpu_s()
    row = {"id": item.nodeid, "own_s": own1 - own0, "below_s": below1 - below0, "wall_s": time.perf_counter() - start}
    _log.write(json.dumps(row) + "\n")
    _log.flush()


def summary(files: Sequence[Path], top: int = 25) -> str:
    rows: list[dict[str, Any]] = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for row in rows:
        figures = by_file[row["id"].split("::")[0]]
        figures[0] += row["own_s"] + row["below_s"]
        figures[1] += row["wall_s"]
        figures[2] += 1
    total = sum(f[0] for f in by_file.values())
    lines = [f"{len(rows)} tests, {total:.0f} CPU seconds in all", "", "CPU s   share  wall s  tests  file"]
    for name, (cpu, wall, count) in sorted(by_file.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{cpu:6.0f}  {cpu / total:5.1%}  {wall:6.0f}  {count:5.0f}  {name}")
    lines += ["", "CPU s   wall s  test"]
    for row in sorted(rows, key=lambda r: -(r["own_s"] + r["below_s"]))[:top]:
        lines.append(f"{row['own_s'] + row['below_s']:6.1f}  {row['wall_s']:6.1f}  {row['id']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True)
    sub.add_parser("run").add_argument("pytest_args", nargs="*")
    sub.add_parser("summary").add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    if args.verb == "summary":
        print(summary(args.files))
        return
    for old in OUT.glob("*.jsonl"):
        old.unlink()
    root = Path(__file__).resolve().parent.parent
    paths = [str(root / "benchmarks"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}  # no empty entry: it would put the cwd first
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "bench_test_cpu"]
    command += ["-n", "3", "--dist", "loadfile", *args.pytest_args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, check=False)
    print(f"\npytest exit {done.returncode} in {time.perf_counter() - started:.0f} s\n")
    print(summary(sorted(OUT.glob("*.jsonl"))))


if __name__ == "__main__":
    main()
