"""Conversions shared by the LangChain adapters: scopes, search arguments, documents, context text.

Scope rule used by every adapter: an id set on the adapter itself (``user_id=...`` at construction) is a *binding*.
Ids may also arrive per call (keyword arguments, ``config["configurable"]``, the LangGraph runtime context), but
only to fill ids the adapter leaves open; a per-call id that contradicts a bound one raises :class:`ScopeError`
instead of silently reading another tenant's memories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from neusym import InvalidInputError, NeuSymMemory, Scope, ScopeError, SearchResult
from neusym.reflection.context import ContextBuilder
from neusym.reflection.tokens import get_token_counter

__all__ = [
    "SCOPE_KEYS",
    "SEARCH_KEYS",
    "ReadScope",
    "ScopedModel",
    "abuild_context",
    "bound_ids",
    "build_context",
    "check_memory",
    "check_search_kwargs",
    "config_ids",
    "last_human_text",
    "message_text",
    "read_scope",
    "resolve_scope",
    "result_to_document",
    "runtime_ids",
]

ReadScope = Literal["user", "agent", "session"]
"""How far an adapter that writes turns reads back: the whole tenant (default), its agent, or only this session."""

SCOPE_KEYS: tuple[str, ...] = ("user_id", "agent_id", "session_id")
SEARCH_KEYS = frozenset({"types", "tags", "entities", "plan_states", "statuses", "valid_at", "time_from",
                         "time_to", "min_score", "recipe", "reranker", "touch", "rewrite_query"})


def check_memory(memory: Any) -> NeuSymMemory:
    if not isinstance(memory, NeuSymMemory):
        raise InvalidInputError(f"memory must be a neusym.NeuSymMemory, got {type(memory).__name__}")
    return memory


class ScopedModel(BaseModel):
    """Fields every pydantic adapter shares: the engine and the ids it is bound to (mixed in after the framework
    base class, e.g. ``class NeuSymRetriever(BaseRetriever, ScopedModel)``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: NeuSymMemory = Field(exclude=True)
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    scope: Scope | None = None

    @field_validator("memory", mode="before")
    @classmethod
    def _check_memory(cls, value: Any) -> NeuSymMemory:
        return check_memory(value)

    def bound_ids(self) -> dict[str, str]:
        return bound_ids(self.scope, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id)


def check_search_kwargs(kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate extra ``NeuSymMemory.search`` arguments (filters). Unknown keys are refused, not ignored: a filter
    that silently does nothing returns memories the caller meant to exclude."""
    out = dict(kwargs or {})
    scoped = sorted(set(out) & {*SCOPE_KEYS, "scope", "all_tenants"})
    if scoped:
        raise ScopeError(f"search filters cannot set {scoped}; pass scope ids as user_id/agent_id/session_id")
    unknown = sorted(set(out) - SEARCH_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown search arguments {unknown}; allowed: {sorted(SEARCH_KEYS)}")
    return out


def bound_ids(scope: Scope | Mapping[str, Any] | None, **ids: str | None) -> dict[str, str]:
    """The ids an adapter was constructed with (``scope`` plus explicit ids, explicit ids winning)."""
    base = Scope.coerce(scope).as_params() if scope is not None else {}
    out = {k: v for k, v in base.items() if v is not None}
    out.update({k: v for k, v in ids.items() if v is not None})
    return out


def _pick(source: Any, key: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def config_ids(config: Mapping[str, Any] | None, *, thread_as_session: bool = False) -> dict[str, str]:
    """Scope ids from ``config["configurable"]`` (``user_id``/``agent_id``/``session_id``; optionally the
    LangGraph ``thread_id`` as the session)."""
    conf = (config or {}).get("configurable") or {}
    out = {k: v for k in SCOPE_KEYS if isinstance(v := conf.get(k), str) and v}
    if thread_as_session and "session_id" not in out and isinstance(t := conf.get("thread_id"), str) and t:
        out["session_id"] = t
    return out


def runtime_ids(context: Any = None) -> dict[str, str]:
    """Scope ids from a LangGraph runtime context (a dataclass, pydantic model or dict with ``user_id`` etc.).

    Without an explicit ``context`` the current graph run's runtime is looked up; outside a graph there is none.
    """
    if context is None:
        try:
            from langgraph.runtime import get_runtime

            context = getattr(get_runtime(), "context", None)
        except Exception:  # noqa: BLE001 - not inside a graph run: no runtime, no ids
            return {}
    return {k: v for k in SCOPE_KEYS if isinstance(v := _pick(context, k), str) and v}


def resolve_scope(memory: NeuSymMemory, bound: Mapping[str, str], *sources: Mapping[str, str] | None) -> Scope:
    """Bound ids, completed from ``sources`` (earlier sources win); the memory's default scope if nothing is set.

    Raises:
        ScopeError: a source names a different id than the adapter is bound to.
    """
    ids = dict(bound)
    for src in sources:
        for key, value in (src or {}).items():
            if value is None:
                continue
            if key in bound and bound[key] != value:
                raise ScopeError(f"this adapter is bound to {key}={bound[key]!r}; a call asked for {value!r}")
            ids.setdefault(key, value)
    return memory.scope_for(Scope.coerce(ids)) if ids else memory.default_scope


def read_scope(scope: Scope, mode: ReadScope) -> Scope:
    """The scope an adapter reads back from: the tenant by default, so facts from earlier sessions are found."""
    if mode == "session":
        return scope
    if mode == "agent":
        narrowed = Scope.coerce(None, user_id=scope.user_id, agent_id=scope.agent_id)
    elif mode == "user":
        narrowed = Scope.coerce(None, user_id=scope.user_id) if scope.user_id else scope
    else:
        raise InvalidInputError(f"read_scope must be 'user', 'agent' or 'session', got {mode!r}")
    return narrowed if not narrowed.is_empty else scope


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def result_to_document(result: SearchResult) -> Document:
    """One search hit as a ``Document``: id = memory id; metadata = type, timestamps, scope, score, explanation."""
    rec, exp = result.memory, result.explanation
    metadata: dict[str, Any] = {
        "memory_id": rec.id,
        "type": rec.type.value,
        "score": float(result.score),
        "score_explanation": exp.summary(),
        "explanation": exp.model_dump(mode="json"),
        "created_at": _iso(rec.created_at),
        "updated_at": _iso(rec.updated_at),
        "valid_from": _iso(rec.valid_from),
        "valid_to": _iso(rec.valid_to),
        "expires_at": _iso(rec.expires_at),
        "status": rec.status.value,
        "user_id": rec.scope.user_id,
        "agent_id": rec.scope.agent_id,
        "session_id": rec.scope.session_id,
        "tags": list(rec.tags),
        "entities": list(rec.entities),
        "importance": rec.importance,
        "confidence": rec.confidence,
        "metadata": dict(rec.metadata),
    }
    return Document(id=rec.id, page_content=rec.content, metadata=metadata)


def _builder(k: int, encoding: str) -> ContextBuilder:
    return ContextBuilder(counter=get_token_counter(encoding), k_memories=k)


def _with_header(text: str, header: str) -> str:
    return f"{header}\n{text}" if text and header else text


def _budget(header: str, max_tokens: int, encoding: str) -> int:
    return max(max_tokens - (get_token_counter(encoding).count(header + "\n") if header else 0), 0)


def build_context(memory: NeuSymMemory, query: str, scope: Scope, *, max_tokens: int, k: int,
                  encoding: str = "cl100k_base", header: str = "") -> str:
    """NeuSym's prompt context for ``query`` (reflections first, then the most relevant memories, with careful-use
    marks) within ``max_tokens`` counted with tiktoken ``encoding``, the header included. "" for an empty query
    or when nothing is found."""
    if not query.strip() or max_tokens <= 0:
        return ""
    built = memory.build_context(query, scope=scope, budget_tokens=_budget(header, max_tokens, encoding),
                                 builder=_builder(k, encoding))
    return _with_header(built.text, header)


async def abuild_context(memory: NeuSymMemory, query: str, scope: Scope, *, max_tokens: int, k: int,
                         encoding: str = "cl100k_base", header: str = "") -> str:
    if not query.strip() or max_tokens <= 0:
        return ""
    built = await memory.abuild_context(query, scope=scope, budget_tokens=_budget(header, max_tokens, encoding),
                                        builder=_builder(k, encoding))
    return _with_header(built.text, header)


def message_text(message: BaseMessage | Mapping[str, Any] | str) -> str:
    """The text of a LangChain message (content blocks joined), a ``{"content": ...}`` dict or a string."""
    if isinstance(message, str):
        return message.strip()
    if isinstance(message, BaseMessage):
        return message.text.strip()
    if isinstance(message, Mapping):
        content = message.get("content", "")
        if isinstance(content, list):
            return "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content).strip()
        return str(content).strip()
    raise InvalidInputError(f"cannot read text from {type(message).__name__}")


def _role(message: Any) -> str:
    if isinstance(message, BaseMessage):
        return message.type
    if isinstance(message, Mapping):
        return str(message.get("role") or message.get("type") or "")
    return ""


def last_human_text(messages: Sequence[Any]) -> str:
    """Text of the last user message ("" if there is none): what a memory lookup should be about."""
    for m in reversed(messages):
        if _role(m) in ("human", "user") and (text := message_text(m)):
            return text
    return ""
