"""``tilescope mcp --root DIR``: serve Tilescope's tools to coding agents over MCP.

stdio by default (what MCP clients start); ``--http PORT`` serves streamable HTTP on loopback.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mcp", help="serve Tilescope's tools to coding agents (Model Context Protocol)")
    parser.add_argument("--root", required=True, metavar="DIR", help="the workspace: only files inside it are read")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on this port instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="with --http: the address to listen on (default loopback)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per kernel (default 60)")
    parser.add_argument("--memory", type=int, default=6144, help="compiler worker memory limit in MiB (default 6144)")
    parser.add_argument("--python", metavar="PATH", help="run the compiler in this interpreter (with TileLang)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import anyio
    from tilescope.mcp.server import serve_http, serve_stdio
    from tilescope.mcp.tools import Session
    from tilescope.mcp.workspace import Refused, Workspace

    try:
        workspace = Workspace(args.root)
    except Refused as err:
        print(f"tilescope mcp: {err}", file=sys.stderr)
        return 2
    session = Session(workspace, timeout_s=args.timeout, memory_mb=args.memory, python=args.python)
    try:
        if args.http is not None:
            serve_http(session, args.host, args.http)
        else:
            anyio.run(serve_stdio, session)
    finally:
        session.close()
    return 0
