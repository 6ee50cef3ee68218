"""``tilescope mcp --root DIR``: serve Tilescope's tools to coding agents over MCP.

stdio by default (what MCP clients start); ``--http PORT`` serves streamable HTTP on loopback,
to clients that send the bearer token printed at start (or kept in ``--token-file``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tilescope.core.compiler.service import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S
from tilescope.core.environment import require_extra


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mcp", help="serve Tilescope's tools to coding agents (Model Context Protocol)")
    parser.add_argument("--root", required=True, metavar="DIR", help="the workspace: only files inside it are read")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on this port instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on (default loopback)")
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="PATH",
        help="with --http: the bearer token clients must send, read from this file (mode 600); "
        "without it a random token is printed at start",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="with --http: a further name clients reach this server by (its Host header), e.g. the "
        "machine's name with --host 0.0.0.0; repeatable",
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_S, help=f"seconds per kernel (default {DEFAULT_TIMEOUT_S:g})"
    )
    parser.add_argument(
        "--memory",
        type=int,
        default=DEFAULT_MEMORY_MB,
        help=f"worker memory limit in MiB (default {DEFAULT_MEMORY_MB})",
    )
    parser.add_argument("--python", metavar="PATH", help="run the compiler in this interpreter (with TileLang)")
    parser.add_argument(
        "--no-dry-run",
        dest="dry_run",
        action="store_false",
        help="never run a workspace program's __main__ (with stand-in kernels) to learn sizes the source lacks",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require_extra("mcp", "mcp")
    import anyio
    from tilescope.core.sandbox.supervise import become_undumpable
    from tilescope.mcp.http_guard import TokenFileError
    from tilescope.mcp.server import serve_http, serve_stdio
    from tilescope.mcp.session import Session
    from tilescope.mcp.workspace import Refused, Workspace

    become_undumpable()  # an agent's code run by a worker of this server cannot read its memory or environment
    if args.http is None and (args.token_file is not None or args.allow_host):
        print("tilescope mcp: --token-file and --allow-host go with --http", file=sys.stderr)
        return 2
    try:
        workspace = Workspace(args.root)
        token = _token(args) if args.http is not None else ""
    except (Refused, TokenFileError) as err:
        print(f"tilescope mcp: {err}", file=sys.stderr)
        return 2
    session = Session(
        workspace, timeout_s=args.timeout, memory_mb=args.memory, python=args.python, dry_run=args.dry_run
    )
    try:
        if args.http is not None:
            serve_http(session, args.host, args.http, token, tuple(args.allow_host))
        else:
            anyio.run(serve_stdio, session)
    finally:
        session.close()
    return 0


def _token(args: argparse.Namespace) -> str:
    """The token from ``--token-file``, or a fresh one printed (to stderr: stdout may be a log)
    with the URL, so the user can paste both into the client."""
    from tilescope.mcp.http_guard import authority, new_token, read_token_file

    if args.token_file is not None:
        return read_token_file(args.token_file)
    token = new_token()
    print(
        f"tilescope mcp: http://{authority(args.host, args.http)}/mcp answers requests with the header "
        f"'Authorization: Bearer {token}'",
        file=sys.stderr,
        flush=True,
    )
    return token
