"""The memory record and the small value types around it.

Times are timezone-aware UTC ``datetime`` objects in Python and epoch seconds (floats) in the graph: floats compare
and subtract the same way in every Cypher dialect, which keeps recency scoring and point-in-time filters portable.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from neusym.errors import InvalidInputError, ScopeError

__all__ = [
    "ID_CHARS",
    "MAX_CONTENT_BYTES",
    "MAX_ENTITY_CHARS",
    "MAX_ID_CHARS",
    "REVIEW_FLAGS",
    "REVIEW_KINDS",
    "Flag",
    "MemoryRecord",
    "MemoryStatus",
    "MemoryType",
    "PlanState",
    "ReviewKind",
    "Scope",
    "ScoreExplanation",
    "SearchResult",
    "Source",
    "Triple",
    "as_epoch",
    "from_epoch",
    "content_hash",
    "normalize_text",
    "utcnow",
    "validate_id",
    "validate_label",
    "validate_text",
]

MAX_CONTENT_BYTES = 1_000_000
"""Largest memory text accepted (UTF-8 bytes). Memories are statements, not documents: chunk documents first."""

MAX_ENTITY_CHARS = 200
"""Longest entity name (and fact subject/object) a memory may carry: a name, not a passage. Longer names a caller
passes are refused; longer ones an extractor proposes are left out of the graph (the text keeps them)."""


MAX_ID_CHARS = 128
"""Longest memory (and audit entry) id. NeuSym makes 32-character hex ids; an id from elsewhere (a restore file, a
caller) is refused beyond this."""
ID_CHARS = "ASCII letters, digits and _ . : -"
_ID = re.compile(rf"[A-Za-z0-9_.:-]{{1,{MAX_ID_CHARS}}}")


def validate_id(value: Any, what: str = "memory id") -> str:
    """``value`` if it is an id NeuSym can show in a prompt as it is: 1 to :data:`MAX_ID_CHARS` of
    :data:`ID_CHARS`. Ids are printed raw where callers act on them (recall lines lead with ``[id]``), so an id with
    a line break or a delimiter (``</neusym_memories>``) must never get in; an :class:`InvalidInputError` says
    which rule it broke (without echoing a huge value)."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    if not _ID.fullmatch(value):  # the value is not echoed: it may be the very text that must not reach a prompt
        bad = next((f"U+{ord(ch):04X}" for ch in value if not _ID.fullmatch(ch)), None)
        why = f"holds {bad}" if bad else f"is {len(value)} characters long"
        raise InvalidInputError(f"{what} {why}: an id is 1 to {MAX_ID_CHARS} characters of {ID_CHARS}")
    return value


def validate_label(value: Any, what: str, max_chars: int = 512) -> str:
    """A caller's name for something (a scope id, a store key, an external reference): any text, but one line (no
    character that starts a new line: ``\n \r \v \f``, ``\x1c-\x1e``, ``\x85``, the Unicode line and
    paragraph separators; no NUL, no lone surrogate), at most ``max_chars``, so it can be shown or logged without
    starting a line of its own."""
    if not isinstance(value, str) or not value:
        raise InvalidInputError(f"{what} must be a non-empty string")
    if len(value) > max_chars:
        raise InvalidInputError(f"{what} is {len(value)} characters (limit {max_chars})")
    bad = next((ch for ch in value if ch in _LINE_BREAKS or unicodedata.category(ch) == "Cs"), None)
    if bad is not None:
        raise InvalidInputError(f"{what} contains U+{ord(bad):04X}: it must be one line of text")
    return value


_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\x00")


class MemoryType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    INSTRUCTION = "instruction"
    PLAN = "plan"
    EMOTION = "emotion"
    OBSERVATION = "observation"
    REFLECTION = "reflection"
    KNOWLEDGE = "knowledge"


class MemoryStatus(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"
    QUARANTINED = "quarantined"
    PENDING = "pending"  # admitted but waiting for review (conflict to arbitrate, dedup middle band)
    DELETED = "deleted"


class Flag(StrEnum):
    """Flags governance puts on ``MemoryRecord.flags`` (retrieval turns some into warnings, review lists some)."""

    LOW_CONFIDENCE = "low_confidence"
    INJECTION = "injection"
    SUSPICIOUS = "suspicious"  # borderline screening risk: stored, listed for review
    CONFLICT_PENDING = "conflict_pending"
    CONTRADICTION = "contradiction"
    DEDUP_REVIEW = "dedup_review"
    EXPIRED = "expired"
    FADED = "faded"
    FORGOTTEN = "forgotten"
    PINNED = "pinned"  # never decays


ReviewKind = Literal["quarantine", "conflict", "dedup", "contradiction", "suspicious"]
"""Why a memory waits in the review queue (``quarantine``: its status; the others: a flag)."""
REVIEW_KINDS: tuple[ReviewKind, ...] = ("quarantine", "conflict", "dedup", "contradiction", "suspicious")
REVIEW_FLAGS: dict[ReviewKind, Flag] = {"conflict": Flag.CONFLICT_PENDING, "dedup": Flag.DEDUP_REVIEW,
                                        "contradiction": Flag.CONTRADICTION, "suspicious": Flag.SUSPICIOUS}
"""The flag that puts a memory in each flag-based review kind."""


class PlanState(StrEnum):
    OPEN = "open"
    DONE = "done"
    CANCELLED = "cancelled"


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_epoch(value: datetime | float | int | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise InvalidInputError(f"a time must be a finite epoch or a datetime, got {value!r}")
        return float(value)
    if not isinstance(value, datetime):
        raise InvalidInputError(f"a time must be an epoch number or a datetime, got {type(value).__name__}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()


def from_epoch(value: float | int | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), tz=UTC)


def validate_text(text: Any, *, field: str = "text", max_bytes: int = MAX_CONTENT_BYTES) -> str:
    """Return ``text`` if NeuSym can store it verbatim, else raise :class:`InvalidInputError`.

    Invalid text is refused rather than repaired: silently dropping a lone surrogate or a NUL would store something
    the user did not say, and both break the graph drivers' UTF-8 encoding further down.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as err:
            raise InvalidInputError(f"{field} is not valid UTF-8: {err}") from err
    if not isinstance(text, str):
        raise InvalidInputError(f"{field} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise InvalidInputError(f"{field} is empty or whitespace only")
    if "\x00" in text:
        raise InvalidInputError(f"{field} contains a NUL character")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as err:
        raise InvalidInputError(f"{field} contains a lone surrogate (invalid Unicode) at position {err.start}") from err
    if size > max_bytes:
        raise InvalidInputError(f"{field} is {size} bytes; the limit is {max_bytes} (split long documents first)")
    return text


def normalize_text(text: str) -> str:
    """Canonical form used for exact-duplicate detection: NFKC, casefolded, whitespace and edge punctuation folded."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).strip(" .!?;,")


def content_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()


class Scope(BaseModel):
    """Who a memory belongs to. ``user_id`` is the tenant boundary; agent and session narrow it.

    A scope used for reading matches memories whose set fields equal the given ones; unset fields are wildcards
    (so ``Scope(user_id="u")`` sees all of u's sessions). Writes require at least one field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None

    @field_validator("user_id", "agent_id", "session_id")
    @classmethod
    def _check_id(cls, v: str | None) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str) or not v.strip():
            raise ValueError("scope ids must be non-empty strings")
        if "\x00" in v or len(v) > 512:
            raise ValueError("scope ids must be at most 512 characters without NUL")
        if not v.isascii():
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ValueError(f"scope ids must be valid Unicode (lone surrogate at {err.start})") from err
        return v

    @classmethod
    def coerce(cls, value: Scope | dict[str, Any] | None = None, **kwargs: Any) -> Scope:
        """Build a scope from a Scope, a dict or keyword arguments, with a typed error for unknown keys."""
        if isinstance(value, Scope) and not kwargs:
            return value
        data: dict[str, Any] = {}
        if isinstance(value, Scope):
            data.update(value.model_dump(exclude_none=True))
        elif isinstance(value, dict):
            data.update(value)
        elif value is not None:
            raise ScopeError(f"scope must be a Scope or a dict, got {type(value).__name__}")
        data.update({k: v for k, v in kwargs.items() if v is not None})
        unknown = set(data) - {"user_id", "agent_id", "session_id"}
        if unknown:
            raise ScopeError(f"unknown scope keys {sorted(unknown)}; use user_id, agent_id, session_id")
        try:
            return cls(**data)
        except ValueError as err:
            raise ScopeError(str(err)) from err

    @property
    def is_empty(self) -> bool:
        return self.user_id is None and self.agent_id is None and self.session_id is None

    def as_params(self) -> dict[str, str | None]:
        return {"user_id": self.user_id, "agent_id": self.agent_id, "session_id": self.session_id}

    def contains(self, other: Scope) -> bool:
        """True if every field set here is equal in ``other`` (``other`` is inside this scope)."""
        return all(
            mine is None or mine == theirs
            for mine, theirs in (
                (self.user_id, other.user_id),
                (self.agent_id, other.agent_id),
                (self.session_id, other.session_id),
            )
        )


class Triple(BaseModel):
    """A subject-predicate-object fact. Subjects and objects are entity names; predicates are snake_case verbs."""

    model_config = ConfigDict(frozen=True)

    subject: str
    predicate: str
    object: str
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    polarity: bool = True  # False for negated facts ("does not like coffee")


class Source(BaseModel):
    """Where a memory came from; trust feeds admission control and conflict resolution."""

    origin: str = "user"  # user | agent | tool | import | reflection | system
    session_id: str | None = None
    turn: int | None = None
    speaker: str | None = None
    ref: str | None = None  # external id (e.g. a LoCoMo dia_id or a message id)


class MemoryRecord(BaseModel):
    """One memory. The same ``id`` names its FAISS vector and its graph node."""

    model_config = ConfigDict(validate_assignment=False)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    content: str
    type: MemoryType = MemoryType.OBSERVATION
    entities: list[str] = Field(default_factory=list)
    triples: list[Triple] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    scope: Scope = Field(default_factory=Scope)
    source: Source = Field(default_factory=Source)
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    last_accessed_at: datetime | None = None
    access_count: int = 0
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    strength: float = Field(default=1.0, ge=0.0)
    expires_at: datetime | None = None
    status: MemoryStatus = MemoryStatus.ACTIVE
    plan_state: PlanState | None = None
    plan_due: datetime | None = None
    version: int = 1
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str = ""
    flags: list[str] = Field(default_factory=list)  # e.g. low_confidence, conflict_pending, injection
    intent: list[str] = Field(default_factory=list)  # extractor's intent signals (question, hypothetical, ...)
    seq: int = 0  # graph write sequence of the last change (watermark for FAISS catch-up)
    nid: int = 0  # int64 id used by the FAISS index

    @model_validator(mode="after")
    def _names_are_names(self) -> MemoryRecord:
        long = [n for n in [*self.entities, *(x for t in self.triples for x in (t.subject, t.object))]
                if len(n) > MAX_ENTITY_CHARS]
        if long:
            raise ValueError(f"entity names are at most {MAX_ENTITY_CHARS} characters; got one of {len(long[0])}")
        return self

    @model_validator(mode="after")
    def _fill(self) -> MemoryRecord:
        if not self.content_hash:
            self.content_hash = content_hash(self.content)
        if self.type == MemoryType.PLAN and self.plan_state is None:
            self.plan_state = PlanState.OPEN
        return self


class ScoreExplanation(BaseModel):
    """Why a memory scored what it did: every weighted component, and the graph path that promoted it.

    ``score = type_weight * sum(weights[c] * components[c])`` over the registered components
    (:mod:`neusym.symbolic.scoring`); the named fields below repeat the components for convenience, and carry
    what stage 1 measured (raw cosine, raw BM25, each channel's rank).
    """

    similarity: float = 0.0  # fused stage-1 score, normalised to [0, 1]
    dense: float | None = None  # raw cosine similarity when the dense channel found it
    lexical: float | None = None  # raw BM25 when the lexical channel found it
    lexical_norm: float = 0.0  # BM25 / the query's best BM25 in scope
    dense_rank: int | None = None
    lexical_rank: int | None = None
    recency: float = 0.0
    importance: float = 0.0
    confidence: float = 0.0
    strength: float = 0.0
    type_weight: float = 1.0
    entity_match: float = 0.0
    graph: float = 0.0
    activation: float = 0.0  # entity activation spread from the best hits (multi-hop)
    neighbour: float = 0.0
    temporal: float = 0.0
    speaker: float = 0.0
    predicate: float = 0.0
    distinct: float = 0.0  # how unlike the other candidates it is (neusym.retrieval.geometry)
    contrast: float = 0.0  # query match beyond what every candidate shares (neusym.retrieval.geometry)
    rerank: float | None = None
    components: dict[str, float] = Field(default_factory=dict)  # every component's value, by name
    weights: dict[str, float] = Field(default_factory=dict)
    path: list[str] = Field(default_factory=list)  # e.g. ["query entity 'paris'", "MENTIONS", "memory"]
    via: str = "neural"  # neural | lexical | graph | symbolic
    warnings: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        """``sim=0.412 rec=0.00 ...``: the similarity, then every other component that counted (non-zero value
        with a non-zero weight), then the graph path."""
        parts = [f"sim={self.similarity:.3f}"]
        shown = {"similarity", "dense", "lexical"}
        for name, value in self.components.items():
            if name in shown or not value or not self.weights.get(name):
                continue
            parts.append(f"{_SHORT.get(name, name)}={value:.2f}")
        if not self.components:  # an explanation built by hand, without the registry's values
            parts += [f"rec={self.recency:.2f}", f"imp={self.importance:.2f}"]
        if self.path:
            parts.append("path=" + " -> ".join(self.path))
        return " ".join(parts)


_SHORT = {"recency": "rec", "importance": "imp", "confidence": "conf", "strength": "str", "entity": "ent",
          "activation": "act", "neighbour": "nbr", "temporal": "time", "speaker": "spk", "predicate": "fact"}


class SearchResult(BaseModel):
    memory: MemoryRecord
    score: float
    explanation: ScoreExplanation = Field(default_factory=ScoreExplanation)

    @property
    def id(self) -> str:
        return self.memory.id

    @property
    def content(self) -> str:
        return self.memory.content
