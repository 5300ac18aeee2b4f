"""How a NeuSym MCP server is configured: who the tenant is, what it exposes, how HTTP is protected.

Nothing here imports the MCP SDK, so the CLI can validate its options (and say what is wrong) before the SDK is
even looked for.

The tenant rule: the ``user_id`` of every call comes from this configuration (``user_id``, i.e. ``--user``) or from
the connection (``user_header``, i.e. ``--user-header X-NeuSym-User`` on HTTP), never from a tool argument, which
the model controls. Agent and session ids may be configured here and may also arrive per call, but only to narrow
reads and writes inside the tenant; a per-call id that contradicts a configured one is refused.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Literal

from neusym.adapter_support import ReadScope, check_read_mode
from neusym.errors import InvalidInputError
from neusym.record import Scope

__all__ = ["DEFAULT_USER_HEADER", "TOOL_NAMES", "HttpAddress", "ServerSettings", "parse_http_address"]

DEFAULT_USER_HEADER = "X-NeuSym-User"
"""The header a multi-tenant HTTP deployment maps to the tenant (``--user-header`` without a value)."""

TOOL_NAMES: tuple[str, ...] = ("remember", "recall", "query", "forget", "update", "history", "review_list",
                               "review_approve", "review_reject", "reflect", "curate", "import_memories")
"""Every tool the server can expose, in listing order (``--tools`` picks a subset)."""

_HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")  # an RFC 9110 token
_RESERVED_HEADERS = {"authorization", "host", "content-type", "content-length", "cookie", "mcp-session-id",
                     "mcp-protocol-version", "origin", "accept"}


@dataclass(frozen=True)
class HttpAddress:
    host: str
    port: int

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host.strip("[]")).is_loopback
        except ValueError:
            return False


def parse_http_address(text: str) -> HttpAddress:
    """``HOST:PORT``, ``:PORT`` (loopback) or ``[::1]:PORT``; port 0 picks a free port."""
    raw = (text or "").strip()
    host, sep, port = raw.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InvalidInputError(f"--http takes HOST:PORT (e.g. 127.0.0.1:8765), got {text!r}")
    host = host.strip() or "127.0.0.1"
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return HttpAddress(host, int(port))


@dataclass(frozen=True)
class ServerSettings:
    """One server's configuration (the CLI builds it from ``neusym mcp`` options).

    Args:
        user_id: the tenant of every call (``--user``). Single-user servers (a desktop assistant over stdio).
        user_header: HTTP only: read the tenant from this request header on every call (``--user-header``);
            for a server behind a gateway that authenticates users and sets the header. A session keeps the
            tenant of its first call: a later request naming another user is refused.
        allowed_users: with ``user_header``: only these tenants are served (``--allow-user``).
        token: HTTP only: every request must carry ``Authorization: Bearer <token>`` (``--token`` /
            ``NEUSYM_MCP_TOKEN``). Binding loopback is not authentication: any local process can connect.
        agent_id / session_id: configured ids; per-call ids may fill them when unset, never contradict them.
        read_scope: how far reads reach: the whole tenant (default), the configured agent, or the session.
        tools: the tool names to expose (default: all of :data:`TOOL_NAMES`).
        confirm_ttl_s: how long a ``forget`` confirmation token stays valid.
        context_tokens: default token budget of the ``memory_context`` prompt.
    """

    user_id: str | None = None
    user_header: str | None = None
    allowed_users: frozenset[str] | None = None
    token: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    read_scope: ReadScope = "user"
    tools: frozenset[str] = field(default_factory=lambda: frozenset(TOOL_NAMES))
    confirm_ttl_s: float = 600.0
    context_tokens: int = 1500
    name: str = "neusym"

    def __post_init__(self) -> None:
        if self.user_id is not None and self.user_header is not None:
            raise InvalidInputError("pass either --user (one tenant for every call) or --user-header (the tenant "
                                    "from each HTTP request), not both")
        for key in ("user_id", "agent_id", "session_id"):
            value = getattr(self, key)
            if value is not None:
                try:
                    Scope(**{key: value})
                except ValueError as err:
                    raise InvalidInputError(f"{key}: {err}") from None
        if self.user_header is not None:
            if not _HEADER.match(self.user_header):
                raise InvalidInputError(f"--user-header {self.user_header!r} is not a valid HTTP header name")
            if self.user_header.lower() in _RESERVED_HEADERS:
                raise InvalidInputError(f"--user-header cannot be {self.user_header!r}: the transport uses it")
        if self.allowed_users is not None:
            if self.user_header is None:
                raise InvalidInputError("--allow-user only applies with --user-header")
            if not self.allowed_users or not all(isinstance(u, str) and u.strip() for u in self.allowed_users):
                raise InvalidInputError("--allow-user needs non-empty user ids")
        if self.token is not None and len(self.token) < 16:
            raise InvalidInputError("the HTTP token must be at least 16 characters (e.g. `openssl rand -hex 32`)")
        check_read_mode(self.read_scope)
        unknown = sorted(set(self.tools) - set(TOOL_NAMES))
        if unknown:
            raise InvalidInputError(f"unknown tools {unknown}; choose from {', '.join(TOOL_NAMES)}")
        if self.confirm_ttl_s <= 0 or self.context_tokens <= 0:
            raise InvalidInputError("confirm_ttl_s and context_tokens must be positive")

    @property
    def tenant_source(self) -> Literal["config", "header", "none"]:
        if self.user_id is not None:
            return "config"
        return "header" if self.user_header is not None else "none"

    def check_transport(self, http: HttpAddress | None) -> None:
        """Refuse combinations that would be unsafe or meaningless for the chosen transport."""
        if http is None:
            if self.user_header is not None:
                raise InvalidInputError("--user-header needs --http: stdio connections carry no headers")
            if self.token is not None:
                raise InvalidInputError("--token protects --http; a stdio server is reached only by its parent")
            return
        if not http.loopback and self.token is None:
            raise InvalidInputError(f"--http {http.host}: binding a non-loopback address needs --token (and a "
                                    "TLS-terminating proxy in front); the memory would otherwise be open to the "
                                    "network")
