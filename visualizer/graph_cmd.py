"""``tilescope graph FILE``: render the kernel's tile dataflow with Graphviz's ``dot``.

Any ``dot`` on PATH will do: Graphviz itself, or a compatible renderer. Without one the DOT source
is written and the message says how to render it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

import graphviz
from tilescope.visualizer.analyze import kernel_model, open_analyzer
from tilescope.visualizer.dataflow import build_graph

INSTALL_HINT = (
    "install Graphviz to render it (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; "
    "conda: conda install graphviz), then run: dot -T{fmt} {dot} -o {out}"
)


def write(graph: graphviz.Digraph, out: Path, dot: str | None) -> tuple[bool, str]:
    """Write ``graph`` to ``out`` in the format its suffix names; ``(written as asked, message)``."""
    fmt = out.suffix.lstrip(".") or "svg"
    if fmt in ("dot", "gv"):
        out.write_text(graph.source)
        return True, f"{out}: DOT source"
    if dot is None:
        source = out.with_suffix(".dot")
        source.write_text(graph.source)
        return False, f"{source}: written, but no `dot` on PATH to make {out}; " + INSTALL_HINT.format(
            fmt=fmt, dot=source, out=out
        )
    rendered = subprocess.run([dot, f"-T{fmt}"], input=graph.source.encode(), capture_output=True, check=False)
    if rendered.returncode != 0:
        return False, f"dot -T{fmt} failed: {rendered.stderr.decode(errors='replace').strip()}"
    out.write_bytes(rendered.stdout)
    return True, f"{out}: rendered with {dot}"


def run(args: argparse.Namespace) -> int:
    with open_analyzer(args) as analyzer:
        _, kernel = kernel_model(args, analyzer)
    if kernel is None:
        return 1
    ok, message = write(build_graph(kernel), Path(args.output or f"{kernel.kernel}.svg"), shutil.which("dot"))
    print(f"{message} ({len(kernel.buffers)} buffers, {len(kernel.accesses)} tile operations)")
    return 0 if ok else 1
