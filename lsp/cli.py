"""``tilescope lsp``: start the language server on stdio (the default) or on a TCP port."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:  # pyright: ignore[reportPrivateUsage]  # argparse names no public type for it
    parser = subparsers.add_parser("lsp", help="run the TileLang language server")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port, for debugging")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tilescope.core.sandbox.supervise import become_undumpable, guard_signals
    from tilescope.lsp.features import create_server

    guard_signals(_ignored)  # before any thread starts: a kernel's SIGTERM to the server is ignored
    become_undumpable()  # nor can its code read the server's memory or environment
    sys.setswitchinterval(0.001)  # the event loop gets the interpreter back quickly from the analysis thread
    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0


def _ignored(name: str, pid: int) -> None:
    sender = f"process {pid}, which runs user code" if pid else "a sender unknown while user code runs"
    print(f"tilescope lsp: ignored {name} from {sender}", file=sys.stderr, flush=True)
