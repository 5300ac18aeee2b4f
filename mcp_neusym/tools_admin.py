"""Curation tools: the review queue, reflection, the janitor and imports (the long ones report progress).

All of them act on the connection's tenant only. Approving a review item can release quarantined text into recall,
so these tools are annotated destructive and clients should ask the user before calling them; ``--tools`` leaves
them out of a server entirely.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from mcp_neusym.importer import import_text
from mcp_neusym.models import (
    CurateOut,
    ImportOut,
    ReflectOut,
    ReviewDecisionOut,
    ReviewItemOut,
    ReviewListOut,
    memory_out,
)
from mcp_neusym.render import flat, framed, marks
from mcp_neusym.runtime import Progress, guarded, in_thread
from mcp_neusym.state import ServerState
from mcp_neusym.tools_memory import AgentArg, Ctx, SessionArg, tool_result
from neusym.prompting import render_texts, shown_id
from neusym.record import MemoryRecord, MemoryType

__all__ = ["MAX_IMPORT_CHARS", "register_admin_tools"]

MAX_IMPORT_CHARS = 8_000_000
_ACTOR = "mcp"

ReviewKind = Literal["quarantine", "conflict", "dedup", "contradiction", "suspicious"]


def register_admin_tools(server: FastMCP[Any], state: ServerState) -> None:
    mem = state.memory
    tenant = state.tenant
    enabled = state.settings.tools

    # ------------------------------------------------------------------ review
    @guarded
    async def review_list(
        ctx: Ctx,
        kind: Annotated[ReviewKind | None, Field(description="Only this kind of item.")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many items.")] = 50,
    ) -> Annotated[CallToolResult, ReviewListOut]:
        scope = tenant.tenant_scope(ctx)
        items = await in_thread(lambda: mem.review_queue(kind, scope=scope, limit=limit))
        out = ReviewListOut(items=[ReviewItemOut(memory_id=i.memory_id, kind=i.kind, reason=i.reason,
                                                 related=list(i.related), memory=memory_out(i.record))
                                   for i in items], count=len(items))
        if not out.items:
            return tool_result(out, "The review queue is empty.")
        block = render_texts([(i.memory_id, i.memory.content, f"{i.kind}; why: {flat(i.reason, 200)}")
                              for i in out.items], heading="Waiting for review")
        return tool_result(out, f"{out.count} items waiting for review:\n{block}")

    async def _decide(ctx: Ctx, memory_id: str, reason: str, approve: bool) -> CallToolResult:
        scope = tenant.tenant_scope(ctx)
        rec: MemoryRecord | None
        if approve:
            rec = await in_thread(lambda: mem.review_approve(memory_id, scope=scope, actor=_ACTOR, reason=reason))
        else:
            rec = await in_thread(lambda: mem.review_reject(memory_id, scope=scope, actor=_ACTOR, reason=reason))
        verb = "approved" if approve else "rejected"
        out = ReviewDecisionOut(memory_id=memory_id, decision=verb, purged=rec is None,
                                memory=memory_out(rec) if rec is not None else None)
        now = "purged" if rec is None else f"now {rec.status.value}"
        return tool_result(out, f"{verb.capitalize()} {shown_id(memory_id)}: {now}.")

    @guarded
    async def review_approve(
        ctx: Ctx,
        memory_id: Annotated[str, Field(min_length=1, description="The review item to accept.")],
        reason: Annotated[str, Field(max_length=500, description="Kept in the audit log.")] = "approved",
    ) -> Annotated[CallToolResult, ReviewDecisionOut]:
        return await _decide(ctx, memory_id, reason, True)

    @guarded
    async def review_reject(
        ctx: Ctx,
        memory_id: Annotated[str, Field(min_length=1, description="The review item to refuse.")],
        reason: Annotated[str, Field(max_length=500, description="Kept in the audit log.")] = "rejected",
    ) -> Annotated[CallToolResult, ReviewDecisionOut]:
        return await _decide(ctx, memory_id, reason, False)

    # ------------------------------------------------------------------ reflect
    @guarded
    async def reflect(
        ctx: Ctx,
        session_id: Annotated[str | None, Field(description="Reflect on this session only; omit for every "
                                                            "memory no reflection covers yet.")] = None,
        entity: Annotated[str | None, Field(description="Reflect on one entity's neighbourhood.")] = None,
        goal: Annotated[str | None, Field(max_length=500, description="What the reflection should focus "
                                                                      "on.")] = None,
        agent_id: AgentArg = None,
    ) -> Annotated[CallToolResult, ReflectOut]:
        scope = tenant.read_scope(ctx, session_id=session_id, agent_id=agent_id)
        progress = Progress(ctx)
        done = await progress.run(lambda: mem.reflect(scope=scope, entity=entity, goal=goal,
                                                      only_unreflected=session_id is None and entity is None,
                                                      fallback=True), label="reflecting")
        shown = done.memory or MemoryRecord(content=done.summary, type=MemoryType.REFLECTION, scope=done.scope)
        found = await in_thread(lambda: marks(mem, [shown], scope))
        out = ReflectOut(stored=done.stored, id=done.id, summary=done.summary, source_ids=done.source_ids,
                         reinforced=list(done.reinforced), cooled=list(done.cooled), marks=found[shown.id])
        state_text = f"stored as {shown_id(done.id or '')}" if done.stored else "not stored"
        # the summary is memory text: framed and quoted like every other memory a tool shows
        text = await in_thread(lambda: framed(mem, [shown], scope, title=f"Reflection over {len(out.source_ids)} "
                                              f"memories ({state_text})", empty="The reflection is withheld."))
        return tool_result(out, text)

    # ------------------------------------------------------------------ curate
    @guarded
    async def curate(
        ctx: Ctx,
        dry_run: Annotated[bool, Field(description="Only report what would change.")] = False,
    ) -> Annotated[CallToolResult, CurateOut]:
        scope = tenant.tenant_scope(ctx)
        progress = Progress(ctx)
        report = await progress.run(lambda: mem.run_janitor(scope=scope, dry_run=dry_run), label="curating")
        out = CurateOut(dry_run=report.dry_run, expired=list(report.expired), decayed=report.decayed,
                        archived=list(report.archived), purged=list(report.purged), compacted=report.compacted)
        verb = "would" if dry_run else "did"
        return tool_result(out, f"Janitor ({verb}): expired {len(out.expired)}, decayed {out.decayed}, archived "
                                f"{len(out.archived)}, purged {len(out.purged)}.")

    # ------------------------------------------------------------------ import
    @guarded
    async def import_memories(
        ctx: Ctx,
        text: Annotated[str, Field(min_length=1, max_length=MAX_IMPORT_CHARS, description=(
            "The data itself (not a path): JSON Lines ({'content': ...} statements or {'role', 'content'} "
            "messages), a chat log ('Name: message' lines, '--- session s2 ---' separators) or LoCoMo JSON."))],
        format: Annotated[Literal["auto", "jsonl", "chat", "locomo"], Field(  # noqa: A002
            description="The text's format; auto detects it.")] = "auto",
        verbatim: Annotated[bool, Field(description="One memory per item, no splitting or kind "
                                                    "inference.")] = False,
        session_id: SessionArg = None,
    ) -> Annotated[CallToolResult, ImportOut]:
        scope = tenant.write_scope(ctx, session_id=session_id)
        progress = Progress(ctx)
        await progress.report(0, None, "importing")

        def step(done: int, total: int) -> None:
            progress.step(done, total, f"imported {done}/{total}")

        out = await progress.run_steps(lambda: import_text(mem, text, fmt=format, scope=scope, infer=not verbatim,
                                                           progress=step))
        parts = ", ".join(f"{k} {v}" for k, v in out.decisions.items())
        replaced = out.replaced_scope_fields
        note = f"; {replaced} lines named another user/agent/session and were written here" if replaced else ""
        return tool_result(out, f"Imported {out.items} items ({out.format}): stored {out.stored} memories "
                                f"({parts}){note}.")

    destructive = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False,
                                  openWorldHint=False)
    specs: list[tuple[str, Any, str, str, ToolAnnotations]] = [
        ("review_list", review_list, "Review queue",
         "Memories waiting for a human decision: quarantined (possible prompt injection), conflicting values, "
         "suspected duplicates, contradictions, suspicious items.",
         ToolAnnotations(readOnlyHint=True, openWorldHint=False)),
        ("review_approve", review_approve, "Approve a review item",
         "Accept a review item (releases a quarantined memory into recall, makes a conflicting value current, "
         "confirms a merge). Ask the user first.", destructive),
        ("review_reject", review_reject, "Reject a review item",
         "Refuse a review item (purges a quarantined memory, keeps the other side of a conflict). Ask the user "
         "first.", destructive),
        ("reflect", reflect, "Reflect",
         "Consolidate memories (a session, an entity, or everything not yet reflected) into one reflection "
         "linked to its sources. Reports progress.",
         ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)),
        ("curate", curate, "Curate",
         "Run the memory janitor for this user: expire TTLs, decay, archive faded memories, purge old archives. "
         "Reports progress.", destructive),
        ("import_memories", import_memories, "Import memories",
         "Import many memories from text (JSON Lines, a chat log or LoCoMo JSON) through the normal write path. "
         "Reports progress per batch.",
         ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)),
    ]
    for name, fn, title, description, hints in specs:
        if name in enabled:
            server.add_tool(fn, name=name, title=title, description=description, annotations=hints,
                            structured_output=True)
