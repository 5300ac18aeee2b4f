"""What the LangChain adapters share: the pydantic scope fields, LangChain's sources of per-call scope ids
(``config["configurable"]``, the LangGraph runtime context), documents and messages.

The framework-free rules (scope binding, search arguments, hit metadata, context text) live in
:mod:`neusym.adapter_support`, shared with the LlamaIndex adapters, and are re-exported here. Scope rule: ids set on
the adapter are bound; per-call ids only fill ids left open, and a contradicting one raises :class:`ScopeError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, Field, field_validator

from neusym import InvalidInputError, NeuSymMemory, Scope, SearchResult
from neusym.adapter_support import (
    SCOPE_KEYS,
    SEARCH_KEYS,
    ReadScope,
    abuild_context,
    asearch_shown,
    bound_ids,
    build_context,
    check_memory,
    check_search_kwargs,
    read_scope,
    render_hits,
    resolve_scope,
    result_metadata,
    search_shown,
)

__all__ = [
    "SCOPE_KEYS",
    "SEARCH_KEYS",
    "ReadScope",
    "ScopedModel",
    "abuild_context",
    "asearch_shown",
    "bound_ids",
    "build_context",
    "check_memory",
    "check_search_kwargs",
    "config_ids",
    "last_human_text",
    "message_text",
    "read_scope",
    "render_documents",
    "resolve_scope",
    "result_to_document",
    "runtime_ids",
    "search_shown",
]


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


def result_to_document(result: SearchResult) -> Document:
    """One search hit as a ``Document``: id = memory id; metadata = type, timestamps, scope, score, explanation
    (``explanation`` with every component), ``expires_at`` and the memory's own ``metadata``."""
    rec = result.memory
    metadata = {
        **result_metadata(result),
        "score": float(result.score),
        "explanation": result.explanation.model_dump(mode="json"),
    }
    return Document(id=rec.id, page_content=rec.content, metadata=metadata)


def render_documents(docs: Sequence[Document], *, header: str = "", heading: str = "Relevant memories",
                     show_ids: bool = True) -> str:
    """Documents of :class:`~langchain_neusym.NeuSymRetriever` as prompt text: framed, quoted and marked as stored
    data exactly as the recall tool shows memories (:mod:`neusym.prompting`), each line led by its id for a chain
    that cites sources. Put this, never ``page_content`` itself, into a prompt. ``""`` for no documents."""
    return render_hits([(d.page_content, {**d.metadata, "memory_id": d.metadata.get("memory_id") or d.id})
                        for d in docs], header=header, heading=heading, show_ids=show_ids)


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
