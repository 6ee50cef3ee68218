"""``tilescope record -- COMMAND ...``: run a program or its tests with the recording hook (``record``) and
say what was kept in ``.tilescope/instances.json``, and, when the program stopped early, why. On a machine
without a GPU the program runs on the fake device the dry run uses, with stand-in compiles."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from tilescope.core.cli.kernel_options import add_json_option, add_timeout_option
from tilescope.core.compiler.gpu import local_gpu
from tilescope.core.record.recorder import INSTANCES, fake_env, fake_profile, merge, record, recorded_device
from tilescope.core.targets import target_error

_GPU_STOP = re.compile(r"CUDA|NVIDIA driver|No registered target detector|GPU|nvcc", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", default=".", help="where .tilescope/instances.json lives (default .)")
    add_timeout_option(parser, None, "stop the program after this many seconds (default: no limit)")
    add_json_option(parser)
    parser.add_argument(
        "--fake-device",
        choices=("auto", "cuda", "npu", "off"),
        default="auto",
        help="without a GPU, run on a fake one (auto: a CUDA GPU, an NPU for a command naming torch_npu); "
        "off: let the program stop at its first device call",
    )
    parser.add_argument("--target", default="sm_90", help="whose usual part the fake GPU is (default sm_90: H100)")
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
    if target_error(args.target):
        print(f"tilescope record: {target_error(args.target)}")
        return 2
    fake = _fake_device(args, command, workspace)
    code, lines = record(command, workspace, timeout_s=args.timeout, env=fake)
    instances = [r for r in lines if r.get("event") == "instance"]
    added = merge(workspace, instances, [r for r in lines if r.get("event") == "autotune"], " ".join(command))
    ended = next((r for r in lines if r.get("event") == "exit" and r.get("error")), {})
    stop = ended.get("error")
    out = sys.stderr if args.json else sys.stdout
    if args.json:
        summary = {"instances": len(instances), "new": added, "file": str(workspace / INSTANCES)}
        print(json.dumps({**summary, "exit_status": code, "stopped_by": stop}, indent=2))
    else:
        print(f"tilescope record: {len(instances)} kernel instantiations ({added} new) → {workspace / INSTANCES}")
    failed = [r for r in lines if r.get("event") == "test-failed"]
    if fake:
        name = json.loads(fake["TILESCOPE_FAKE_DEVICE"]).get("name")
        print(
            f"tilescope record: no GPU here: ran on a fake {name} (tensors shape-only, kernels not compiled)", file=out
        )
    for each in failed[:5]:
        print(f"tilescope record: {each['test']} failed: {each['error']}{_at(each)}", file=out)
    if stop and fake:
        print(f"tilescope record: the program stopped: {stop}{_at(ended)}", file=out)
    elif stop and _GPU_STOP.search(stop) and local_gpu() is None:
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


def _fake_device(args: argparse.Namespace, command: list[str], workspace: Path) -> dict[str, str]:
    """The fake device's environment where this machine has no GPU (and it is not turned off), else none."""
    if args.fake_device == "off" or local_gpu() is not None:
        return {}
    npu = args.fake_device == "npu" or (args.fake_device == "auto" and any("npu" in part for part in command))
    recorded = recorded_device(str(workspace / INSTANCES))
    return {**fake_env(fake_profile(args.target, recorded, npu=npu)), "TILESCOPE_RECORD_STAND_IN": "1"}


def _at(line: dict[str, Any]) -> str:
    """`` (at FILE, line N)``: the program's line a stop or a failed test was raised at, where the hook saw it."""
    at = line.get("at") or {}
    return f" (at {at['file']}, line {at['line']})" if at.get("file") and at.get("line") else ""
