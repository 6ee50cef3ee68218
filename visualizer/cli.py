"""The visualizer's subcommands: ``tilescope trace``, ``tilescope layout`` and ``tilescope graph``.

Each ``register_*`` adds its subcommand to the ``tilescope`` dispatcher; the heavy modules
(Textual, matplotlib, graphviz) are imported only when their command runs.
"""

from __future__ import annotations

import argparse
from typing import Protocol

from tilescope.core.cli.kernel_options import add_kernel_options


class Subcommands(Protocol):
    """What ``ArgumentParser.add_subparsers()`` returns, as far as a command is added to it."""

    def add_parser(self, name: str, *, help: str) -> argparse.ArgumentParser: ...


def _kernel_arguments(parser: argparse.ArgumentParser, json: bool = False) -> None:
    parser.add_argument("file", help="a Python file with TileLang kernels")
    add_kernel_options(parser, one_kernel=True, json=json)


def register_trace(subparsers: Subcommands) -> None:
    parser = subparsers.add_parser("trace", help="browse the compiler's passes and the IR diff of each")
    _kernel_arguments(parser)
    parser.add_argument(
        "--export", choices=["html", "patch"], help="write the whole trace to a file instead of opening the viewer"
    )
    parser.add_argument("-o", "--output", help="where --export writes (default: <kernel>-trace.html/.patch)")
    parser.add_argument(
        "--text", action="store_true", help="print every pass and its IR diff as text instead of opening the viewer"
    )

    def run(args: argparse.Namespace) -> int:
        from tilescope.visualizer.trace_cmd import run as trace

        return trace(args)

    parser.set_defaults(func=run)


def register_layout(subparsers: Subcommands) -> None:
    parser = subparsers.add_parser("layout", help="draw a buffer's inferred layout and its bank conflicts")
    _kernel_arguments(parser, json=True)
    parser.add_argument("--buffer", help="the fragment or shared buffer to draw (default: the first, fragments first)")
    parser.add_argument("--all", action="store_true", help="draw every buffer that has a layout")
    parser.add_argument("-o", "--output", help="image to write: .png, .svg or .pdf (default <kernel>-<buffer>.png)")
    parser.add_argument("--term", action="store_true", help="draw in the terminal instead of (or besides -o) a file")

    def run(args: argparse.Namespace) -> int:
        from tilescope.visualizer.layout_cmd import run as layout

        return layout(args)

    parser.set_defaults(func=run)


def register_graph(subparsers: Subcommands) -> None:
    parser = subparsers.add_parser("graph", help="draw the kernel's tile dataflow with Graphviz")
    _kernel_arguments(parser)
    parser.add_argument("-o", "--output", help="file to write: .svg, .png, .pdf or .dot (default <kernel>.svg)")

    def run(args: argparse.Namespace) -> int:
        from tilescope.visualizer.graph_cmd import run as graph

        return graph(args)

    parser.set_defaults(func=run)
