"""The ``tilescope`` command: a dispatcher over subcommands that each package registers.

The core imports none of the UI packages: they announce themselves through the
``tilescope.commands`` entry-point group, and each registers its own argparse subcommand.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilescope",
        description="See what the TileLang compiler inferred: shapes, layouts, passes, generated code.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for entry in sorted(entry_points(group="tilescope.commands"), key=lambda e: e.name):
        try:
            register = entry.load()
        except ImportError as err:
            _unavailable(subparsers, entry.name, err)
            continue
        register(subparsers)
    return parser


def _unavailable(subparsers: argparse._SubParsersAction, name: str, err: ImportError) -> None:
    """Keep the other commands usable when one package cannot be imported, and say why."""
    message = f"tilescope {name} is unavailable: {err}"
    parser = subparsers.add_parser(name, help=f"(unavailable: {err})")
    parser.set_defaults(func=lambda _args: print(message, file=sys.stderr) or 2)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


def register_check(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.check_cmd import add_arguments

    add_arguments(subparsers.add_parser("check", help="analyse the kernels of a file with the compiler"))


def register_record(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.record import add_arguments

    add_arguments(
        subparsers.add_parser(
            "record", help="run a program or its tests and record every kernel it builds (.tilescope/instances.json)"
        )
    )


if __name__ == "__main__":
    sys.exit(main())
