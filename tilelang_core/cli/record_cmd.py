"""``tilescope record -- COMMAND ...``: run a program or its tests with the recording hook (``record``) and
say what was kept in ``.tilescope/instances.json``, and, when the program stopped early, why."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tilescope.core.cli.kernel_options import add_json_option, add_timeout_option
from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.record.recorder import INSTANCES, merge, record

_GPU_STOP = re.compile(r"CUDA|NVIDIA driver|No registered target detector|GPU|nvcc", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", default=".", help="where .tilescope/instances.json lives (default .)")
    add_timeout_option(parser, None, "stop the program after this many seconds (default: no limit)")
    add_json_option(parser)
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- COMMAND ...", help="the program to run")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    command = list(args.cmd)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        print("tilescope record: give the command to run after --, e.g. tilescope record -- python gemm.py")
        return 2
    workspace = Path(args.workspace).resolve()
    code, lines = record(command, workspace, timeout_s=args.timeout)
    instances = [r for r in lines if r.get("event") == "instance"]
    added = merge(workspace, instances, [r for r in lines if r.get("event") == "autotune"], " ".join(command))
    stop = next((r["error"] for r in lines if r.get("event") == "exit" and r.get("error")), None)
    out = sys.stderr if args.json else sys.stdout
    if args.json:
        summary = {"instances": len(instances), "new": added, "file": str(workspace / INSTANCES)}
        print(json.dumps({**summary, "exit_status": code, "stopped_by": stop}, indent=2))
    else:
        print(f"tilescope record: {len(instances)} kernel instantiations ({added} new) → {workspace / INSTANCES}")
    if stop and _GPU_STOP.search(stop) and not local_gpu() is not None:
        print(
            "tilescope record: no GPU here, so the program stopped at its first device call "
            f"({stop}); kernels it would build after that point were not recorded",
            file=out,
        )
    elif code == 124:
        print(f"tilescope record: the command was stopped after {args.timeout:g} s", file=out)
    elif code != 0:
        print(f"tilescope record: the command exited with status {code}" + (f" ({stop})" if stop else ""), file=out)
    return code
