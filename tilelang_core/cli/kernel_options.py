"""The options every command that builds a kernel shares, defined once: ``--kernel``, ``--arg``,
``--target``, ``--python``, ``--timeout``, ``--memory``, ``--json`` (and ``-j``, ``--ray`` where they apply).

A bad value is a usage error in argparse's way (usage line, ``error:``, exit status 2) before any
work starts: each option's ``type=`` rejects it at parse time, and checks that need the file
(an ``--arg`` naming no parameter of the kernel) raise ``UsageError``, which the dispatcher turns
into the same message and status. Nothing here exits the process itself.

A command adds the options with ``add_kernel_options(parser)`` and reads them back with
``KernelOptions.from_args(args)``; ``analyzer_options()`` is what ``service.Analyzer`` takes.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from tilescope.core.compiler.discovery import discover
from tilescope.core.compiler.service import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from tilescope.core.lines import SourceError, read_source
from tilescope.core.static.entry import KernelChoice, kernel_choice
from tilescope.core.targets import target_error

_N = TypeVar("_N", int, float)

DEFAULT_TARGET = "sm_90"
ONE_KERNEL_HELP = (
    "the kernel to use (default: the one the file builds first when run as a program, else the first its "
    "__main__ block or a test_ function leads to, else the first in the file; the choice is printed)"
)
EVERY_KERNEL_HELP = "only this kernel (default: every kernel of the file)"
MIN_MEMORY_MB = 512
"""TileLang cannot even be imported in this little (measured: 700 MiB fails, 900 MiB lowers a small
kernel), and an interpreter given far less can spin at start instead of exiting, so a limit below
it is refused as a usage error rather than tried. Between it and what TileLang needs, the worker's
failure to start is reported at once with what it printed."""


class UsageError(Exception):
    """A bad option value found after parsing (it needs the file); reported like argparse's errors, exit 2."""


def parse_override(text: str) -> tuple[str, Any]:
    """``"M=1024"`` → ``("M", 1024)``; a value Python cannot read stays a string (``dtype=float16``)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected K=V, got {text!r}")
    if not key.isidentifier():
        raise argparse.ArgumentTypeError(f"{key!r} is not a parameter name")
    try:
        value: Any = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError):
        value = raw
    if _negative(value):
        raise argparse.ArgumentTypeError(f"{key}={raw}: a kernel size cannot be negative")
    return key, value


def _negative(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value < 0
    if isinstance(value, list | tuple):
        return any(_negative(v) for v in value)
    return False


def parse_overrides(pairs: Iterable[str | tuple[str, Any]]) -> dict[str, Any]:
    """``["M=1024", "dtype=float16"]`` → ``{"M": 1024, "dtype": "float16"}``; raises ``UsageError``."""
    values: dict[str, Any] = {}
    for pair in pairs:
        if isinstance(pair, str):
            try:
                pair = parse_override(pair)
            except argparse.ArgumentTypeError as err:
                raise UsageError(f"argument --arg: {err}") from None
        values[pair[0]] = pair[1]
    return values


def target_name(text: str) -> str:
    problem = target_error(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def _number(text: str, convert: Callable[[str], _N], expected: str) -> _N:
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def positive_seconds(text: str) -> float:
    value = _number(text, float, "seconds")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def memory_mib(text: str) -> int:
    value = _number(text, int, "MiB")
    if value < MIN_MEMORY_MB:
        raise argparse.ArgumentTypeError(
            f"{value} MiB is too little for the compiler worker to import TileLang (at least {MIN_MEMORY_MB})"
        )
    return value


def job_count(text: str) -> int:
    value = _number(text, int, "a number of workers")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def interpreter(text: str) -> str:
    """An interpreter given by path, or by a name found on ``PATH`` (``python3.12``)."""
    path = Path(text).expanduser()
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    found = shutil.which(text) if os.sep not in text else None
    if found:
        return found
    raise argparse.ArgumentTypeError(f"no interpreter at {text!r}")


def add_python_option(parser: argparse.ArgumentParser, dest: str = "python") -> None:
    parser.add_argument(
        "--python",
        dest=dest,
        type=interpreter,
        metavar="PATH",
        help="run the compiler in this interpreter (one with TileLang 0.1.10-0.1.15; Tilescope not needed there)",
    )


def add_timeout_option(parser: argparse.ArgumentParser, default: float | None, what: str) -> None:
    """``--timeout S``: ``what`` the seconds limit, with ``default`` (``None``: no limit)."""
    parser.add_argument(
        "--timeout",
        type=positive_seconds,
        default=default,
        metavar="S",
        help=what if default is None else f"{what} (default {default:g})",
    )


def add_json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON (schema in SCHEMA.md)")


def add_kernel_options(
    parser: argparse.ArgumentParser,
    *,
    kernel: bool = True,
    one_kernel: bool = False,
    arg: bool = True,
    target: bool = True,
    python: bool = True,
    timeout: bool = True,
    memory: bool = True,
    json: bool = True,
    jobs: int | None = None,
    ray: str = "",
    timeout_default: float | None = DEFAULT_TIMEOUT_S,
    timeout_help: str = "seconds one kernel may compute",
) -> None:
    """Add the shared options a command uses; ``one_kernel``: the command works on one kernel (the one
    ``KernelOptions.choose`` picks), not on every kernel of the file; ``jobs`` adds ``-j/--jobs`` with
    that default, ``ray`` adds ``--ray [ADDRESS]`` fanning out what it names (``"the files"``) over
    ``-j`` slots of a Ray cluster.

    A new command takes what applies to it, e.g. ``add_kernel_options(parser, jobs=1)`` for all of
    them, or ``add_kernel_options(parser, target=False)``, then reads ``KernelOptions.from_args(args)``.
    """
    parser.set_defaults(usage_parser=parser)  # where the dispatcher reports a ``UsageError`` found later
    if kernel:
        parser.add_argument("--kernel", metavar="NAME", help=ONE_KERNEL_HELP if one_kernel else EVERY_KERNEL_HELP)
    if arg:
        parser.add_argument(
            "--arg",
            action="append",
            default=[],
            type=parse_override,
            metavar="K=V",
            help="a kernel parameter's value (repeatable)",
        )
    if target:
        parser.add_argument(
            "--target",
            default=DEFAULT_TARGET,
            type=target_name,
            help=f"sm_XX (CUDA), gfxNNN (HIP), metal or c (default {DEFAULT_TARGET})",
        )
    if python:
        add_python_option(parser)
    if timeout:
        add_timeout_option(parser, timeout_default, timeout_help)
    if memory:
        parser.add_argument(
            "--memory",
            type=memory_mib,
            default=DEFAULT_MEMORY_MB,
            metavar="MiB",
            help=f"the compiler worker's memory limit (default {DEFAULT_MEMORY_MB})",
        )
    if json:
        add_json_option(parser)
    if jobs is not None:
        parser.add_argument(
            "-j",
            "--jobs",
            type=job_count,
            default=jobs,
            metavar="N",
            help=f"compiler workers in parallel (default {jobs})",
        )
    if ray:
        parser.add_argument(
            "--ray",
            nargs="?",
            const="local",
            metavar="ADDRESS",
            help=f"fan {ray} out over a Ray cluster (an address, auto, or none: a new local one); -j N slots",
        )


def readable(paths: Iterable[str | Path]) -> list[tuple[str, str]]:
    """``(path, text)`` of each file that can be read and decoded, for ``check_parameters``; the
    analysis itself reports the others."""
    found = []
    for path in paths:
        try:
            found.append((str(path), read_source(path)))
        except SourceError:
            continue
    return found


def process_started() -> float:
    """When this command started, on ``time.monotonic``'s clock: its interpreter's start, read from ``/proc``
    (a ``--timeout`` counts from there, as the user does), else now."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
    except (OSError, ValueError):
        return now
    ticks = int(stat[stat.rfind(b")") + 2 :].split()[19])
    age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    return now - age if 0 <= age < 3600 else now


@dataclass(frozen=True)
class KernelOptions:
    """The shared options as a command reads them."""

    kernel: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    target: str = DEFAULT_TARGET
    python: str | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    memory_mb: int = DEFAULT_MEMORY_MB
    json: bool = False
    ray: str | None = None
    """``--ray``: a cluster's address, ``"local"`` for a new local cluster, ``None`` for this machine's workers."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> KernelOptions:
        return cls(
            kernel=getattr(args, "kernel", None),
            args=parse_overrides(getattr(args, "arg", None) or []),
            target=getattr(args, "target", None) or DEFAULT_TARGET,
            python=getattr(args, "python", None),
            timeout_s=getattr(args, "timeout", None) or DEFAULT_TIMEOUT_S,
            memory_mb=getattr(args, "memory", None) or DEFAULT_MEMORY_MB,
            json=bool(getattr(args, "json", False)),
            ray=getattr(args, "ray", None),
        )

    def analyzer_options(self) -> dict[str, Any]:
        """Keyword arguments of ``service.Analyzer``."""
        return {"timeout_s": self.timeout_s, "memory_mb": self.memory_mb, "python": self.python}

    def ray_address(self) -> str | None:
        """What ``ray.init`` joins: ``None`` starts a new local cluster."""
        return None if self.ray in (None, "local") else self.ray

    def choose(self, path: str, command: str, stream: TextIO | None = None) -> KernelOptions:
        """These options with ``kernel`` set, for a command that works on one kernel of ``path``: the one
        ``--kernel`` names (checked by ``check_parameters``), else the one the file means
        (``static.entry``). When the file has more than one, the choice, why, the others and how to pick
        one of them are said on ``stream`` (stderr), so that output to a pipe stays the result alone."""
        if self.kernel:
            return self
        try:
            choice = kernel_choice(read_source(path), path)
        except SourceError:
            return self  # the analysis reports the file it cannot read
        if choice is None:
            return self
        if len(choice.kernels) > 1:
            print(choice_line(command, choice), file=stream or sys.stderr)
        return replace(self, kernel=choice.kernel)

    def check_parameters(self, sources: Iterable[tuple[str, str]]) -> None:
        """Raise ``UsageError`` when ``--kernel`` or an ``--arg`` names nothing in the files.

        ``sources`` are ``(path, text)`` pairs; kernels and their parameters are read by the static
        tier, without running anything. A file with no kernel found says nothing either way.
        """
        if not self.args and not self.kernel:
            return
        kernels = [k for path, text in sources for k in discover(text, path)]
        if not kernels:
            return
        if self.kernel:
            chosen = [k for k in kernels if k.name == self.kernel]
            if not chosen:
                names = ", ".join(dict.fromkeys(k.name for k in kernels))
                raise UsageError(f"argument --kernel: no kernel {self.kernel!r} (found: {names})")
            kernels = chosen
        known = {p.name for k in kernels for p in k.params}
        unknown = [name for name in self.args if name not in known]
        if unknown:
            which = f"kernel {self.kernel!r}" if self.kernel else "any kernel"
            listed = ", ".join(sorted(known)) or "none"
            raise UsageError(
                f"argument --arg: {', '.join(unknown)} is not a parameter of {which} (parameters: {listed})"
            )


def choice_line(command: str, choice: KernelChoice) -> str:
    """``tilescope trace: kernel matmul, the first kernel ...; also in the file: test_convert (--kernel NAME)``."""
    others = ", ".join(k for k in choice.kernels if k != choice.kernel)
    picks = "(--kernel NAME picks one)"
    return f"tilescope {command}: kernel {choice.kernel}, {choice.why}; also in the file: {others} {picks}"
