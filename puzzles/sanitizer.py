"""One small case under NVIDIA's compute-sanitizer (memcheck, then racecheck), where it is installed.

The case runs in its own kernel process started under the tool, on unguarded buffers and with
PyTorch's caching allocator off, so that every tensor is its own allocation and a write past its
end is one the tool sees. The tool writes its log to a file the grader reads: the first error, with
its kernel and the generated CUDA source line (kernels are compiled with ``-lineinfo`` for this).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from tilescope.puzzles.buffers import Workspace
from tilescope.puzzles.cases import PlannedCase
from tilescope.puzzles.children import Child, ChildGone
from tilescope.puzzles.report import SanitizerFinding as Finding

TOOLS = ("memcheck", "racecheck")
_SUMMARY = re.compile(r"(ERROR|RACECHECK) SUMMARY: (\d+) (error|hazard)")


def find_tool() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "bin" / "compute-sanitizer").exists():
            return str(Path(home) / "bin" / "compute-sanitizer")
    return None


def small_case(cases: list[PlannedCase]) -> PlannedCase:
    """The smallest fixed case that is not a multiple of 64 on every axis (ragged edges are where bugs are)."""
    fixed = [c for c in cases if c.kind == "fixed" and c.seed == 0]

    def size(c: PlannedCase) -> int:
        total = 1
        for v in c.args.values():
            total *= v
        return total

    ragged = [c for c in fixed if any(v % 64 for v in c.args.values()) and size(c) > 1]
    return min(ragged or fixed, key=size)


def parse(tool: str, log: str) -> Finding:
    lines = [ln.removeprefix("=========").removeprefix(" ").rstrip() for ln in log.splitlines() if ln.startswith("=")]
    errors = 0
    for ln in lines:
        m = _SUMMARY.search(ln)
        if m:
            errors = int(m.group(2))
    first: list[str] = []
    for i, ln in enumerate(lines):
        if ln.strip() and not ln.startswith(" ") and "SUMMARY" not in ln and "COMPUTE-SANITIZER" not in ln:
            first = [ln.strip()] + [x.strip() for x in lines[i + 1 : i + 6] if x.startswith(" ") and x.strip()]
            break
    return Finding(tool, errors, first if errors else [])


def run_tool(tool: str, exe: str, run_once: Callable[[Child, Workspace], None]) -> Finding:
    """Run an executor child under ``tool``, in which ``run_once`` compiles and runs one case (the GPU
    route passes it, so this module needs nothing of the judge's); raises ChildGone if the process does not finish."""
    ws = Workspace()
    log = Path(ws.path) / f"{tool}.log"
    prefix = [exe, "--tool", tool, "--log-file", str(log), "--print-limit", "3"]
    child = Child("kernel", "tilescope.puzzles.executor", prefix=prefix, env={"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    try:
        run_once(child, ws)
        child.close(wait_s=60.0)
        return parse(tool, log.read_text() if log.exists() else "")
    except ChildGone:
        if log.exists():
            finding = parse(tool, log.read_text())
            if finding.errors:
                return finding
        raise
    finally:
        child.kill()
        ws.close()
