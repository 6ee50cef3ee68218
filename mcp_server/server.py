"""``tilescope mcp``: the Model Context Protocol server (official SDK, stdio or streamable HTTP).

The protocol side only: it lists the tool table of :mod:`tilescope.mcp.tools` with the schemas
generated from their types, runs each call in a thread (the compiler worker answers one request at
a time; the event loop stays free for pings and other sessions), and turns every failure into an
error result. Nothing an agent sends is executed in this process.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from pydantic import ValidationError
from tilescope.mcp import resources
from tilescope.mcp.handlers import Failed
from tilescope.mcp.session import Session
from tilescope.mcp.tools import TOOLS, find
from tilescope.mcp.workspace import Refused

log = logging.getLogger("tilescope.mcp")

INSTRUCTIONS = (
    "Tilescope answers what the TileLang compiler decides for a kernel, without a GPU: buffers, launch, "
    "layouts, passes and the IR between them, variants across targets and autotune configs, and runs on "
    "the CPU tile interpreter. Pass a workspace `path` or the `source` text; answers are brief unless "
    "`detail` asks for more, and `omitted` says what was cut."
)


def _tool_listing() -> list[types.Tool]:
    return [
        types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.input_schema(),
            output_schema=tool.output_schema(),
            annotations=types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        )
        for tool in TOOLS
    ]


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def call(session: Session, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    """One tool call, answered whatever happens (runs in a worker thread)."""
    tool = find(name)
    if tool is None:
        return _error(f"no tool named {name!r}; the tools are {', '.join(t.name for t in TOOLS)}")
    try:
        given = tool.parse(arguments)
        answer, failed = tool.handler(session, given)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in err.errors())
        return _error(f"{name}: invalid arguments: {problems}")
    except (Refused, Failed) as err:
        return _error(f"{name}: {err}")
    except Exception as err:  # a defect of ours: the agent gets its text, the server goes on
        log.exception("tool %s failed", name)
        return _error(f"{name}: internal error: {type(err).__name__}: {err}")
    text = json.dumps(answer, separators=(",", ":"))
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=answer, is_error=failed
    )


def build(session: Session) -> Server[Any]:
    listing = _tool_listing()

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=listing)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        arguments = dict(params.arguments or {})
        return await anyio.to_thread.run_sync(call, session, params.name, arguments, abandon_on_cancel=True)

    async def list_resources(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return types.ListResourcesResult(resources=resources.listing())

    async def read_resource(ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams) -> Any:
        uri = str(params.uri)
        text = await anyio.to_thread.run_sync(resources.read, uri, session.python)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="application/json", text=text)]
        )

    return Server(
        "tilescope",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tilescope")
    except PackageNotFoundError:
        return "0"


async def serve_stdio(session: Session) -> None:
    from mcp.server.stdio import stdio_server

    server = build(session)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(session: Session, host: str, port: int, token: str, allow_hosts: tuple[str, ...] = ()) -> None:
    """Streamable HTTP at ``/mcp``, answering only requests that carry ``token`` and name this server."""
    import uvicorn
    from tilescope.mcp.http_guard import RequireBearer, transport_security

    app = build(session).streamable_http_app(host=host, transport_security=transport_security(host, port, allow_hosts))
    uvicorn.run(RequireBearer(app, token), host=host, port=port, log_level="warning")
