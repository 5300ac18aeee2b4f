"""Memory tools for any tool-calling agent: ``remember``, ``recall``, ``forget``, ``update_memory``.

The model chooses only *what* to remember, find, forget or correct, never *whose* memory it is: the scope comes
from the tool's construction (bound ids), then from ``config["configurable"]`` (``user_id``, ``agent_id``,
``session_id``; LangGraph's ``thread_id`` as the session) and the LangGraph runtime context. Engine errors the
model can fix (unknown id, empty text) come back as the tool's answer; scope errors are raised to the program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.documents import Document
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, BaseToolkit, ToolException
from pydantic import BaseModel, Field

from langchain_neusym._common import (
    ReadScope,
    ScopedModel,
    asearch_shown,
    config_ids,
    read_scope,
    resolve_scope,
    result_to_document,
    runtime_ids,
    search_shown,
)
from neusym import MemoryRecord, MemoryStatus, NeuSymError, Scope, ScopeError, SearchResult, render_memories
from neusym.governance.decisions import Decision, Flag
from neusym.prompting import render_texts, shown_id

__all__ = [
    "NeuSymForgetTool",
    "NeuSymRecallTool",
    "NeuSymRememberTool",
    "NeuSymToolkit",
    "NeuSymUpdateTool",
]

MemoryKind = Literal["fact", "preference", "instruction", "plan", "emotion", "observation", "knowledge"]


class _ScopedTool(BaseTool, ScopedModel):
    """Shared fields: the memory, the bound scope and how far reads reach."""

    read_scope: ReadScope = "user"
    handle_tool_error: bool | str | Callable[[ToolException], str] | None = True

    def _write_scope(self, config: RunnableConfig | None) -> Scope:
        return resolve_scope(self.memory, self.bound_ids(), config_ids(config, thread_as_session=True),
                             runtime_ids())

    def _read_scope(self, config: RunnableConfig | None) -> Scope:
        return read_scope(self._write_scope(config), self.read_scope)


def _fail(err: NeuSymError) -> ToolException:
    """An engine error as the tool's answer (the model can fix an unknown id or an empty text); a scope error is
    the program's to fix, so it is re-raised as it is."""
    if isinstance(err, ScopeError):
        raise err
    return ToolException(str(err))


# ---------------------------------------------------------------------- remember
class _RememberInput(BaseModel):
    content: str = Field(description="One self-contained statement to remember, e.g. 'Ana is allergic to nuts'.")
    type: MemoryKind | None = Field(default=None, description="Kind of memory; leave empty to infer it.")


def _remember_answer(decisions: list[Decision]) -> str:
    """One line per decision, then the stored texts (extraction may have rephrased the call's text) framed and
    quoted as data (:func:`neusym.prompting.render_texts`); a quarantined text is not echoed."""
    parts = []
    for d in decisions:
        if d.action.value == "quarantine":  # stored for review only: the model is not shown the text again
            parts.append(f"Quarantined for review, not recalled: {d.reason}")
        elif d.stored:
            parts.append(f"Stored memory {shown_id(d.memory_id or '')}.")
        elif d.action.value == "merge":
            parts.append(f"Already known as memory {shown_id(d.target_id or '')}; reinforced it.")
        else:
            parts.append(f"Not stored ({d.action.value}): {d.reason}")
    block = render_texts([(d.memory_id, d.record.content) for d in decisions
                          if d.stored and d.action.value != "quarantine"], heading="Stored")
    return "\n".join([*parts, *([block] if block else [])]) or "Nothing to remember."


class NeuSymRememberTool(_ScopedTool):
    """Store a statement through NeuSym's write path (extraction and governance)."""

    name: str = "remember"
    description: str = ("Save a durable fact, preference, instruction or plan about the user for later "
                        "conversations. One self-contained statement per call.")
    args_schema: type[BaseModel] = _RememberInput
    origin: str = "agent"

    def _run(self, content: str, type: str | None = None, *,  # noqa: A002
             config: RunnableConfig, run_manager: CallbackManagerForToolRun | None = None) -> str:
        scope = self._write_scope(config)
        try:
            res = self.memory.add(content, scope=scope, type=type, origin=self.origin)
        except NeuSymError as err:
            raise _fail(err) from err
        return _remember_answer(res.decisions)

    async def _arun(self, content: str, type: str | None = None, *,  # noqa: A002
                    config: RunnableConfig, run_manager: AsyncCallbackManagerForToolRun | None = None) -> str:
        scope = self._write_scope(config)
        try:
            res = await self.memory.aadd(content, scope=scope, type=type, origin=self.origin)
        except NeuSymError as err:
            raise _fail(err) from err
        return _remember_answer(res.decisions)


# ---------------------------------------------------------------------- recall
class _RecallInput(BaseModel):
    query: str = Field(description="What to look for, in natural language.")
    k: int = Field(default=5, ge=1, le=50, description="How many memories to return.")


def _recall_answer(results: list[SearchResult]) -> tuple[str, list[Document]]:
    # framed and quoted: stored text is data, never instructions; the search already left out what awaits review
    # (unless the tool was configured with include_unreviewed), so what it returned is shown, marked
    text = render_memories(results, show_ids=True, include_unreviewed=True)
    if not text:
        return "No relevant memories.", []
    return text, [result_to_document(r) for r in results]


class NeuSymRecallTool(_ScopedTool):
    """Search the memory (two-stage retrieval); the answer lists ids the model can pass to forget/update.

    The tool message's ``artifact`` holds the hits as ``Document`` objects with the score explanation.
    """

    name: str = "recall"
    description: str = ("Search long-term memory about the user. Returns matching memories with their ids, "
                        "newest knowledge first by relevance.")
    args_schema: type[BaseModel] = _RecallInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    def _run(self, query: str, k: int = 5, *, config: RunnableConfig,
             run_manager: CallbackManagerForToolRun | None = None) -> tuple[str, list[Document]]:
        scope = self._read_scope(config)
        try:
            results = search_shown(self.memory, query, scope, k=k, **self.search_kwargs)
        except NeuSymError as err:
            raise _fail(err) from err
        return _recall_answer(results)

    async def _arun(self, query: str, k: int = 5, *, config: RunnableConfig,
                    run_manager: AsyncCallbackManagerForToolRun | None = None) -> tuple[str, list[Document]]:
        scope = self._read_scope(config)
        try:
            results = await asearch_shown(self.memory, query, scope, k=k, **self.search_kwargs)
        except NeuSymError as err:
            raise _fail(err) from err
        return _recall_answer(results)


# ---------------------------------------------------------------------- forget
class _ForgetInput(BaseModel):
    memory_id: str = Field(description="Id of the memory to forget (from recall).")
    reason: str = Field(default="the user asked to forget it", description="Why it is forgotten (audited).")


class NeuSymForgetTool(_ScopedTool):
    """Forget one memory by id inside the tool's scope, through governance's ``forget`` (audited).

    Soft by default: the memory is archived, out of every default read at once, and purged by the janitor after
    the retention period; ``hard=True`` purges it now (graph, indexes, caches, audit text).
    """

    name: str = "forget"
    description: str = "Forget a memory by its id (find ids with recall first). Use when the user asks to forget."
    args_schema: type[BaseModel] = _ForgetInput
    hard: bool = False

    def _forget(self, memory_id: str, reason: str, scope: Scope) -> str:
        report = self.memory.forget(memory_id, scope=scope, hard=self.hard, reason=reason, actor="agent")
        return f"Forgot memory {shown_id(memory_id)}." if report.count else f"No memory {shown_id(memory_id)} to forget."

    def _run(self, memory_id: str, reason: str = "the user asked to forget it", *, config: RunnableConfig,
             run_manager: CallbackManagerForToolRun | None = None) -> str:
        scope = self._read_scope(config)
        try:
            return self._forget(memory_id, reason, scope)
        except NeuSymError as err:
            raise _fail(err) from err

    async def _arun(self, memory_id: str, reason: str = "the user asked to forget it", *,
                    config: RunnableConfig, run_manager: AsyncCallbackManagerForToolRun | None = None) -> str:
        scope = self._read_scope(config)
        try:
            report = await self.memory.aforget(memory_id, scope=scope, hard=self.hard, reason=reason, actor="agent")
        except NeuSymError as err:
            raise _fail(err) from err
        return f"Forgot memory {shown_id(memory_id)}." if report.count else f"No memory {shown_id(memory_id)} to forget."


# ---------------------------------------------------------------------- update
class _UpdateInput(BaseModel):
    memory_id: str = Field(description="Id of the memory to correct (from recall).")
    content: str = Field(description="The corrected statement, replacing the old text.")


def _update_answer(rec: MemoryRecord) -> str:
    """What the model hears back: the new text framed and quoted as data, or, when governance quarantined it (the
    same screening as ``remember``), that it will not be recalled (the text is not echoed)."""
    if rec.status is MemoryStatus.QUARANTINED:
        return (f"Quarantined memory {shown_id(rec.id)} for review: its new text will not be recalled until a "
                "reviewer approves it (the previous text is kept in its history).")
    note = " Listed for review: withheld from recall until approved." if Flag.SUSPICIOUS.value in rec.flags else ""
    return (f"Updated memory {shown_id(rec.id)} (version {rec.version}).{note}\n"
            + render_texts([(rec.id, rec.content)], heading="Updated"))


class NeuSymUpdateTool(_ScopedTool):
    """Correct a memory's text in place (versioned and audited; the new text passes the same governance as
    ``remember``: screened as the agent's, quarantined if ``remember`` would quarantine it)."""

    name: str = "update_memory"
    description: str = "Correct an existing memory by id with the new statement (find ids with recall first)."
    args_schema: type[BaseModel] = _UpdateInput
    origin: str = "agent"

    def _run(self, memory_id: str, content: str, *, config: RunnableConfig,
             run_manager: CallbackManagerForToolRun | None = None) -> str:
        scope = self._read_scope(config)
        try:
            rec = self.memory.update(memory_id, content, scope=scope, actor="agent", reason="agent correction",
                                     origin=self.origin)
        except NeuSymError as err:
            raise _fail(err) from err
        return _update_answer(rec)

    async def _arun(self, memory_id: str, content: str, *, config: RunnableConfig,
                    run_manager: AsyncCallbackManagerForToolRun | None = None) -> str:
        scope = self._read_scope(config)
        try:
            rec = await self.memory.aupdate(memory_id, content, scope=scope, actor="agent",
                                            reason="agent correction", origin=self.origin)
        except NeuSymError as err:
            raise _fail(err) from err
        return _update_answer(rec)


# ---------------------------------------------------------------------- toolkit
class NeuSymToolkit(BaseToolkit, ScopedModel):
    """The four memory tools sharing one memory and scope.

    Example::

        tools = NeuSymToolkit(memory=mem).get_tools()          # scope per run from config/context
        agent = create_agent(model, tools)
        agent.invoke({"messages": [...]}, config={"configurable": {"user_id": "ana"}})
    """

    read_scope: ReadScope = "user"
    include: tuple[Literal["remember", "recall", "forget", "update"], ...] = ("remember", "recall", "forget",
                                                                              "update")

    def get_tools(self) -> list[BaseTool]:
        common = {"memory": self.memory, "user_id": self.user_id, "agent_id": self.agent_id,
                  "session_id": self.session_id, "scope": self.scope, "read_scope": self.read_scope}
        classes: dict[str, type[_ScopedTool]] = {"remember": NeuSymRememberTool, "recall": NeuSymRecallTool,
                                                 "forget": NeuSymForgetTool, "update": NeuSymUpdateTool}
        return [classes[name](**common) for name in self.include]
