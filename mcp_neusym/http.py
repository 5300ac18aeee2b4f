"""Streamable HTTP: the SDK's Starlette app behind an optional bearer token, served by uvicorn.

The token check is a plain ASGI wrapper rather than the SDK's OAuth resource-server machinery: a shared secret
between one server and its clients (or the gateway in front of a multi-tenant server) needs no authorization
server, and an MCP client sends it as a configured ``Authorization`` header. It is compared in constant time.
"""

from __future__ import annotations

import hmac
import json
import logging
import socket
import sys
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_neusym.settings import HttpAddress

__all__ = ["BearerTokenGate", "bind", "serve_app"]

log = logging.getLogger("mcp_neusym")


class BearerTokenGate:
    """Refuse every HTTP request without ``Authorization: Bearer <token>`` (401); lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._allowed(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized", "error_description": "missing or wrong bearer token"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    def _allowed(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                kind, _, given = value.partition(b" ")
                return kind.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False


def bind(address: HttpAddress) -> socket.socket:
    """A listening socket (port 0 picks a free one; the caller reads it back)."""
    family = socket.AF_INET6 if ":" in address.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((address.host, address.port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def serve_app(app: Any, sock: socket.socket, *, path: str, log_level: str = "warning") -> None:
    """Serve ``app`` on ``sock`` and announce the URL on stderr (stdout stays clean for scripts)."""
    import uvicorn

    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"NeuSym MCP server listening on http://{shown}:{port}{path}\n")
    sys.stderr.flush()
    config = uvicorn.Config(app, log_level=log_level, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])
