"""The loader's side of a check: the learner's file, run in a fresh sealed process (``builder``), gives
one PrimFunc (as JSON) per argument set, or the report of why it could not.

The loader is used for one check only: whatever the file's code left in it is gone with it.
"""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from tilescope.core.model import Diagnostic
from tilescope.puzzles.children import ChildGone, Loader
from tilescope.puzzles.failures import exit_report, void
from tilescope.puzzles.protocol import BuildPuzzleRequest
from tilescope.puzzles.replies import Violation, diagnostic_of, expect
from tilescope.puzzles.report import FailureKind, Report
from tilescope.puzzles.session import READY_S


class BuildFailed(Exception):
    """The file's code failed to build a kernel: the diagnostic at its line."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def build(builder: Loader, path: str, source: str, arg_sets: list[dict[str, int]], timeout_s: float) -> list[str]:
    """PrimFunc JSON per argument set, from a fresh loader. Its own start (importing TileLang) may take
    ``READY_S``; the file's code then gets ``timeout_s`` for all the sets. Raises BuildFailed, ChildGone
    or Violation."""
    try:
        hello = builder.receive(READY_S)
    except ChildGone as gone:
        if gone.timed_out:
            gone.reason = f"did not start within {READY_S:g} s"
        raise
    if not isinstance(hello, dict) or hello.get("op") != "ready":
        raise Violation(f"no greeting but {str(hello)[:120]!r}")
    built: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        rid = secrets.token_hex(8)
        request: BuildPuzzleRequest = {"id": rid, "op": "build", "path": path, "source": source, "arg_sets": arg_sets}
        builder.send(request)
        while True:
            reply = expect(builder.receive(deadline - time.monotonic()), rid, {"built", "build-error", "done"})
            if reply["op"] == "done":
                break
            if reply.get("index") != len(built) or len(built) >= len(arg_sets):
                raise Violation(f"an answer out of turn: {json.dumps(reply)[:160]}")
            if reply["op"] == "build-error":
                raise BuildFailed(diagnostic_of(reply.get("diagnostic")))
            if not isinstance(reply.get("prim_func"), str):
                raise Violation("a build answer without a kernel")
            built.append(reply["prim_func"])
    except ChildGone as gone:
        if gone.timed_out:
            gone.reason = f"did not finish within the {timeout_s:g} s limit"
        raise
    if len(built) != len(arg_sets):
        raise Violation(f"'done' after {len(built)} of {len(arg_sets)} kernels")
    return built


def load(
    builder: Loader,
    path: str,
    source: str,
    keys: list[str],
    arg_sets: list[dict[str, int]],
    base: dict[str, Any],
    timeout_s: float,
) -> dict[str, str] | Report:
    """PrimFunc JSON by case key, or the report of why the file could not be loaded."""
    try:
        return dict(zip(keys, build(builder, path, source, arg_sets, timeout_s), strict=True))
    except BuildFailed as failed:
        d = failed.diagnostic
        kind: FailureKind = "out-of-memory" if d.code == "out-of-memory" else "compile-error"
        return Report(**base, passed=False, failure=kind, diagnostics=[d], summary=f"line {d.span.line}: {d.message}")
    except ChildGone as gone:
        return exit_report(base, gone, "loading the file", [])
    except Violation as violation:
        return void(base, "loader", violation, [])
    finally:
        builder.kill()  # used once: nothing it holds is worth waiting for
