"""The everyday memory tools: remember, recall, query, forget, update, history.

Every tool takes what to remember, find, forget or correct; none takes a user id (see :mod:`mcp_neusym.tenant`).
Each returns a typed ``structuredContent`` (its ``outputSchema``) and a short text for the model, memories framed
as data (see :mod:`mcp_neusym.render`).
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any, Literal

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.session import ServerSession
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from mcp_neusym.models import (
    AuditEntryOut,
    DecisionOut,
    ForgetItemOut,
    ForgetOut,
    HistoryOut,
    MemoryListOut,
    RecallOut,
    RememberOut,
    UpdateOut,
    memory_out,
    recall_hit,
)
from mcp_neusym.render import flat, framed, hits_with_marks, marks
from mcp_neusym.runtime import guarded, in_thread
from mcp_neusym.state import ServerState
from neusym.adapter_support import search_shown
from neusym.cli._base import parse_duration, parse_time
from neusym.errors import InvalidInputError, RecordNotFoundError
from neusym.prompting import render_texts, shown_id
from neusym.record import MemoryRecord

__all__ = ["ChatMessage", "Ctx", "MemoryKind", "register_memory_tools", "tool_result"]

Ctx = Context[ServerSession, Any, Any]
MemoryKind = Literal["fact", "preference", "instruction", "plan", "emotion", "observation", "knowledge"]
_KINDS_READ = Literal["fact", "preference", "instruction", "plan", "emotion", "observation", "knowledge",
                      "reflection"]
_ACTOR = "mcp"

SessionArg = Annotated[str | None, Field(description="Narrow to one session of this user (optional).")]
AgentArg = Annotated[str | None, Field(description="Narrow to one agent of this user (optional).")]
TimeArg = Annotated[str | None, Field(description="ISO-8601 date/time, epoch seconds, 'now', or relative like "
                                                  "'-7d' / '+2h'.")]


class ChatMessage(BaseModel):
    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, description="The message text.")
    name: str | None = Field(default=None, description="Who spoke, when not simply the user or the assistant.")


def tool_result(model: BaseModel, text: str) -> CallToolResult:
    """A result with the model's text and the typed structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structuredContent=model.model_dump(mode="json"))


def _when(value: str | None, what: str) -> Any:
    return parse_time(value, what) if value is not None else None


def _ttl(value: str | float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    return parse_duration(value, "ttl")


def _predicate(attribute: str) -> str:
    """'lives in' / 'Lives-In' -> 'lives_in' (the engine's snake_case predicates)."""
    return re.sub(r"[\s\-]+", "_", attribute.strip().lower())


def _in_force(rec: MemoryRecord, now: float) -> bool:
    return rec.status.value in ("active", "pending") and (rec.valid_to is None or rec.valid_to.timestamp() > now)


def register_memory_tools(server: FastMCP[Any], state: ServerState) -> None:
    mem = state.memory
    tenant = state.tenant
    enabled = state.settings.tools

    # ------------------------------------------------------------------ remember
    @guarded
    async def remember(
        ctx: Ctx,
        content: Annotated[str | None, Field(description="One self-contained statement, e.g. 'Ana is allergic "
                                                         "to peanuts'. Pass this or `messages`.")] = None,
        messages: Annotated[list[ChatMessage] | None, Field(
            description="A conversation excerpt to remember instead: extraction keeps what is durable.")] = None,
        type: Annotated[MemoryKind | None, Field(description="Kind of memory; omit to infer it.")] = None,  # noqa: A002
        ttl: Annotated[str | float | None, Field(
            description="Forget after this long: seconds, or '90m', '2h', '7d', '1w'. Omit to keep.")] = None,
        tags: Annotated[list[str] | None, Field(description="Labels to filter on later.")] = None,
        session_id: SessionArg = None,
    ) -> Annotated[CallToolResult, RememberOut]:
        if (content is None) == (messages is None):
            raise InvalidInputError("pass exactly one of content or messages")
        scope = tenant.write_scope(ctx, session_id=session_id)
        ttl_s = _ttl(ttl)
        payload: Any = content if content is not None else [m.model_dump(exclude_none=True) for m in messages or []]
        origin = "agent" if content is not None else "user"
        res = await in_thread(lambda: mem.add(payload, scope=scope, type=type, ttl=ttl_s, tags=tags, origin=origin))
        decisions = [DecisionOut.of(d) for d in res.decisions]
        out = RememberOut(stored=[memory_out(r) for r in res if r.status.value != "quarantined"], decisions=decisions)
        lines = []
        for d in decisions:
            if d.action == "quarantine":  # kept for review; its text is not shown to the model again
                lines.append(f"Quarantined for review, not recalled: {flat(d.reason, 300)}")
            elif d.stored:
                lines.append(f"Stored memory {shown_id(d.memory_id or '')} ({d.action}).")
            elif d.action == "merge":
                lines.append(f"Already known as memory {shown_id(d.target_id or '')}; reinforced it.")
            else:
                lines.append(f"Not stored ({d.action}): {d.reason}")
        # what was stored (extraction may have rephrased it), framed and quoted as data
        block = render_texts([(d.memory_id, d.content) for d in decisions if d.stored and d.action != "quarantine"],
                             heading="Stored")
        return tool_result(out, "\n".join([*lines, *([block] if block else [])]) or "Nothing to remember in that "
                                                                                      "text.")

    # ------------------------------------------------------------------ recall
    @guarded
    async def recall(
        ctx: Ctx,
        query: Annotated[str, Field(min_length=1, description="What to look for, in natural language.")],
        k: Annotated[int, Field(ge=1, le=50, description="How many memories to return.")] = 5,
        types: Annotated[list[_KINDS_READ] | None, Field(description="Only these kinds of memory.")] = None,
        entities: Annotated[list[str] | None, Field(description="Only memories mentioning one of these "
                                                                "entities (people, places, things).")] = None,
        time_from: Annotated[str | None, Field(description="Only memories from this time on (ISO-8601, epoch, "
                                                           "'-30d').")] = None,
        time_to: Annotated[str | None, Field(description="Only memories up to this time.")] = None,
        as_of: Annotated[str | None, Field(description="Point in time: what was true then (includes "
                                                       "superseded history).")] = None,
        session_id: SessionArg = None,
        agent_id: AgentArg = None,
    ) -> Annotated[CallToolResult, RecallOut]:
        scope = tenant.read_scope(ctx, session_id=session_id, agent_id=agent_id)
        t_from, t_to, at = _when(time_from, "time_from"), _when(time_to, "time_to"), _when(as_of, "as_of")

        def run() -> tuple[RecallOut, str]:  # what build_context would show: nothing that awaits review
            results = search_shown(mem, query, scope, k=k, types=types, entities=entities, time_from=t_from,
                                   time_to=t_to, valid_at=at)
            found = hits_with_marks(mem, results, scope)
            text = framed(mem, results, scope, title=f"{len(results)} memories for {flat(query, 200)!r}",
                          empty="No relevant memories.")
            return RecallOut(query=query, results=[recall_hit(r, found[r.memory.id]) for r in results]), text

        out, text = await in_thread(run)
        return tool_result(out, text)

    # ------------------------------------------------------------------ query
    @guarded
    async def query(
        ctx: Ctx,
        entity: Annotated[str | None, Field(description="Memories about this entity, e.g. 'Li Si'.")] = None,
        predicate: Annotated[str | None, Field(description="Memories stating this attribute, e.g. 'lives_in', "
                                                           "'works_at', 'allergic_to'.")] = None,
        object: Annotated[str | None, Field(description="With `predicate`: its value, e.g. 'Lisbon'.")] = None,  # noqa: A002
        types: Annotated[list[_KINDS_READ] | None, Field(description="Only these kinds of memory.")] = None,
        tags: Annotated[list[str] | None, Field(description="Only memories with one of these tags.")] = None,
        plan_states: Annotated[list[Literal["open", "done", "cancelled"]] | None,
                               Field(description="Plans in these states.")] = None,
        time_from: TimeArg = None,
        time_to: TimeArg = None,
        as_of: Annotated[str | None, Field(description="What was true at this time.")] = None,
        due_within: Annotated[str | None, Field(description="Plans due within this long: '14d', '2h'.")] = None,
        include_history: Annotated[bool, Field(description="Also superseded (no longer current) "
                                                           "memories.")] = False,
        order: Annotated[Literal["recent", "oldest", "due", "importance"], Field(
            description="Sort order.")] = "recent",
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many memories.")] = 50,
        offset: Annotated[int, Field(ge=0, le=1000, description="Skip this many (paging).")] = 0,
        session_id: SessionArg = None,
        agent_id: AgentArg = None,
    ) -> Annotated[CallToolResult, MemoryListOut]:
        scope = tenant.read_scope(ctx, session_id=session_id, agent_id=agent_id)
        statuses = ["active", "pending", "superseded"] if include_history else None
        due = parse_duration(due_within, "due_within") if due_within is not None else None

        def run() -> tuple[MemoryListOut, str]:
            recs = mem.query(scope=scope, entity=entity, predicate=_predicate(predicate) if predicate else None,
                             object=object, types=types, tags=tags, plan_states=plan_states, statuses=statuses,
                             time_from=_when(time_from, "time_from"), time_to=_when(time_to, "time_to"),
                             valid_at=_when(as_of, "as_of"), due_within=due, order=order, limit=limit,
                             offset=offset)
            found = marks(mem, recs, scope)
            text = framed(mem, recs, scope, title=f"{len(recs)} memories", empty="No matching memories.")
            return MemoryListOut(memories=[memory_out(r, found[r.id]) for r in recs], count=len(recs)), text

        out, text = await in_thread(run)
        return tool_result(out, text)

    # ------------------------------------------------------------------ forget
    @guarded
    async def forget(
        ctx: Ctx,
        memory_ids: Annotated[list[str] | None, Field(description="Ids of the memories to forget (from recall "
                                                                  "or query).")] = None,
        topic: Annotated[str | None, Field(description="Forget by meaning, e.g. 'my peanut allergy': matches "
                                                       "the stated attribute, the entity and similar "
                                                       "memories.")] = None,
        confirm_token: Annotated[str | None, Field(description="The token a preview returned: applies exactly "
                                                               "that preview.")] = None,
        hard: Annotated[bool, Field(description="Purge at once everywhere instead of archiving (archived "
                                                "memories are out of every read and purged after the retention "
                                                "period).")] = False,
        reason: Annotated[str, Field(max_length=500, description="Why (kept in the audit log).")]
        = "the user asked to forget it",
    ) -> Annotated[CallToolResult, ForgetOut]:
        if sum(x is not None for x in (memory_ids, topic, confirm_token)) != 1:
            raise InvalidInputError("pass exactly one of memory_ids, topic (both give a preview) or confirm_token "
                                    "(applies a preview)")
        if confirm_token is not None:
            user = tenant.user_id(ctx)
            pending = state.confirmations.redeem(confirm_token, user)

            def apply() -> ForgetOut:
                if pending.preview is not None:
                    report = mem.forget(preview=pending.preview, scope=pending.scope, hard=pending.hard,
                                        reason=pending.reason, actor=_ACTOR)
                else:
                    report = mem.forget(list(pending.ids), scope=pending.scope, hard=pending.hard,
                                        reason=pending.reason, actor=_ACTOR)
                return ForgetOut(applied=True, hard=pending.hard, forgotten_ids=list(report.ids))

            done = await in_thread(apply)
            verb = "Purged" if done.hard else "Forgot (archived)"
            return tool_result(done, f"{verb} {len(done.forgotten_ids)} memories: {', '.join(done.forgotten_ids)}"
                               if done.forgotten_ids else "Nothing left to forget (already gone).")

        scope = tenant.read_scope(ctx)

        def preview() -> ForgetOut:
            if topic is not None:
                shown = mem.forget_preview(topic, scope=scope)
                items = [ForgetItemOut(id=i.id, content=i.content, type=i.type, status=i.status, why=list(i.why))
                         for i in shown.items]
                ids, missing, kept = shown.ids, [], shown
            else:
                wanted = list(dict.fromkeys(memory_ids or []))
                recs = mem.get_many(wanted, scope=scope) if wanted else []
                got = {r.id for r in recs}
                items = [ForgetItemOut(id=r.id, content=r.content, type=r.type.value, status=r.status.value)
                         for r in recs]
                ids, missing, kept = [r.id for r in recs], [i for i in wanted if i not in got], None
                if not ids:
                    raise RecordNotFoundError(f"no memory {wanted if len(wanted) != 1 else wanted[0]!r} for this "
                                              "user")
            token = state.confirmations.issue(scope, ids, hard=hard, reason=reason, preview=kept) if ids else None
            return ForgetOut(applied=False, hard=hard, items=items, missing_ids=missing, confirm_token=token,
                             expires_in_s=int(state.settings.confirm_ttl_s) if token else None)

        out = await in_thread(preview)
        if not out.items:
            return tool_result(out, "Nothing matches that topic; nothing to forget.")
        lines = [f"Would {'purge' if hard else 'forget'} {len(out.items)} memories:",
                 render_texts([(i.id, i.content, i.type) for i in out.items], heading="To forget")]
        if out.missing_ids:
            lines.append(f"Not found for this user: {', '.join(shown_id(i) for i in out.missing_ids)}")
        lines.append(f"To apply, call forget with confirm_token={out.confirm_token!r} (valid "
                     f"{out.expires_in_s}s). Show the list to the user first if they did not name these memories.")
        return tool_result(out, "\n".join(lines))

    # ------------------------------------------------------------------ update
    @guarded
    async def update(
        ctx: Ctx,
        memory_id: Annotated[str, Field(min_length=1, description="Id of the memory to correct.")],
        content: Annotated[str | None, Field(description="The corrected statement, replacing the old "
                                                         "text.")] = None,
        type: Annotated[MemoryKind | None, Field(description="A new kind.")] = None,  # noqa: A002
        importance: Annotated[float | None, Field(ge=0.0, le=1.0, description="0 (trivia) to 1 "
                                                                             "(critical).")] = None,
        tags: Annotated[list[str] | None, Field(description="Replaces the tags.")] = None,
        plan_state: Annotated[Literal["open", "done", "cancelled"] | None, Field(
            description="For plans: mark done or cancelled.")] = None,
        reason: Annotated[str, Field(max_length=500, description="Why (kept in the audit log).")]
        = "correction through MCP",
    ) -> Annotated[CallToolResult, UpdateOut]:
        fields: dict[str, Any] = {k: v for k, v in {"type": type, "importance": importance, "tags": tags,
                                    "plan_state": plan_state}.items() if v is not None}
        if content is None and not fields:
            raise InvalidInputError("nothing to update: pass content and/or a field")
        scope = tenant.read_scope(ctx)
        # new text is screened as the agent's, like ``remember``'s (the engine runs add's governance on it)
        rec = await in_thread(lambda: mem.update(memory_id, content, scope=scope, actor=_ACTOR, reason=reason,
                                                 origin="agent", **fields))
        if rec.status.value == "quarantined":
            out = UpdateOut(memory=None, memory_id=rec.id, status=rec.status.value)
            return tool_result(out, f"Quarantined memory {shown_id(rec.id)} for review: its new text will not be recalled "
                                    "until a reviewer approves it (the previous text is kept in its history).")
        out = UpdateOut(memory=memory_out(rec), memory_id=rec.id, status=rec.status.value)
        note = " Listed for review: withheld from recall until approved." if "suspicious" in rec.flags else ""
        return tool_result(out, f"Updated memory {shown_id(rec.id)} (version {rec.version}).{note}\n"
                                + render_texts([(rec.id, rec.content)], heading="Updated"))

    # ------------------------------------------------------------------ history
    @guarded
    async def history(
        ctx: Ctx,
        attribute: Annotated[str | None, Field(min_length=1, description="The attribute whose values to list, e.g. "
                                                           "'lives_in', 'works at', 'favourite_food'.")] = None,
        subject: Annotated[str | None, Field(description="Whose attribute (an entity name); omit for the "
                                                         "user.")] = None,
        as_of: Annotated[str | None, Field(description="Only the values in force at this time.")] = None,
        memory_id: Annotated[str | None, Field(description="Instead: the audit trail of one memory (edits, "
                                                           "supersessions, forgets).")] = None,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many values or entries.")] = 50,
    ) -> Annotated[CallToolResult, HistoryOut]:
        if (attribute is None) == (memory_id is None):
            raise InvalidInputError("pass exactly one of attribute or memory_id")
        scope = tenant.tenant_scope(ctx)
        if memory_id is not None:
            def trail() -> HistoryOut:
                rows = mem.history(memory_id, scope=scope)[-limit:]
                if not rows:
                    raise RecordNotFoundError(f"no history for memory {memory_id!r} for this user")
                audit = [AuditEntryOut(at=_iso_ts(r.get("at")), action=str(r.get("action")), actor=r.get("actor"),
                                       reason=r.get("reason"), details=_details(r.get("details")))
                         for r in rows]
                return HistoryOut(memory_id=memory_id, audit=audit)

            out = await in_thread(trail)
            lines = [f"Audit trail of {shown_id(memory_id)} (oldest first):"]
            lines += [f"- {a.at} {flat(a.action, 60)} by {flat(a.actor or '', 200)}: {flat(a.reason or '', 200)}"
                      for a in out.audit]
            return tool_result(out, "\n".join(lines))

        pred = _predicate(attribute or "")
        at = _when(as_of, "as_of")

        def values() -> tuple[HistoryOut, list[MemoryRecord]]:
            if at is not None:
                recs = mem.facts_at(at, predicate=pred, subject=subject, scope=scope, limit=limit)
                current = [r.id for r in recs]
            else:
                recs = mem.fact_history(pred, subject=subject, scope=scope, limit=limit)
                now = time.time()
                current = [r.id for r in recs if _in_force(r, now)]
            found = marks(mem, recs, scope)
            return HistoryOut(attribute=pred, subject=subject, at=at.isoformat() if at is not None else None,
                              values=[memory_out(r, found[r.id]) for r in recs], current=current), recs

        out, recs = await in_thread(values)
        title = f"Values of {pred}" + (f" for {subject}" if subject else "") + (f" as of {out.at}" if out.at else
                                                                                 ", oldest first")
        text = await in_thread(lambda: framed(mem, recs, scope, title=title, empty=f"No recorded values of {pred}."))
        if out.values and out.current:
            text += f"\nIn force: {', '.join(shown_id(i) for i in out.current)}"
        return tool_result(out, text)

    ro = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    specs: list[tuple[str, Any, str, str, ToolAnnotations]] = [
        ("remember", remember, "Remember",
         "Save a durable fact, preference, instruction or plan about the user for later conversations (one "
         "self-contained statement, or a conversation excerpt). Governance may merge, supersede or quarantine it.",
         ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)),
        ("recall", recall, "Recall",
         "Search the user's long-term memory (meaning, keywords and the fact graph). Returns memories with ids, "
         "scores, a score explanation and careful-use marks. Call it before answering questions about the user.",
         ro),
        ("query", query, "Query memories",
         "List memories by exact filters, no semantic search: an entity, an attribute (predicate) and value, "
         "kinds, tags, plan states, a time window or a due date.", ro),
        ("forget", forget, "Forget",
         "Forget memories by id or by topic in two steps: the first call returns a preview and a confirm_token; "
         "a second call with only the confirm_token applies exactly that preview.",
         ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)),
        ("update", update, "Update a memory",
         "Correct a memory by id (new text and/or kind, importance, tags, plan state); versioned and audited.",
         ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False)),
        ("history", history, "Value history",
         "Every value an attribute of the user (or of an entity) had over time, oldest first, with the one in "
         "force now; or the audit trail of one memory.", ro),
    ]
    for name, fn, title, description, hints in specs:
        if name in enabled:
            server.add_tool(fn, name=name, title=title, description=description, annotations=hints,
                            structured_output=True)


def _iso_ts(value: Any) -> str | None:
    if isinstance(value, int | float):
        from datetime import UTC, datetime

        return datetime.fromtimestamp(value, tz=UTC).isoformat()
    return None if value is None else str(value)


def _details(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        import json

        try:
            parsed = json.loads(value)
        except ValueError:
            return {"text": value}
        return parsed if isinstance(parsed, dict) else {"value": parsed}
    return {}
