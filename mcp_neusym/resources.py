"""Resources (the user's profile, recent memories) and the ``memory_context`` prompt.

Both resources are fixed URIs that resolve the tenant from the connection, like the tools: a URI never names a
user, so no client can read another tenant's profile by editing it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.prompts.base import Message, UserMessage
from pydantic import Field

from mcp_neusym.models import memory_out
from mcp_neusym.render import DATA_NOTE, context_block, framed, marks
from mcp_neusym.runtime import in_thread, tool_error
from mcp_neusym.state import ServerState
from mcp_neusym.tools_memory import Ctx
from neusym.errors import InvalidInputError
from neusym.prompting import neutralize, withheld_reason

__all__ = ["PROFILE_URI", "RECENT_URI", "register_resources"]

PROFILE_URI = "neusym://profile"
RECENT_URI = "neusym://memories/recent"
_PROFILE_TYPES = ["fact", "preference", "instruction"]
_RECENT = 50


def register_resources(server: FastMCP[Any], state: ServerState) -> None:
    mem = state.memory
    tenant = state.tenant

    def _listing(types: list[str] | None, order: str, limit: int, what: str, *, reviewed_only: bool) -> str:
        """``reviewed_only``: leave out what a prompt withholds (a profile is read as prompt context); otherwise
        list it with its marks, as the tools do. Memory text goes through :mod:`neusym.prompting` either way:
        each content neutralised, and ``text`` is the framed block to put in front of a model."""
        scope = tenant.read_scope(server.get_context())
        listed = mem.query(scope=scope, types=types, order=order, limit=limit)
        recs = [r for r in listed if withheld_reason(r) is None] if reviewed_only else listed
        found = marks(mem, recs, scope)
        shown = [memory_out(r, found[r.id]).model_copy(update={"content": neutralize(r.content)}) for r in recs]
        return json.dumps({"about": f"{what} ({DATA_NOTE})", "count": len(recs),
                           "withheld_until_reviewed": len(listed) - len(recs),
                           "memories": [m.model_dump(mode="json") for m in shown],
                           "text": framed(mem, recs, scope, title=what, empty="")},
                          ensure_ascii=False, indent=1)

    async def _safe(fn: Any) -> str:
        try:
            return str(await in_thread(fn))
        except Exception as err:  # noqa: BLE001 - the client sees the typed message, never a trace
            raise tool_error(err) from None

    @server.resource(PROFILE_URI, name="profile", title="User profile", mime_type="application/json",
                     description="The connected user's current facts, preferences and instructions, most "
                                 "important first.")
    async def profile() -> str:
        return await _safe(lambda: _listing(_PROFILE_TYPES, "importance", 200, "current facts about the user",
                                                reviewed_only=True))

    @server.resource(RECENT_URI, name="recent_memories", title="Recent memories", mime_type="application/json",
                     description=f"The connected user's {_RECENT} most recent memories.")
    async def recent() -> str:
        return await _safe(lambda: _listing(None, "recent", _RECENT, "the user's most recent memories",
                                                reviewed_only=False))

    @server.prompt(name="memory_context", title="Memory context",
                   description="The memory context block NeuSym's middleware puts into a system prompt: "
                               "reflections and the memories most relevant to `query`, marked for careful use "
                               "and framed as data, within a token budget.")
    async def memory_context(
        ctx: Ctx,
        query: Annotated[str, Field(description="What the conversation is about (usually the user's last "
                                                "message).")],
        max_tokens: Annotated[str | None, Field(description="Token budget (default 1500).")] = None,
    ) -> list[Message]:
        try:
            budget = int(max_tokens) if max_tokens else state.settings.context_tokens
        except ValueError:
            raise InvalidInputError(f"max_tokens must be an integer, got {max_tokens!r}") from None
        if budget <= 0 or budget > 100_000:
            raise InvalidInputError("max_tokens must be between 1 and 100000")
        scope = tenant.read_scope(ctx)
        block = await _safe(lambda: context_block(mem, query, scope, max_tokens=budget))
        return [UserMessage(block or f"No stored memories are relevant to: {' '.join(query.split())[:200]}")]
