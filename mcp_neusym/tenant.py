"""Which tenant a call works on: from the server's configuration or the connection, never from the model.

Rule (also in the README's MCP section):

1. ``--user ID``: every call of every connection is tenant ``ID``.
2. ``--user-header NAME`` (HTTP): the tenant is the value of request header ``NAME``; with ``--allow-user`` only
   the listed tenants are served. A session is pinned to the tenant of its first call; a request in the same MCP
   session naming another tenant is refused (a proxy bug must not mix two users in one conversation).
3. Neither: every tenant-scoped call is refused with a :class:`~neusym.errors.ScopeError` that says how to start
   the server. There is no default tenant.

Agent and session ids come from the configuration and, where a tool offers them, from the call; per-call ids only
fill ids the configuration leaves open (a contradicting one is a ``ScopeError``), so they narrow inside the tenant
and can never widen or leave it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_neusym.settings import ServerSettings
from neusym.adapter_support import read_scope as widen_for_reads
from neusym.adapter_support import resolve_scope
from neusym.errors import ScopeError
from neusym.record import Scope

if TYPE_CHECKING:
    from neusym.facade import NeuSymMemory

__all__ = ["NO_TENANT", "TenantResolver"]

NO_TENANT = ("this NeuSym MCP server has no tenant: start it with --user USER_ID (every call is that user) or, "
             "over --http, with --user-header HEADER (the user comes from each request). The user is never taken "
             "from a tool argument.")


class TenantResolver:
    """Turns a request context (an MCP ``Context`` or ``None``) and optional per-call ids into a scope."""

    def __init__(self, memory: NeuSymMemory, settings: ServerSettings) -> None:
        self.memory = memory
        self.settings = settings
        self._pinned: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ the tenant
    def user_id(self, ctx: Any) -> str:
        """The tenant of the call in ``ctx`` (raises :class:`ScopeError` when there is none)."""
        s = self.settings
        if s.user_id is not None:
            return s.user_id
        if s.user_header is None:
            raise ScopeError(NO_TENANT)
        request = _request_of(ctx)
        if request is None:
            raise ScopeError(f"this server takes the user from the {s.user_header} HTTP header, and this call came "
                             "without an HTTP request")
        value = _header(request, s.user_header)
        if value is None or not value.strip():
            raise ScopeError(f"the {s.user_header} header is missing: this server takes the user from it")
        user = value.strip()
        try:
            Scope(user_id=user)
        except ValueError as err:
            raise ScopeError(f"the {s.user_header} header is not a usable user id: {err}") from None
        if s.allowed_users is not None and user not in s.allowed_users:
            raise ScopeError(f"user {user!r} is not served by this server (see --allow-user)")
        self._pin(ctx, user)
        return user

    def _pin(self, ctx: Any, user: str) -> None:
        session = _session_of(ctx)
        if session is None:
            return
        with self._lock:
            first = self._pinned.setdefault(session, user)
        if first != user:
            raise ScopeError(f"this MCP session belongs to user {first!r}; a request named {user!r} (the "
                             f"{self.settings.user_header} header must not change within a session)")

    # ------------------------------------------------------------------ scopes
    def _bound(self, ctx: Any) -> dict[str, str]:
        s = self.settings
        ids = {"user_id": self.user_id(ctx), "agent_id": s.agent_id, "session_id": s.session_id}
        return {k: v for k, v in ids.items() if v is not None}

    def write_scope(self, ctx: Any, **call_ids: str | None) -> Scope:
        """Where a write goes: the tenant, the configured ids, then per-call ids for the ids left open."""
        return resolve_scope(self.memory, self._bound(ctx), _ids(call_ids))

    def read_scope(self, ctx: Any, **call_ids: str | None) -> Scope:
        """What a read sees: the tenant widened to ``read_scope`` (every session by default), then narrowed by
        per-call ids. The user id is always set."""
        bound = self._bound(ctx)
        wide = widen_for_reads(Scope(**bound), self.settings.read_scope).as_params()
        return resolve_scope(self.memory, {k: v for k, v in wide.items() if v is not None}, _ids(call_ids))

    def tenant_scope(self, ctx: Any) -> Scope:
        """The whole tenant (maintenance: curate, review, history of an attribute)."""
        return Scope(user_id=self.user_id(ctx))


def _ids(call_ids: Mapping[str, str | None]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in call_ids.items():
        if key == "user_id":  # tools never offer it; refuse rather than ignore if one ever does
            raise ScopeError("the user id comes from the server, not from a tool argument")
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            raise ScopeError(f"{key} must be a non-empty string")
        out[key] = value.strip()
    return out


def _request_of(ctx: Any) -> Any:
    try:
        return ctx.request_context.request if ctx is not None else None
    except (AttributeError, ValueError, LookupError):  # no request context (outside a request)
        return None


def _session_of(ctx: Any) -> Any:
    try:
        return ctx.request_context.session if ctx is not None else None
    except (AttributeError, ValueError, LookupError):
        return None


def _header(request: Any, name: str) -> str | None:
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    values = headers.getlist(name) if hasattr(headers, "getlist") else [headers.get(name)]
    values = [v for v in values if v is not None]
    if len(values) > 1:
        raise ScopeError(f"the {name} header appears {len(values)} times; send it once")
    return values[0] if values else None
