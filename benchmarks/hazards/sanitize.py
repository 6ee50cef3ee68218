"""Every hazard fixture under NVIDIA compute-sanitizer on a GPU: what each tool says, as JSON.

First each fixture runs once without a tool (which compiles it into TileLang's kernel cache and
says whether its output matched its own reference); then memcheck, racecheck, initcheck and
synccheck run each fixture in its own process (an error can leave a CUDA context unusable), many
at once, with ``PYTORCH_NO_CUDA_MEMORY_CACHING=1`` so every tensor is its own allocation and a
write past its end is one memcheck sees. Runs stop being started when the time budget is spent;
those are recorded as not run. Used by ``benchmarks/gpu/wrong.sh``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
_SUMMARY = re.compile(r"(ERROR|RACECHECK|INITCHECK|SYNCCHECK) SUMMARY: (\d+) (error|hazard)")


def parse(log: str) -> dict[str, object]:
    """The error count and the first report of a compute-sanitizer log."""
    lines = [ln.removeprefix("========= ").rstrip() for ln in log.splitlines() if ln.startswith("=========")]
    errors = 0
    for ln in lines:
        m = _SUMMARY.search(ln)
        if m:
            errors += int(m.group(2))
    first: list[str] = []
    for i, ln in enumerate(lines):
        text = ln.strip()
        if text and not ln.startswith(" ") and "SUMMARY" not in text and "COMPUTE-SANITIZER" not in text:
            first = [text] + [x.strip() for x in lines[i + 1 : i + 6] if x.startswith(" ") and x.strip()]
            break
    return {"errors": errors, "first": first if errors else []}


def run(cmd: list[str], timeout: float, env: dict[str, str]) -> tuple[int | None, str, float]:
    start = time.perf_counter()
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        return done.returncode, (done.stdout + done.stderr)[-4000:], time.perf_counter() - start
    except subprocess.TimeoutExpired as err:
        out = (err.stdout or b"").decode(errors="replace") if isinstance(err.stdout, bytes) else (err.stdout or "")
        return None, out[-4000:], time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget", type=float, default=390.0, help="seconds for everything")
    parser.add_argument("--jobs", type=int, default=12)
    parser.add_argument("--only", default="*", help="a glob of fixture names (default all)")
    args = parser.parse_args()
    start = time.perf_counter()
    fixtures = sorted((HERE / "fixtures").glob(f"{args.only}.py"))
    tool = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
    env.setdefault("TILELANG_CACHE_DIR", tempfile.mkdtemp(prefix="tlcache-"))
    runner = [sys.executable, str(HERE / "run_fixture.py")]
    results: dict[str, dict[str, object]] = {f.stem: {} for f in fixtures}
    logs = tempfile.mkdtemp(prefix="sanitizer-")

    def plain(f: Path) -> None:
        code, out, seconds = run([*runner, str(f)], 240, env)
        results[f.stem]["plain"] = {
            "exit": code,
            "tail": out.strip().splitlines()[-1:] if out.strip() else [],
            "seconds": round(seconds, 1),
        }

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(plain, fixtures))
    print(f"plain runs done at {time.perf_counter() - start:.0f} s", flush=True)

    def sanitized(job: tuple[str, Path]) -> None:
        name, f = job
        left = args.budget - (time.perf_counter() - start)
        if left < 30:
            results[f.stem][name] = {"errors": None, "first": [], "note": "not run: time budget spent"}
            return
        log = Path(logs) / f"{f.stem}.{name}.log"
        cmd = [tool, "--tool", name, "--log-file", str(log), "--print-limit", "5", *runner, str(f)]
        code, _, seconds = run(cmd, min(150.0, left), env)
        text = log.read_text(errors="replace") if log.exists() else ""
        record = parse(text)
        record.update({"exit": code, "seconds": round(seconds, 1)})
        if code is None:
            record["note"] = "timed out"
        results[f.stem][name] = record

    jobs = [(name, f) for name in TOOLS for f in fixtures]
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(sanitized, jobs))
    info = run([tool, "--version"], 30, env)[1].strip().splitlines()
    report = {
        "tool": info[-1] if info else "compute-sanitizer",
        "seconds": round(time.perf_counter() - start, 1),
        "fixtures": results,
    }
    Path(args.out).write_text(json.dumps(report, indent=2))
    for stem, r in results.items():
        said = {t: (r.get(t) or {}).get("errors") for t in TOOLS}
        print(stem, (r.get("plain") or {}).get("exit"), said, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
