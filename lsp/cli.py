"""``tilescope lsp``: start the language server on stdio (the default) or on a TCP port; ``tilescope trust``:
the folders where it may run your code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tilescope.core.compiler.service import EarlyWorker


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse names no public type for it
    parser = subparsers.add_parser("lsp", help="run the TileLang language server")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port, for debugging")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tilescope.core.sandbox.supervise import become_undumpable, guard_signals

    guard_signals(_ignored)  # before any thread starts: a kernel's SIGTERM to the server is ignored
    become_undumpable()  # nor can its code read the server's memory or environment
    early = _early_worker()
    from tilescope.lsp.features import create_server  # most of the server's start, beside the worker's

    sys.setswitchinterval(0.001)  # the event loop gets the interpreter back quickly from the analysis thread
    server = create_server(early)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def _early_worker() -> EarlyWorker | None:
    """The compiler worker with this interpreter, started before the server imports the rest of itself: its
    import of TileLang takes longer than the whole of the server's start, and the editor's first file waits for
    it. Adopted at ``initialize`` when the workspace is trusted and the settings name no other interpreter."""
    from tilescope.core.compiler.service import EarlyWorker

    try:
        return EarlyWorker()
    except OSError:  # the worker's own start reports the reason again, where an analysis can show it
        return None


def _ignored(name: str, pid: int) -> None:
    sender = f"process {pid}, which runs user code" if pid else "a sender unknown while user code runs"
    print(f"tilescope lsp: ignored {name} from {sender}", file=sys.stderr, flush=True)


def register_trust(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse names no public type for it
    parser = subparsers.add_parser(
        "trust",
        help="let the language server run your code (the compiler tier) in a folder and the folders beneath it",
        description="The language server's trust list, for editors without workspace trust (Neovim, Emacs, "
        "Helix; VS Code uses its own). A workspace whose folder is listed, or lies beneath a listed folder, "
        "runs the compiler tier, which imports and runs the files you open. Restart the server after a change.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("folder", nargs="?", type=Path, metavar="DIR", help="the folder to trust")
    action.add_argument("--list", action="store_true", help="print the trusted folders")
    action.add_argument("--remove", type=Path, metavar="DIR", help="stop trusting this folder")
    parser.set_defaults(func=run_trust)


def run_trust(args: argparse.Namespace) -> int:
    from tilescope.lsp import trust_list

    where = trust_list.list_path()
    try:
        if args.list:
            for folder in trust_list.listed(where):
                print(folder)
        elif args.remove is not None:
            removed = trust_list.remove(args.remove, where)
            if removed is None:
                print(f"tilescope trust: {args.remove} is not in the trust list ({where})", file=sys.stderr)
                return 1
            print(f"no longer trusted: {removed}")
            if trust_list.covers(removed, trust_list.listed(where)):
                print("(still trusted through a folder above it: see tilescope trust --list)")
        else:
            print(f"trusted: {trust_list.add(args.folder, where)} (listed in {where})")
    except trust_list.TrustListError as err:
        print(f"tilescope trust: {err}", file=sys.stderr)
        return 2
    return 0
