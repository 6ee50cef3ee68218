"""The MCP server under a mixed load of tool calls through the official SDK's client, hostile input mixed in.

Prints server deaths, protocol errors, error results by kind, latency per tool (median, p95), and the
ratio of ``check``'s p95 on a warm worker to the analysis time of ``tilescope check`` itself (the
``Analyzer.analyze`` call that command makes, in process, on the same files and arguments; neither side
answers from a cache: every timed check names arguments not analysed before).

    .venv/bin/python benchmarks/bench_mcp.py [--calls 1000] [--seed 0] [--timeout 6] [--memory 2048] [--json F]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
GEMM = "examples/gemm.py"
FIXTURES = "tests/core/fixtures"


def fresh_gemm_args(index: int) -> dict[str, int]:
    """Distinct GEMM sizes, one per index, so each timed check is analysed anew."""
    blocks = [(64, 64, 32), (128, 128, 32), (128, 64, 64), (64, 128, 32)]
    block_m, block_n, block_k = blocks[index % len(blocks)]
    size = 512 + 128 * (index // len(blocks))
    return {"M": size, "N": size, "K": 1024, "block_M": block_m, "block_N": block_n, "block_K": block_k}


def plan(calls: int, seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, tool, arguments) for every call, in a shuffled but reproducible order."""
    rng = random.Random(seed)
    examples = ["examples/gemm.py", "examples/softmax.py", "examples/elementwise_add.py", "examples/flash_attention.py"]
    mix: list[tuple[float, str, str, Any]] = [
        (0.30, "check-warm", "check", lambda i: {"path": rng.choice(examples)}),
        (0.08, "check-fresh", "check", lambda i: {"path": GEMM, "args": fresh_gemm_args(i)}),
        (0.15, "explain", "explain", lambda i: {"code": rng.choice(["gemm-shape", "timeout", "copy-shape"])}),
        (0.10, "layout", "layout", lambda i: {"path": GEMM, "buffer": rng.choice(["C_local", "A_shared"])}),
        (0.11, "passes", "passes", lambda i: {"path": rng.choice(examples[:2])}),
        (0.01, "pass_diff", "pass_diff", lambda i: {"path": GEMM, "index": rng.randrange(0, 60)}),
        (0.03, "run", "run", lambda i: {"path": "examples/elementwise_add.py", "args": {"N": 2048}}),
        (0.04, "source", "check", lambda i: {"source": (ROOT / GEMM).read_text() + f"\n# {i % 5}\n"}),
        (
            0.03,
            "outside",
            "check",
            lambda i: {"path": rng.choice(["/etc/passwd", "../../etc/shadow", "/proc/self/environ"])},
        ),
        (0.02, "huge", "check", lambda i: {"source": "x = 1\n" * ((10 << 20) // 6)}),
        (0.04, "invalid", "check", lambda i: rng.choice([{"path": GEMM, "detail": "all"}, {}, {"path": 3}])),
        (0.02, "unknown-tool", "no_such_tool", lambda i: {}),
        (0.02, "loop", "check", lambda i: {"path": f"{FIXTURES}/hangs.py"}),
        (0.02, "greedy", "check", lambda i: {"path": f"{FIXTURES}/greedy.py"}),
        (0.03, "exit", "check", lambda i: {"path": f"{FIXTURES}/exits.py"}),
    ]
    weights = [w for w, *_ in mix]
    chosen = rng.choices(range(len(mix)), weights=weights, k=calls)
    fresh = 0
    out = []
    for index in chosen:
        _, kind, tool, make = mix[index]
        if kind == "check-fresh":
            out.append((kind, tool, make(fresh)))
            fresh += 1
        else:
            out.append((kind, tool, make(len(out))))
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def drive(calls: list[tuple[str, str, dict[str, Any]]], timeout: float, memory: int) -> dict[str, Any]:
    limits = ["--timeout", str(timeout), "--memory", str(memory)]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "tilescope", "mcp", "--root", str(ROOT), *limits]
    )
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: Counter[str] = Counter()
    protocol_errors: list[str] = []
    deaths = 0
    done = 0
    while done < len(calls):
        try:
            async with Client(params, read_timeout_seconds=600) as client:
                await client.call_tool("check", {"path": GEMM})  # warm the worker before timing anything
                while done < len(calls):
                    kind, tool, arguments = calls[done]
                    started = time.perf_counter()
                    try:
                        result = await client.call_tool(tool, arguments)
                    except Exception as err:  # a protocol-level failure, not an error result
                        protocol_errors.append(f"{kind}: {type(err).__name__}: {err}")
                        done += 1
                        continue
                    latencies[kind].append(time.perf_counter() - started)
                    if result.is_error:
                        errors[kind] += 1
                    done += 1
                    if done % 100 == 0:
                        print(f"  {done} calls", file=sys.stderr)
        except Exception as err:
            deaths += 1
            print(f"  the server died after {done} calls: {type(err).__name__}: {err}", file=sys.stderr)
            done += 1
    return {"latencies": latencies, "errors": errors, "protocol_errors": protocol_errors, "deaths": deaths}


def reference_analysis(arguments: list[dict[str, int]]) -> list[float]:
    """What ``tilescope check`` spends analysing each of these, warm worker, no cache hit."""
    from tilescope.core.compiler.service import Analyzer

    times = []
    with Analyzer() as analyzer:
        analyzer.analyze(str(ROOT / GEMM))
        for args in arguments:
            started = time.perf_counter()
            analyzer.analyze(str(ROOT / GEMM), args=args)
            times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=6.0, help="the server's seconds per kernel")
    parser.add_argument("--memory", type=int, default=2048, help="the server's worker memory limit in MiB")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    calls = plan(args.calls, args.seed)
    started = time.perf_counter()
    got = anyio.run(drive, calls, args.timeout, args.memory)
    wall = time.perf_counter() - started
    fresh = [a for kind, _, a in calls if kind == "check-fresh"]
    reference = reference_analysis(fresh)
    rows = {}
    deaths, protocol = got["deaths"], len(got["protocol_errors"])
    print(f"{args.calls} calls in {wall:.1f} s: {deaths} server deaths, {protocol} protocol errors")
    for line in got["protocol_errors"][:10]:
        print(f"  protocol error: {line}")
    print(f"{'kind':14} {'calls':>6} {'errors':>6} {'p50 ms':>9} {'p95 ms':>9}")
    for kind, values in sorted(got["latencies"].items()):
        p50, p95 = statistics.median(values) * 1000, percentile(values, 0.95) * 1000
        rows[kind] = {"calls": len(values), "errors": got["errors"][kind], "p50_ms": p50, "p95_ms": p95}
        print(f"{kind:14} {len(values):6} {got['errors'][kind]:6} {p50:9.1f} {p95:9.1f}")
    mcp_p95 = percentile(got["latencies"]["check-fresh"], 0.95)
    ref_p95 = percentile(reference, 0.95)
    print(
        f"check, warm worker, no cache hit: MCP p95 {mcp_p95 * 1000:.0f} ms vs tilescope check's analysis "
        f"p95 {ref_p95 * 1000:.0f} ms (median {statistics.median(reference) * 1000:.0f} ms): "
        f"ratio {mcp_p95 / ref_p95:.2f}"
    )
    if args.json:
        figures = {
            "calls": args.calls,
            "wall_s": wall,
            "deaths": got["deaths"],
            "protocol_errors": got["protocol_errors"],
            "kinds": rows,
            "check_p95_ratio": mcp_p95 / ref_p95,
            "reference_p95_ms": ref_p95 * 1000,
        }
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
