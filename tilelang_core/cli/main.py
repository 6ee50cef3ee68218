"""The ``tilescope`` command: a dispatcher over subcommands that each package registers.

The core imports none of the UI packages: they announce themselves through the
``tilescope.commands`` entry-point group, and each registers its own argparse subcommand.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, entry_points, version

from tilescope.core.cli.kernel_options import UsageError, add_python_option
from tilescope.core.compat import releases
from tilescope.core.environment import MissingExtra, extra_for, require_extra


def build_parser(typed: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line's parser. When ``typed`` (the command line's words) starts with an installed command,
    only that one is registered, not every package's (a tenth of a second and more at every start, which an
    editor's language server waits for); otherwise every one is (help, errors, a global option first)."""
    parser = argparse.ArgumentParser(
        prog="tilescope",
        description="See what the TileLang compiler inferred: shapes, layouts, passes, generated code.",
    )
    parser.add_argument(
        "-V", "--version", action="store_true", help="print Tilescope's version and the TileLang it analyses with"
    )
    add_python_option(parser, dest="global_python")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    entries = sorted(entry_points(group="tilescope.commands"), key=lambda e: e.name)
    chosen = [e for e in entries if typed and e.name == typed[0]]
    for entry in chosen or entries:
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


def version_text(python: str | None = None) -> str:
    """Tilescope's version, and the TileLang release of the interpreter the compiler tier runs in."""
    try:
        own = version("tilescope")
    except PackageNotFoundError:
        own = "unknown (not installed)"
    interpreter = python or sys.executable
    try:
        tilelang = releases.interpreter_version(python) if python else releases.installed_version()
    except OSError as err:
        return f"tilescope {own}\nTileLang: cannot ask {interpreter}: {err}"
    if tilelang is None:
        return (
            f"tilescope {own}\nTileLang not installed ({interpreter}): the compiler tier runs where --python "
            f"points (TileLang {releases.SUPPORTED}), or install tilescope[compiler]; check --static needs none"
        )
    problem = releases.problem(tilelang)
    return f"tilescope {own}\nTileLang {tilelang} ({interpreter})" + (f"\n{problem}" if problem else "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; its exit status (see README: 2 a usage error, 130 interrupted)."""
    try:
        code = _dispatch(argv)
        if not sys.stdout.closed:  # the language server closes it on exit
            sys.stdout.flush()
        return code
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``): say nothing more, and keep the interpreter's own final flush quiet.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _dispatch(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(words)
    if getattr(args, "python", None) is None and args.global_python is not None:
        args.python = args.global_python  # ``tilescope --python P COMMAND``: the same as COMMAND's own --python
    if args.version:
        print(version_text(args.global_python))
        return 0
    if args.command is None:
        parser.error("a command is required")
    try:
        return int(args.func(args) or 0)
    except MissingExtra as err:
        print(err, file=sys.stderr)
        return 2
    except ModuleNotFoundError as err:
        # An optional dependency a command imports late: name the extra that brings it, not a traceback.
        extra = extra_for(err)
        if extra is None:
            raise
        try:
            require_extra(extra, _command_words(args), only=((err.name or "").split(".")[0],))
        except MissingExtra as missing:
            print(missing, file=sys.stderr)
            return 2
        raise
    except UsageError as err:
        usage = getattr(args, "usage_parser", parser)
        usage.print_usage(sys.stderr)
        print(f"{usage.prog}: error: {err}", file=sys.stderr)
        return 2


def _command_words(args: argparse.Namespace) -> str:
    """``puzzles serve`` for ``tilescope puzzles serve ...``: the command as the user typed it."""
    verb = getattr(args, "verb", None)
    return f"{args.command} {verb}" if verb else str(args.command)


def register_check(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.check_cmd import add_arguments

    add_arguments(subparsers.add_parser("check", help="analyse the kernels of a file with the compiler"))


def register_profile(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.profile_cmd import add_arguments

    add_arguments(
        subparsers.add_parser("profile", help="time a kernel on this GPU next to its roofline, conflicts and occupancy")
    )


def register_record(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.record_cmd import add_arguments

    add_arguments(
        subparsers.add_parser(
            "record", help="run a program or its tests and record every kernel it builds (.tilescope/instances.json)"
        )
    )


def register_run(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.run_cmd import add_arguments as add_run_arguments

    add_run_arguments(subparsers.add_parser("run", help="run a kernel on the CPU with the tile interpreter"))


def register_schedule(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.schedule_cmd import add_arguments

    add_arguments(subparsers.add_parser("schedule", help="an Ascend kernel's Cube and Vector schedule with its flags"))


def register_variants(subparsers: argparse._SubParsersAction) -> None:
    from tilescope.core.cli.variants_cmd import add_arguments

    add_arguments(subparsers.add_parser("variants", help="every target and autotune config of a kernel, side by side"))


if __name__ == "__main__":
    sys.exit(main())
