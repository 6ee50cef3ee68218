"""``check`` through MCP on a warm worker, two builds side by side in one run: each call goes to one
server, then the same call (new GEMM sizes, so no cache answers) to the other, alternating which goes
first, so both see the same machine. Prints median and p95 per build and the ratio of p95s.

    .venv/bin/python benchmarks/bench_check_ab.py --before /work/main/.venv/bin/python [--calls 12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_mcp import GEMM, fresh_gemm_args  # noqa: E402


def server(python: str) -> StdioServerParameters:
    return StdioServerParameters(command=python, args=["-m", "tilescope", "mcp", "--root", str(ROOT)], cwd=str(ROOT))


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def run(before: str, after: str, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"before": [], "after": []}
    async with Client(server(before)) as first, Client(server(after)) as second:
        clients = {"before": first, "after": second}
        for client in clients.values():  # warm: the worker started and the GEMM analysed once
            await client.call_tool("check", {"path": GEMM})
        for index in range(calls):
            order = ["before", "after"] if index % 2 == 0 else ["after", "before"]
            arguments: dict[str, Any] = {"path": GEMM, "args": fresh_gemm_args(index)}
            for label in order:
                started = time.monotonic()
                answer = await clients[label].call_tool("check", arguments)
                times[label].append(time.monotonic() - started)
                assert not answer.is_error, (label, answer.content)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--before", required=True, help="the interpreter of the build to compare against")
    parser.add_argument("--after", default=sys.executable)
    parser.add_argument("--calls", type=int, default=12)
    options = parser.parse_args()
    times = anyio.run(run, options.before, options.after, options.calls)
    for label, values in times.items():
        print(f"{label:>6}: median {statistics.median(values):.3f} s, p95 {p95(values):.3f} s over {len(values)} calls")
    ratio = p95(times["after"]) / p95(times["before"])
    print(f"p95 after / before: {ratio:.2f} (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
