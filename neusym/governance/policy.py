"""Every governance threshold and default in one validated object, so behaviour is tunable and documented.

The defaults are chosen for an assistant that remembers a single user's life: keep what the user states, keep
agent inferences and tool output at reduced weight, refuse nothing that is merely chatty, and quarantine anything
that tries to steer the agent. They are deliberately conservative about *losing* data (archive before purge, purge
only after a retention period) and deliberately strict about *poisoning* (quarantine on a single strong signal).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["ConflictStrategy", "GovernancePolicy"]

ConflictStrategy = Literal["recency", "source_trust", "ask"]

_DAY = 86400.0


class GovernancePolicy(BaseModel):
    """Thresholds and defaults of admission, screening, dedup, conflicts and lifecycle.

    Admission works on the *effective confidence* ``confidence x source_trust[origin]``:
    ``>= store_threshold`` stores, ``>= low_confidence_threshold`` stores flagged ``low_confidence`` with importance
    and strength multiplied by ``low_confidence_weight``, anything lower is rejected.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # ---------------------------------------------------------------- admission
    store_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    low_confidence_threshold: float = Field(default=0.2, ge=0.0, le=1.0)
    low_confidence_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    source_trust: dict[str, float] = Field(default_factory=lambda: {
        "user": 1.0, "system": 1.0, "import": 0.9, "reflection": 0.8, "tool": 0.75, "agent": 0.7,
        "document": 0.6,
    })
    """How far each origin is believed: a user's own statement about themselves beats an agent's inference.

    ``document`` (a file, page or e-mail the application passes in) is a record, not an inference, but someone else
    wrote it, it is often about other people, and it is the main channel of indirect prompt injection: below tool
    output (a system of record the application queried: 0.75) and an agent's restatement (0.7), above an unknown
    origin (0.5). A document's facts are therefore stored at reduced weight unless the extractor is sure, and they
    never replace a value on their own (below ``update_min_trust``): they go to review."""
    update_min_trust: float = Field(default=0.7, ge=0.0, le=1.0)
    """Origins trusted at least this much may replace a current value (supersede); a less trusted one (a document,
    an unknown origin) is held for review instead. The default admits the agent (0.7): an agent writing through its
    memory tools (MCP ``remember``, the LangGraph store, the LangChain toolkit) is the user's delegate, and an update
    it records that waits in a queue nobody reads is an update lost. 0.75 keeps agent-origin changes for review too
    (a tool's record of the user's data still updates; an assistant turn that restates the same call's user message
    carries the user's trust)."""
    unknown_source_trust: float = Field(default=0.5, ge=0.0, le=1.0)
    instruction_importance: float = Field(default=0.8, ge=0.0, le=1.0)
    """Floor on the importance of explicit instructions and "please remember" statements."""
    emotion_importance: float = Field(default=0.3, ge=0.0, le=1.0)
    """Cap on the importance of passing emotions: a mood is not a durable preference."""
    small_talk: Literal["skip", "store"] = "skip"
    """What happens to a turn of a *conversation* (messages, as the chat middleware and memories pass them) that is
    only small talk: a greeting, thanks, an acknowledgement or filler ("hi", "Hello Ana!", "ok thanks", "lol";
    :mod:`neusym.language.phatic`). ``skip``: not stored, reported as a ``reject`` decision "not memorable" and
    audited; ``store``: admitted like any turn. A statement passed as a plain string is always admitted: whoever
    calls ``add("hi")`` asked for it."""

    # ---------------------------------------------------------------- screening (poisoning / injection)
    injection_threshold: float = Field(default=0.5, ge=0.0)
    """Risk score at or above which a candidate is quarantined."""
    borderline_threshold: float = Field(default=0.25, ge=0.0)
    """Risk in [borderline, injection) is what the optional LLM judge is asked about."""
    untrusted_origin_boost: float = Field(default=0.25, ge=0.0)
    """Added to the risk of agent-directed imperatives that arrive from tool output, imports or agent turns:
    indirect prompt injection comes through those channels, a user may legitimately instruct their own agent."""
    llm_judge: bool = False
    """Ask the memory's LLM about borderline candidates. Off by default: it adds a model call to the write path."""

    # ---------------------------------------------------------------- dedup
    near_duplicate_threshold: float = Field(default=0.95, ge=0.0, le=1.0)
    """Cosine similarity at or above which a candidate merges into an existing memory."""
    review_threshold: float = Field(default=0.88, ge=0.0, le=1.0)
    """Cosine in [review, near_duplicate) stores the candidate as ``pending`` in the dedup review queue."""
    merge_reinforcement: float = Field(default=0.5, ge=0.0)
    """Strength added to a memory each time a duplicate is merged into it."""
    max_strength: float = Field(default=5.0, gt=0.0)

    # ---------------------------------------------------------------- conflicts
    conflict_strategy: ConflictStrategy = "recency"
    conflict_strategy_by_predicate: dict[str, ConflictStrategy] = Field(default_factory=dict)
    """Per-predicate override, e.g. ``{"married_to": "ask"}``."""
    update_model: Literal["auto", "on", "off"] = "auto"
    """The update pair model (:mod:`neusym.governance.update_model`), which finds updates that extraction misses by
    comparing a new memory with its nearest older ones. Its weights and threshold were fitted on MiniLM vectors
    (all-MiniLM-L6-v2, the default embedder): ``auto`` runs it with that model only, since another embedder's cosine
    scale (OpenAI's, a hashing fake's) puts its inputs where it was never fitted and it supersedes what it should
    not; ``on`` runs it anyway, ``off`` leaves updates to the extracted triples (functional predicates)."""
    flag_contradictions: bool = True
    """Flag cross-attribute contradictions (allergic to cats vs owns a cat) with a CONFLICTS_WITH edge."""
    llm_arbiter: bool = False
    """Ask the memory's LLM whether a flagged contradiction is real (it may clear it or turn it into an update)."""
    llm_corrections: bool = True
    """Let the memory's LLM (when there is one) write the corrected successor of a memory that lists several values
    when one of them is corrected ("Not Lily, Lola!"); checked, with the rule rewrite as fallback. Rare: only on such
    corrections."""

    # ---------------------------------------------------------------- lifecycle
    half_life_days: dict[str, float | None] = Field(default_factory=lambda: {
        "observation": 30.0, "emotion": 3.0, "fact": 180.0, "preference": 180.0, "plan": 60.0,
        "reflection": 90.0, "knowledge": None, "instruction": None,
    })
    """Strength half-life per memory type, measured from the last access; ``None`` never decays."""
    default_half_life_days: float = Field(default=60.0, gt=0.0)
    frequency_boost: float = Field(default=0.5, ge=0.0)
    """Each e-fold of accesses stretches the half-life by this factor: often-used memories fade slower."""
    importance_boost: float = Field(default=1.0, ge=0.0)
    """Importance 1.0 stretches the half-life by ``1 + importance_boost``."""
    archive_below: float = Field(default=0.1, ge=0.0)
    """Strength under which the janitor archives a memory as faded."""
    default_ttl_seconds: dict[str, float] = Field(default_factory=lambda: {"emotion": 3 * _DAY})
    """TTL applied per type when the memory has none (a stated TTL always wins)."""
    archive_retention_days: float | None = Field(default=90.0, ge=0.0)
    """Archived memories are purged (hard) after this long; ``None`` keeps them forever."""
    quarantine_retention_days: float | None = Field(default=90.0, ge=0.0)
    """Quarantined items nobody reviewed are purged after this long; ``None`` keeps them."""

    # ---------------------------------------------------------------- forgetting
    forget_min_similarity: float = Field(default=0.35, ge=-1.0, le=1.0)
    """Dense similarity a memory needs to be proposed by a forget-by-meaning query without an entity/topic match."""
    forget_max_items: int = Field(default=200, ge=1)
    compact_on_hard_forget: bool = True
    """Compact FAISS after a hard forget so the vectors are gone from memory and disk, not just unlisted."""

    @model_validator(mode="after")
    def _ordered(self) -> GovernancePolicy:
        if self.low_confidence_threshold > self.store_threshold:
            raise ValueError("low_confidence_threshold must be <= store_threshold")
        if self.review_threshold > self.near_duplicate_threshold:
            raise ValueError("review_threshold must be <= near_duplicate_threshold")
        if self.borderline_threshold > self.injection_threshold:
            raise ValueError("borderline_threshold must be <= injection_threshold")
        return self

    def trust(self, origin: str | None) -> float:
        return self.source_trust.get(origin or "user", self.unknown_source_trust)

    def may_update(self, origin: str | None) -> bool:
        """Whether a memory of this origin may replace a current value on its own (see ``update_min_trust``)."""
        return self.trust(origin) >= self.update_min_trust

    def strategy_for(self, predicate: str) -> ConflictStrategy:
        return self.conflict_strategy_by_predicate.get(predicate, self.conflict_strategy)

    def half_life_seconds(self, mtype: str) -> float | None:
        days = self.half_life_days.get(mtype, self.default_half_life_days)
        return None if days is None else days * _DAY
