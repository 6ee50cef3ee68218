"""Who may reach ``tilescope mcp --http``: a bearer token, and the Host and Origin a request names.

A tool call runs the workspace's kernel factories, so the HTTP transport is a way to run code as
the user who started the server. Every request must carry ``Authorization: Bearer TOKEN`` (a random
token printed at start, or one the user keeps in a private file), and its Host and Origin must name
this server (a web page on another origin, or one that rebinds a DNS name to this address, is
refused even on loopback). The token check is an ASGI wrapper around the SDK's app; Host and Origin
go to the SDK's own transport check, given exact lists on every interface (the SDK switches that
check on by itself only for loopback hosts).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 16
"""A shorter token in a file is refused: it could be guessed over the network."""

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("0.0.0.0", "::", "")


class TokenFileError(Exception):
    """The token file cannot serve: missing, readable by others, or too short (the message says which)."""


def new_token() -> str:
    """A token for one server run (256 bits, URL-safe, so it pastes into any client's header field)."""
    return secrets.token_urlsafe(32)


def read_token_file(path: Path) -> str:
    """The token kept in ``path``, refused when others could read or change the file."""
    try:
        mode = path.stat().st_mode
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise TokenFileError(f"cannot read the token file {path}: {err.strerror or err}") from err
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(f"the token file {path} is open to other users (mode {mode & 0o777:o}); chmod 600 it")
    token = text.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise TokenFileError(f"the token file {path} must hold one token of at least {MIN_TOKEN_CHARS} characters")
    return token


def authority(host: str, port: int) -> str:
    """``host:port`` as a Host header spells it (IPv6 addresses in brackets)."""
    try:
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]:{port}"
    except ValueError:
        pass
    return f"{host}:{port}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, port: int, extra: tuple[str, ...] = ()) -> list[str]:
    """The Host values this server answers: the bound address, loopback names when loopback is
    reachable through it (a loopback or wildcard bind), and the names the user allowed with
    ``--allow-host`` (how remote clients reach a wildcard bind), each with this port only."""
    names = [] if host in _WILDCARDS else [authority(host, port)]
    if host in _WILDCARDS or _is_loopback(host):
        names += [f"{name}:{port}" for name in _LOOPBACK_NAMES]
    names += [authority(name, port) for name in extra]
    return list(dict.fromkeys(names))


def transport_security(host: str, port: int, extra: tuple[str, ...] = ()) -> TransportSecuritySettings:
    """The SDK's Host/Origin check, on whatever the interface: only pages served from this very
    authority are allowed origins (a browser sends no Origin for a native client's request)."""
    hosts = allowed_hosts(host, port, extra)
    origins = [f"{scheme}://{name}" for name in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


@dataclass(frozen=True)
class RequireBearer:
    """ASGI wrapper: an HTTP request without ``Authorization: Bearer <token>`` gets 401 before
    the MCP app sees it. Lifespan events pass, so the SDK's session manager starts and stops; the
    app has no WebSocket route, so a WebSocket handshake is closed by Starlette whatever it carries."""

    app: ASGIApp
    token: str

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", ()):
            if name.lower() == b"authorization":
                scheme, _, given = value.partition(b" ")
                if scheme.lower() == b"bearer":
                    return hmac.compare_digest(given.strip(), self.token.encode())
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            refusal = PlainTextResponse(
                "missing or wrong bearer token (Authorization: Bearer TOKEN, printed by tilescope mcp at start)",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="tilescope"'},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)
