"""What the framework adapters (``langchain_neusym``, ``llama_index_neusym``) share, written once.

The adapters only convert between a framework's objects (``Document``, ``NodeWithScore``, chat messages) and the
engine; the rules that must not drift between them live here: how an adapter's scope is bound and completed, which
search arguments it accepts, what a hit's metadata says and how prompt context text is built and cut. Nothing here
imports a framework (the engine never does), so this is also what a third adapter builds on.

Scope rule used by every adapter: an id set on the adapter itself (``user_id=...`` at construction) is a *binding*.
Ids may also arrive per call (keyword arguments, a run's config, a runtime context), but only to fill ids the
adapter leaves open; a per-call id that contradicts a bound one raises :class:`ScopeError` instead of silently
reading another tenant's memories.

Internal: not part of the pinned public API, so adapters may change it together with this module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from neusym.errors import InvalidInputError, ScopeError
from neusym.prompting import CLOSE, OPEN, PREAMBLE, careful_use_marks, render_memories, withheld_reason
from neusym.record import MemoryRecord, MemoryStatus, MemoryType, Scope, SearchResult

if TYPE_CHECKING:  # the engine loads when an adapter gets a memory, not when the adapter module is imported
    from neusym.facade import NeuSymMemory
    from neusym.reflection.context import ContextBuilder

__all__ = [
    "SCOPE_KEYS",
    "SEARCH_KEYS",
    "ReadScope",
    "abuild_context",
    "bound_ids",
    "build_context",
    "check_memory",
    "check_read_mode",
    "check_search_kwargs",
    "make_scope",
    "read_scope",
    "record_of",
    "render_hits",
    "resolve_scope",
    "result_metadata",
    "asearch_shown",
    "retriever_search",
    "search_shown",
    "shown_hits",
    "truncate_context",
]

ReadScope = Literal["user", "agent", "session"]
"""How far an adapter that writes turns reads back: the whole tenant (default), its agent, or only this session."""

SCOPE_KEYS: tuple[str, ...] = ("user_id", "agent_id", "session_id")
SEARCH_KEYS = frozenset({"types", "tags", "entities", "plan_states", "statuses", "valid_at", "time_from",
                         "time_to", "min_score", "recipe", "reranker", "touch", "rewrite_query",
                         "include_unreviewed"})
"""``NeuSymMemory.search`` keywords an adapter may pass through: filters and ranking options, never the scope."""


# ---------------------------------------------------------------------- the engine and its scope
def check_memory(memory: Any) -> NeuSymMemory:
    """``memory`` itself; adapters take the engine object, and a wrong one fails here, not at the first call."""
    from neusym.facade import NeuSymMemory

    if not isinstance(memory, NeuSymMemory):
        raise InvalidInputError(f"memory must be a neusym.NeuSymMemory, got {type(memory).__name__}")
    return memory


def make_scope(user_id: str | None, agent_id: str | None = None, session_id: str | None = None) -> Scope:
    """A read/write scope; at least one id is required so no call can silently span tenants."""
    scope = Scope.coerce(None, user_id=user_id, agent_id=agent_id, session_id=session_id)
    if scope.is_empty:
        raise ScopeError("a scope needs at least one of user_id, agent_id, session_id")
    return scope


def bound_ids(scope: Scope | Mapping[str, Any] | None, **ids: str | None) -> dict[str, str]:
    """The ids an adapter was constructed with (``scope`` plus explicit ids, explicit ids winning)."""
    if scope is None:
        base: dict[str, str | None] = {}
    else:  # any Mapping, as the signature says (Scope.coerce itself takes only a dict)
        base = Scope.coerce(scope if isinstance(scope, Scope) else dict(scope)).as_params()
    out = {k: v for k, v in base.items() if v is not None}
    out.update({k: v for k, v in ids.items() if v is not None})
    return out


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


def check_read_mode(mode: Any) -> ReadScope:
    """``mode`` if it is a :data:`ReadScope`; checked before any id so a typo is reported as what it is."""
    if mode not in ("user", "agent", "session"):
        raise InvalidInputError(f"read_scope must be 'user', 'agent' or 'session', got {mode!r}")
    return cast(ReadScope, mode)


def read_scope(scope: Scope, mode: ReadScope) -> Scope:
    """The scope an adapter reads back from: the tenant by default, so facts from earlier sessions are found."""
    check_read_mode(mode)
    if mode == "session":
        return scope
    if mode == "agent":
        narrowed = Scope.coerce(None, user_id=scope.user_id, agent_id=scope.agent_id)
    else:
        narrowed = Scope.coerce(None, user_id=scope.user_id) if scope.user_id else scope
    return narrowed if not narrowed.is_empty else scope


# ---------------------------------------------------------------------- search
def check_search_kwargs(
    kwargs: Mapping[str, Any] | None,
    *,
    allowed: frozenset[str] = SEARCH_KEYS,
    name: str = "search arguments",
    scope_hint: str = "pass scope ids as user_id/agent_id/session_id",
) -> dict[str, Any]:
    """Validate extra ``NeuSymMemory.search`` arguments (filters); ``name`` and ``scope_hint`` word the errors in
    the adapter's own terms.

    Scope keys are refused: a filter must never be able to change or widen the tenant. Unknown keys are refused,
    not ignored: a filter that silently does nothing returns memories the caller meant to exclude.
    """
    out = dict(kwargs or {})
    scoped = sorted(set(out) & {*SCOPE_KEYS, "scope", "all_tenants"})
    if scoped:
        raise ScopeError(f"{name} cannot set {scoped}; {scope_hint}")
    unknown = sorted(set(out) - allowed)
    if unknown:
        raise InvalidInputError(f"unknown {name} {unknown}; allowed: {sorted(allowed)}")
    return out


def retriever_search(call: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A retriever's search arguments, reviewed-only by default (what ``build_context`` shows): status ``active``
    (and ``superseded`` for a point-in-time ``valid_at`` read), never a memory screening flagged ``suspicious``.
    ``include_unreviewed=True`` adds what awaits review (status ``pending``, flagged ``suspicious``), marked in
    each hit's ``marks``; explicit ``statuses`` are searched as given. Returns the arguments and whether the hits
    must still be checked with :func:`neusym.prompting.withheld_reason` (the default: a record whose flags say it
    awaits review is left out even if its status was not updated)."""
    out = dict(call)
    include = bool(out.pop("include_unreviewed", False))
    check = not include and "statuses" not in out
    if check:
        out["statuses"] = ["active", *(["superseded"] if out.get("valid_at") is not None else [])]
    out["include_unreviewed"] = include
    return out, check


def shown_hits(results: Sequence[SearchResult], check: bool) -> list[SearchResult]:
    """``results`` without what a prompt must not show (see :func:`retriever_search`)."""
    return [r for r in results if not check or withheld_reason(r.memory) is None]


def search_shown(memory: NeuSymMemory, query: str, scope: Scope, *, k: int, **kwargs: Any) -> list[SearchResult]:
    """The search every adapter's retrieval runs (retrievers, recall tools, retrieval runnables): reviewed-only by
    default, like ``build_context`` (see :func:`retriever_search`)."""
    call, check = retriever_search(kwargs)
    return shown_hits(memory.search(query, scope=scope, k=k, **call), check)


async def asearch_shown(memory: NeuSymMemory, query: str, scope: Scope, *, k: int,
                        **kwargs: Any) -> list[SearchResult]:
    """:func:`search_shown` without blocking the event loop."""
    call, check = retriever_search(kwargs)
    return shown_hits(await memory.asearch(query, scope=scope, k=k, **call), check)


def record_of(text: str, metadata: Mapping[str, Any]) -> MemoryRecord:
    """The record a hit's text and :func:`result_metadata` describe (id, type, times, status, flags, confidence:
    what :func:`neusym.prompting.render_memories` reads), for rendering a ``Document``/node a program holds."""
    def when(key: str) -> datetime | None:
        value = metadata.get(key)
        return datetime.fromisoformat(value) if isinstance(value, str) and value else None

    return MemoryRecord(
        id=str(metadata.get("memory_id") or ""), content=text, type=MemoryType(metadata.get("type") or "observation"),
        created_at=when("created_at") or when("valid_from") or datetime.fromtimestamp(0).astimezone(),
        valid_from=when("valid_from"), valid_to=when("valid_to"),
        status=MemoryStatus(metadata.get("status") or "active"),
        flags=list(metadata.get("flags") or []), confidence=float(metadata.get("confidence", 1.0)))


def render_hits(hits: Iterable[tuple[str, Mapping[str, Any]]], *, header: str = "",
                heading: str = "Relevant memories", show_ids: bool = True) -> str:
    """Retrieved memories (``(text, metadata)`` of a LangChain ``Document`` or a LlamaIndex node) framed, quoted and
    marked exactly as the recall tools show them (:func:`neusym.prompting.render_memories`): for a chain that puts
    a retriever's results into a prompt. The retriever already chose what may be shown, so nothing is withheld
    here except quarantined records."""
    return render_memories([record_of(text, meta) for text, meta in hits], header=header, heading=heading,
                           include_unreviewed=True, show_ids=show_ids)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def result_metadata(result: SearchResult) -> dict[str, Any]:
    """A hit's record as JSON-friendly metadata (times in ISO 8601) plus the one-line score summary.

    The adapters add their own keys next to it (the score, the explanation's components); what the memory itself
    says is listed here once so a ``Document`` and a ``NodeWithScore`` describe a memory the same way.
    """
    rec = result.memory
    return {
        "memory_id": rec.id,
        "type": rec.type.value,
        "created_at": _iso(rec.created_at),
        "updated_at": _iso(rec.updated_at),
        "valid_from": _iso(rec.valid_from),
        "valid_to": _iso(rec.valid_to),
        "status": rec.status.value,
        "flags": list(rec.flags),
        "marks": careful_use_marks(rec),  # what a prompt should say about it (neusym.prompting)
        "user_id": rec.scope.user_id,
        "agent_id": rec.scope.agent_id,
        "session_id": rec.scope.session_id,
        "tags": list(rec.tags),
        "entities": list(rec.entities),
        "importance": rec.importance,
        "confidence": rec.confidence,
        "expires_at": _iso(rec.expires_at),
        "metadata": dict(rec.metadata),
        "score_explanation": result.explanation.summary(),
    }


# ---------------------------------------------------------------------- context text
def _builder(k: int, encoding: str, header: str) -> ContextBuilder:
    from neusym.reflection.context import ContextBuilder
    from neusym.reflection.tokens import get_token_counter

    return ContextBuilder(counter=get_token_counter(encoding), k_memories=k, header=header)


def build_context(memory: NeuSymMemory, query: str, scope: Scope, *, max_tokens: int, k: int,
                  encoding: str = "cl100k_base", header: str = "") -> str:
    """NeuSym's prompt context for ``query``: reflections first, then the most relevant memories, framed and quoted
    as stored data with careful-use marks (:mod:`neusym.prompting`; ``header`` goes inside the frame), within
    ``max_tokens`` counted with tiktoken ``encoding``. "" for an empty query or when nothing is found."""
    if not query.strip() or max_tokens <= 0:
        return ""
    built = memory.build_context(query, scope=scope, budget_tokens=max_tokens, builder=_builder(k, encoding, header))
    return built.text


async def abuild_context(memory: NeuSymMemory, query: str, scope: Scope, *, max_tokens: int, k: int,
                         encoding: str = "cl100k_base", header: str = "") -> str:
    """:func:`build_context` without blocking the event loop."""
    if not query.strip() or max_tokens <= 0:
        return ""
    built = await memory.abuild_context(query, scope=scope, budget_tokens=max_tokens,
                                        builder=_builder(k, encoding, header))
    return built.text


def truncate_context(content: str, tokens_to_truncate: int,
                     tokenizer_fn: Callable[[str], Sequence[Any]]) -> str | None:
    """Drop the last (lowest-ranked) records of a built context until ``tokens_to_truncate`` tokens are saved, and
    any ``##`` section left without records; ``None`` if no record is left. The context lists best first with one
    ``- `` line per record (see :mod:`neusym.prompting`), which is why cutting records from the end is safe; the
    frame around them (delimiters, preamble, legend) stays, so what is left is still marked as data."""
    lines: list[str | None] = list(content.splitlines())
    records = [i for i, line in enumerate(lines) if line is not None and line.startswith("- ")]
    saved = 0
    while records and saved < tokens_to_truncate:
        i = records.pop()
        saved += len(tokenizer_fn(f"{lines[i]}\n"))
        lines[i] = None
    if not records:
        return None
    kept = [line for line in lines if line is not None]

    def is_content(line: str) -> bool:  # a record or a turn, not a heading or a line of the frame
        return not (line.startswith(("## ", "Marks: ", "(")) or line in (OPEN, CLOSE, PREAMBLE))

    out = [line for i, line in enumerate(kept)  # a heading whose records are all gone goes too
           if not line.startswith("## ") or (i + 1 < len(kept) and is_content(kept[i + 1]))]
    return "\n".join(out) or None
