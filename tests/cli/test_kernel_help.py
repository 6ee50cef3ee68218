"""``--kernel``'s help says which kernel a command takes without it: the one the file builds (for the
commands that work on one kernel) or every kernel (for those that work on all)."""

from __future__ import annotations

import argparse

import pytest
from tilescope.core.cli.kernel_options import EVERY_KERNEL_HELP, ONE_KERNEL_HELP
from tilescope.core.cli.main import build_parser


def _kernel_help(command: str) -> str | None:
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = subparsers.choices[command]
    return next(a.help for a in parser._actions if "--kernel" in a.option_strings)


@pytest.mark.parametrize("command", ["run", "trace", "layout", "graph", "profile"])
def test_one_kernel_commands_say_which_kernel_they_take(command: str) -> None:
    assert _kernel_help(command) == ONE_KERNEL_HELP
    assert "builds first when run" in ONE_KERNEL_HELP and "the choice is printed" in ONE_KERNEL_HELP


@pytest.mark.parametrize("command", ["check", "variants"])
def test_every_kernel_commands_say_so(command: str) -> None:
    assert _kernel_help(command) == EVERY_KERNEL_HELP == "only this kernel (default: every kernel of the file)"
