"""On a GPU machine: the MCP ``profile`` tool (the official SDK's client, over stdio) against
``tilescope profile --json`` on the same kernel.

The two are separate runs of one kernel, so the measured times differ by the GPU's noise; the rest
of the report (kernel, arguments, target, GPU, static model, which Nsight Compute metrics were
read) must be equal. Prints the comparison and both medians; writes it as JSON.

    python benchmarks/gpu/mcp_profile.py OUT_JSON [FILE ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from tilescope.core.model import untimed

ROOT = Path(__file__).resolve().parents[2]
MEASURED = ("timing", "roofline_share", "ncu")


def _cli(path: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "tilescope", "profile", path, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return json.loads(done.stdout)


async def _mcp(paths: list[str]) -> list[dict[str, Any]]:
    # The SDK starts the server with a small default environment; this one's PYTHONPATH (the GPU
    # machine's unpacked site and install shim) must reach it, as an installed package's would.
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tilescope", "mcp", "--root", str(ROOT)],
        cwd=str(ROOT),
        env=dict(os.environ),
    )
    answers = []
    async with Client(server) as client:
        for path in paths:
            result = await client.call_tool("profile", {"path": path, "detail": "full", "max_chars": 2_000_000})
            answers.append({"error": result.is_error, **(result.structured_content or {})})
    return answers


def _rest(report: dict[str, Any]) -> dict[str, Any]:
    return untimed({k: v for k, v in report.items() if k not in MEASURED and k != "path"})


def main() -> int:
    out = Path(sys.argv[1])
    paths = sys.argv[2:] or ["examples/gemm.py", "examples/softmax.py"]
    answers = anyio.run(_mcp, paths)
    rows = []
    for path, answer in zip(paths, answers, strict=True):
        mcp_report = answer.get("report") or {}
        cli_report = _cli(path)
        same = _rest(mcp_report) == _rest(cli_report)
        t_mcp = (mcp_report.get("timing") or {}).get("time_us")
        t_cli = (cli_report.get("timing") or {}).get("time_us")
        ncu_keys = sorted((mcp_report.get("ncu") or {}).get("metrics") or {})
        cli_keys = sorted((cli_report.get("ncu") or {}).get("metrics") or {})
        row = {
            "file": path,
            "mcp_error": answer["error"],
            "equal_apart_from_measurements": same,
            "gpu": [mcp_report.get("gpu"), cli_report.get("gpu")],
            "time_us": [t_mcp, t_cli],
            "same_ncu_metrics": ncu_keys == cli_keys,
        }
        if not same:
            a, b = _rest(mcp_report), _rest(cli_report)
            row["differing_keys"] = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        rows.append(row)
        print(json.dumps(row), flush=True)
    out.write_text(json.dumps(rows, indent=1))
    return 0 if all(r["equal_apart_from_measurements"] and not r["mcp_error"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
