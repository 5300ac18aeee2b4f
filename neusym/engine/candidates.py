"""From what a caller passes to candidate memories and filters: pure functions, no graph, no lock.

Everything a write or a read checks before it touches a store lives here, so a bad argument is refused with an
:class:`InvalidInputError` before anything is written, and the checks can be tested without a database.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from pydantic import ValidationError

from neusym.errors import DimensionMismatchError, InvalidInputError, NeuSymError
from neusym.extraction import Extraction, Extractor
from neusym.governance.ttl import ttl_of_memory
from neusym.ingest import Turn, normalize_messages
from neusym.language.phatic import SmallTalk, small_talk
from neusym.record import (
    MAX_ENTITY_CHARS,
    MemoryRecord,
    MemoryStatus,
    MemoryType,
    PlanState,
    Scope,
    Source,
    as_epoch,
    content_hash,
    validate_id,
    validate_text,
)
from neusym.symbolic.convert import entity_namespace, entity_uid
from neusym.symbolic.rescoring import SymbolicFilters

__all__ = [
    "MAX_K",
    "MAX_OFFSET",
    "SYSTEM_REASON",
    "check_ids",
    "check_k",
    "check_offset",
    "check_norms",
    "check_vectors",
    "edited",
    "extract",
    "field_errors",
    "finite",
    "origin_of",
    "small_talk_of",
    "record_from",
    "search_filters",
    "ttl_seconds",
    "turns_of",
]

MAX_K = 1000
"""Largest ``k`` of a search and ``limit`` of a query (page through larger sets with ``offset``)."""
MAX_OFFSET = 100_000
"""Largest ``offset`` of a query: deeper pages are a scan, not a lookup (export a scope instead)."""

_CURRENT = [MemoryStatus.ACTIVE.value, MemoryStatus.PENDING.value]  # what a read returns by default

SYSTEM_REASON = ("a system message instructs the model; it is not a statement to remember (pass the text with "
                 "origin='system' to store it as a trusted application fact)")


@contextmanager
def field_errors(what: str) -> Iterator[None]:
    """Field values the record model refuses (wrong type, out of range, NaN, a date beyond the calendar) are the
    caller's mistake: an :class:`InvalidInputError`, never a raw pydantic/``ValueError``/``OverflowError``."""
    try:
        yield
    except NeuSymError:
        raise
    except ValidationError as err:  # the model's own words, without echoing the (possibly huge) input back
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'value'}: {e['msg']}" for e in err.errors())
        raise InvalidInputError(f"{what}: {problems}") from err
    except (ValueError, TypeError, OverflowError) as err:
        raise InvalidInputError(f"{what}: {err}") from err


def _int_arg(value: Any, name: str, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0 or value > top:
        raise InvalidInputError(f"{name} must be between 0 and {top}, got {value}")
    return value


def check_k(k: Any, name: str = "k") -> int:
    return _int_arg(k, name, MAX_K)


def check_offset(offset: Any) -> int:
    return _int_arg(offset, "offset", MAX_OFFSET)


def check_ids(memory_ids: Any) -> list[str]:
    """One id or a collection of ids, each an id (:func:`neusym.record.validate_id`: no caller-supplied id can
    carry a line break or a delimiter into an answer that echoes it)."""
    wanted: list[Any] = list(memory_ids) if isinstance(memory_ids, list | tuple | set | frozenset) else [memory_ids]
    if not all(isinstance(i, str) and i for i in wanted):
        raise InvalidInputError("memory ids must be non-empty strings")
    return [validate_id(i) for i in wanted]


def finite(value: Any, name: str) -> float:
    """A finite number (``NaN`` compares false with everything: as a threshold it would silently match nothing)."""
    if isinstance(value, bool):
        raise InvalidInputError(f"{name} must be a number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError) as err:
        raise InvalidInputError(f"{name} must be a number, got {value!r}") from err
    if not math.isfinite(out):
        raise InvalidInputError(f"{name} must be a finite number, got {value!r}")
    return out


def ttl_seconds(ttl: Any, what: str = "ttl") -> float | None:
    """A TTL as positive seconds (a number or a ``timedelta``), or ``None``."""
    if ttl is None:
        return None
    value = ttl.total_seconds() if isinstance(ttl, timedelta) else ttl
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InvalidInputError(f"{what} must be a positive number of seconds or a timedelta")
    return float(value)


def turns_of(content: Any, origin: str, speaker: str | None) -> list[Turn]:
    """A statement becomes one turn spoken as ``origin``; a message list keeps its roles."""
    if isinstance(content, str | bytes):
        return [Turn(role="user" if origin == "user" else origin, content=validate_text(content), speaker=speaker)]
    if isinstance(content, Sequence) or hasattr(content, "__iter__"):
        return normalize_messages(content)
    raise InvalidInputError(f"content must be a str or a list of messages, got {content.__class__.__name__}")


def small_talk_of(turn: Turn) -> SmallTalk | None:
    """What small talk a conversation turn is only made of (``None``: it says something); see
    :mod:`neusym.language.phatic`. Tool output is data, never small talk."""
    return None if turn.role == "tool" else small_talk(turn.content)


def origin_of(turn: Turn, origin: str, *, message: bool) -> str | None:
    """Where a turn came from (governance weighs trust by it); ``None`` for a system message, never stored.

    user → ``origin`` (default ``user``); assistant → ``agent``; tool/function → ``tool``; a statement passed with
    ``origin="system"`` is the application's own trusted fact; a *message* with role system is a prompt.
    """
    if turn.role == "assistant":
        return "agent"
    if turn.role == "tool":
        return "tool"
    if turn.role == "system":
        return None if message else "system"
    return origin


def turn_text(text: str, speaker: str | None) -> str:
    return f"{speaker}: {text}" if speaker and speaker not in ("user", "assistant") else text


def extract(extractor: Extractor, text: str, speaker: str | None, now: datetime, infer: bool) -> list[Extraction]:
    """Extraction results for one text. ``infer=False`` keeps the text verbatim as ONE memory but still takes
    the extractor's entities, facts and dates so the graph links it; text with nothing extractable is kept as
    a low-importance observation and left to admission control."""
    if speaker is not None:  # it becomes part of the text and an entity: same rules as the text itself
        speaker = validate_text(speaker, field="speaker", max_bytes=1024)
    exts = list(extractor.extract(text, speaker=speaker, now=now))
    if infer and exts:
        return exts
    first = exts[0] if exts else None
    return [Extraction(
        content=turn_text(text, speaker),
        type=first.type if first and not infer else MemoryType.OBSERVATION,
        entities=list(dict.fromkeys(e for x in exts for e in x.entities)),
        triples=[t for x in exts for t in x.triples],
        tags=list(dict.fromkeys(t for x in exts for t in x.tags)),
        confidence=first.confidence if first else 0.8,
        importance=first.importance if first else 0.3,
        valid_from=first.valid_from if first else None,
        expires_in=first.expires_in if first else None,
        plan_due=first.plan_due if first else None,
        speaker=speaker,
        intent_signals=list(dict.fromkeys(s for x in exts for s in x.intent_signals)) or ["no_extraction"],
    )]


def record_from(ext: Extraction, sc: Scope, *, now: datetime, mtype: MemoryType | None,
                metadata: dict[str, Any] | None, importance: float | None, confidence: float | None,
                origin: str, ttl: float | None, valid_from: datetime | float | None,
                tags: Sequence[str] | None, turn: Turn, ref: str | None) -> MemoryRecord:
    """A candidate memory. Its validity starts at its event time (given, or found by the extractor) or, failing
    that, when it was ingested: never "always valid", so a point-in-time read before it was said leaves it out."""
    vf = valid_from if valid_from is not None else ext.valid_from
    try:
        vf_dt = datetime.fromtimestamp(vf, tz=now.tzinfo) if isinstance(vf, int | float) else vf
    except (OverflowError, OSError, ValueError) as err:  # beyond the platform's calendar (EOVERFLOW), NaN
        raise InvalidInputError(f"valid_from is not a usable time: {err}") from err
    # a TTL given by the caller wins; else one stated in words, in the memory or the turn it came from ("for two
    # hours", "until Friday", "bis Freitag"), else the extractor's; durations of habits and of the past never expire
    expires_in = ttl if ttl is not None else (ttl_of_memory(ext.content, turn.content, now) or ext.expires_in)
    entities = [e for e in dict.fromkeys([*ext.entities, *([ext.speaker] if ext.speaker and ext.speaker not in
                                                           ("user", "assistant") else [])])
                if len(e) <= MAX_ENTITY_CHARS]  # an extractor's run-on "name" stays in the text only
    rtype = mtype or ext.type
    return MemoryRecord(
        content=ext.content,
        type=rtype,
        entities=entities,
        triples=[t for t in ext.triples if max(len(t.subject), len(t.object)) <= MAX_ENTITY_CHARS],
        tags=list(dict.fromkeys([*(tags or []), *ext.tags])),
        scope=sc,
        source=Source(origin=origin, session_id=sc.session_id, turn=turn.index, speaker=ext.speaker, ref=ref),
        created_at=vf_dt if (vf_dt is not None and valid_from is not None) else now,
        valid_from=vf_dt if vf_dt is not None else now,
        importance=importance if importance is not None else ext.importance,
        confidence=confidence if confidence is not None else ext.confidence,
        expires_at=now + timedelta(seconds=expires_in) if expires_in else None,
        plan_state=PlanState.OPEN if rtype == MemoryType.PLAN else None,
        plan_due=ext.plan_due,
        metadata=dict(metadata or {}),
        intent=list(ext.intent_signals),
    )


def edited(before: MemoryRecord, content: str | None, fields: dict[str, Any], extractor: Extractor,
           now: datetime) -> MemoryRecord:
    """The candidate an update proposes: ``before`` with ``fields`` set and, with new ``content``, the new text read
    the way an add reads it: its entities and facts extracted (unless given) and a TTL stated in it ("for two
    hours", "until Friday") setting ``expires_at`` (unless given; a text that states none keeps the expiry it had).
    Governance then plans it like a new memory (``Governor.admit(..., edit=True)``)."""
    data = before.model_dump()
    data.update(fields)
    if content is not None:
        data["content"] = content
        data["content_hash"] = content_hash(content)
        exts = list(extractor.extract(content, speaker=before.source.speaker, now=now))
        if "entities" not in fields and "triples" not in fields:
            data["entities"] = sorted({e for x in exts for e in x.entities if len(e) <= MAX_ENTITY_CHARS})
            data["triples"] = [t for x in exts for t in x.triples
                               if max(len(t.subject), len(t.object)) <= MAX_ENTITY_CHARS]
        if "expires_at" not in fields:
            stated = ttl_of_memory(content, content, now) or next((x.expires_in for x in exts if x.expires_in), None)
            if stated:
                data["expires_at"] = now + timedelta(seconds=stated)
    with field_errors("invalid update"):
        return MemoryRecord.model_validate(data)


def check_vectors(vectors: Any, count: int, dim: int) -> np.ndarray:
    """Caller-supplied embeddings, checked before anything is written (a bad row must not half-apply a batch)."""
    try:
        arr = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InvalidInputError(f"vectors must be a numeric array: {err}") from err
    if arr.ndim != 2 or arr.shape[0] != count:
        raise InvalidInputError(f"vectors must have shape ({count}, {dim}), got {arr.shape}")
    if arr.shape[1] != dim:
        raise DimensionMismatchError(f"vectors have dimension {arr.shape[1]}; this store embeds with {dim}")
    if not np.isfinite(arr).all():
        raise InvalidInputError("vectors contain NaN or infinite values")
    return check_norms(arr, "vectors")


MAX_NORM = float(np.sqrt(np.finfo(np.float32).max))
"""Largest vector length NeuSym can normalise in float32 (about 1.8e19): beyond it the squared norm overflows."""


def check_norms(arr: np.ndarray, what: str) -> np.ndarray:
    """``arr`` as float32 rows that cosine similarity is defined for: non-zero, and not so long that normalising
    overflows float32 (a row of 3e38s would otherwise become an all-zero vector further down)."""
    norms = np.linalg.norm(np.asarray(arr, dtype=np.float64), axis=1)
    if (norms <= 1e-12).any():
        raise InvalidInputError(f"{what} contain an all-zero row (cosine similarity is undefined)")
    if (norms > MAX_NORM).any():
        raise InvalidInputError(f"{what} contain a row of length {float(norms.max()):.3g}, beyond what float32 can "
                                f"normalise ({MAX_NORM:.3g}): scale the vectors down (cosine ignores the length)")
    return np.asarray(arr, dtype=np.float32)


def search_filters(sc: Scope, *, types: Sequence[Any] | None = None, tags: Sequence[str] | None = None,
                   entities: Sequence[str] | None = None, plan_states: Sequence[Any] | None = None,
                   statuses: Sequence[Any] | None = None, valid_at: Any = None, time_from: Any = None,
                   time_to: Any = None, predicate: str | None = None, objects: Sequence[str] | None = None,
                   due_from: Any = None, due_to: Any = None, include_expired: bool = False,
                   min_confidence: float | None = None,
                   exclude_flags: Sequence[str] | None = None) -> SymbolicFilters:
    """The stage-2 / query filters of a read, every value checked (a typed error, not a ``TypeError``)."""
    from neusym.extraction import entity_key

    ns = entity_namespace(sc)

    def uids(names: Sequence[str] | None) -> list[str] | None:
        if names is None:
            return None
        if isinstance(names, str):
            names = [names]
        if not all(isinstance(n, str) for n in names):
            raise InvalidInputError("entity names must be strings")
        return [entity_uid(ns, entity_key(n)) for n in names]

    with field_errors("invalid filter"):  # e.g. types=True, statuses=5
        st = [MemoryStatus(s).value for s in statuses] if statuses is not None else (
            _CURRENT if valid_at is None else [*_CURRENT, MemoryStatus.SUPERSEDED.value])
        ty = [MemoryType(t).value for t in types] if types is not None else None
        ps = [PlanState(p).value for p in plan_states] if plan_states is not None else None
        return SymbolicFilters(
            statuses=st, types=ty, plan_states=ps,
            tags=([tags] if isinstance(tags, str) else list(tags)) if tags is not None else None,
            entity_uids=uids(entities), predicate=predicate, object_uids=uids(objects),
            valid_at=as_epoch(valid_at), time_from=as_epoch(time_from), time_to=as_epoch(time_to),
            due_from=as_epoch(due_from), due_to=as_epoch(due_to), include_expired=include_expired,
            min_confidence=min_confidence, exclude_flags=list(exclude_flags) if exclude_flags else None,
        )
