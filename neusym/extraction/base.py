"""The extraction contract: what an extractor returns for one piece of text, and how entities are keyed.

Extraction is the only place where free text becomes structure (type, entities, triples, times), so the result is
deliberately richer than a :class:`~neusym.record.MemoryRecord` needs: ``intent_signals`` and ``extractor`` let
admission control and audits see *why* a memory was typed the way it was, and whether an LLM or the rules did it.
"""

from __future__ import annotations

import functools
import unicodedata
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from neusym.extraction.vocabulary import is_functional
from neusym.language import regex as rx
from neusym.record import MemoryType, Triple

__all__ = ["ASPECTS", "Aspect", "Extraction", "Extractor", "FactDetail", "INTENT_SIGNALS", "entity_key"]

INTENT_SIGNALS: frozenset[str] = frozenset(
    {
        "explicit_remember",  # "please remember ...", "note that ...", "FYI"
        "reminder",  # "remind me to ...", "remember to ..."
        "instruction",  # a standing rule for the agent
        "transient_emotion",  # a mood, not a trait: decays fast
        "hypothetical",  # "if I were ...", "I wish ..." (no triples are asserted)
        "question",  # a question is not a statement (no triples are asserted)
        "negation",  # at least one negated triple or a negated statement
        "third_party",  # about someone other than the speaker
        "hedge",  # "I think", "maybe", "probably"
        "past",  # "used to", "no longer": a state that ended
        "aspiration",  # "I want to", "I hope to": a wish rather than a commitment
        "obligation",  # "I have to", "I need to"
        "temporary",  # "for now", "temporarily", or a TTL was stated
        "pronoun_resolved",  # a he/she subject was resolved heuristically
        "update_marker",  # "now", "no longer", "anymore", "switched", "new", "changed": the statement marks a change
        "correction",  # "actually ...", "X, not Y": the speaker corrects an earlier value
        "habitual_past",  # "used to", "would always": a past habit, not a present state
    }
)
"""The signals the built-in extractors emit. Others may add their own; consumers must ignore unknown ones."""


Aspect = Literal["ongoing", "past_event", "habitual_past", "ended", "future"]
"""When a fact holds, as the statement itself says it:

- ``ongoing``: true now ("lives in Lisbon", "is vegetarian now", "moved to Lisbon" -> lives_in, ongoing);
- ``past_event``: something that happened ("attended a conference", "went to Rome last May");
- ``habitual_past``: a past habit ("used to play drums"): evidence about the past, never a replacement of a
  present value;
- ``ended``: a state that stopped ("no longer works at X", "stopped eating meat", "my ex-husband");
- ``future``: planned or expected, not yet true.
"""
ASPECTS: tuple[str, ...] = ("ongoing", "past_event", "habitual_past", "ended", "future")


class FactDetail(BaseModel):
    """What governance needs about one triple beyond subject-predicate-object.

    ``Extraction.facts[i]`` describes ``Extraction.triples[i]`` (same order, same length; the extraction fills
    defaults for triples a custom extractor left undescribed).
    """

    model_config = ConfigDict(frozen=True)

    predicate: str
    functional: bool = False
    """One value at a time for the subject (see :func:`neusym.extraction.vocabulary.is_functional`)."""
    aspect: Aspect = "ongoing"
    negated: bool = False
    """The statement denies the fact (``polarity=False`` on the triple)."""
    retracts: bool = False
    """A correction withdraws this value: "I live in Berlin, not Munich" retracts ``lives_in Munich``. Governance
    should end that value (also for multi-valued predicates) rather than store a second one."""
    value_span: tuple[int, int] | None = None
    """``content[start:end]`` is the object as written (for masking the value when comparing memories)."""
    verb: str | None = None
    """The verb lemma the fact was read from ("relocate"), when there was one."""
    source: str = "rules"
    """``rules`` (the rule table), ``clause`` (the shallow clause reader), ``parser``, ``semantic`` or ``llm``."""


def _value_span(content: str, value: str) -> tuple[int, int] | None:
    if not value:
        return None
    at = content.find(value)
    if at < 0:
        at = content.lower().find(value.lower())  # lower() keeps lengths where casefold() may not ("ß")
    return (at, at + len(value)) if at >= 0 else None


def default_fact(triple: Triple, content: str) -> FactDetail:
    """The description of a triple nothing else was said about: ongoing, functional per the vocabulary."""
    return FactDetail(
        predicate=triple.predicate,
        functional=is_functional(triple.predicate),
        negated=not triple.polarity,
        value_span=_value_span(content, triple.object),
    )


class Extraction(BaseModel):
    """One candidate memory found in a text, before admission control decides whether and how to store it."""

    model_config = ConfigDict(extra="ignore")

    content: str = Field(min_length=1)
    type: MemoryType = MemoryType.OBSERVATION
    entities: list[str] = Field(default_factory=list)
    triples: list[Triple] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    confidence: float = Field(default=0.7, ge=0.0, le=1.0)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    valid_from: datetime | None = None
    expires_in: float | None = Field(default=None, gt=0.0)
    plan_due: datetime | None = None
    speaker: str | None = None
    intent_signals: list[str] = Field(default_factory=list)
    extractor: str = "rules"
    """Which path produced this: ``rules``, ``llm`` or ``rules-fallback`` (the LLM failed; kept for audits)."""
    facts: list[FactDetail] = Field(default_factory=list)
    """One :class:`FactDetail` per triple, in the same order (filled with defaults when not given)."""
    aspect: Aspect | None = None
    """The statement's own time frame, when it says one ("used to" -> ``habitual_past``); ``None`` when it states
    nothing with a time frame (no facts)."""

    @model_validator(mode="after")
    def _align_facts(self) -> Extraction:
        # Every consumer may index facts by triple position, whoever built the extraction (a custom extractor,
        # the facade merging several): describe what was not described, drop what describes nothing.
        if len(self.facts) != len(self.triples) or any(
            f.predicate != t.predicate for f, t in zip(self.facts, self.triples, strict=False)
        ):
            given = {(f.predicate, i): f for i, f in enumerate(self.facts)}
            self.facts = [
                given.get((t.predicate, i)) or default_fact(t, self.content)
                for i, t in enumerate(self.triples)
            ]
        return self

    @field_validator("valid_from", "plan_due")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        # Naive datetimes are read as UTC, matching record.as_epoch, so comparisons never mix naive and aware.
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


@runtime_checkable
class Extractor(Protocol):
    """Turns one message (or one document chunk) into 0..n candidate memories.

    ``speaker`` names who said the text, so first-person facts get a real subject; ``now`` anchors relative dates
    ("tomorrow") and must be passed when replaying history; ``context`` holds a few preceding messages that may be
    used to resolve references but must not be extracted from.
    """

    def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        now: datetime | None = None,
        context: list[str] | None = None,
    ) -> list[Extraction]: ...


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "`": "'"})
_KEEP_WHOLE = rx.compile(r"^(?:[^\s@]+@[^\s@]+\.[^\s@]+|[a-z][a-z0-9+.-]*://\S+|www\.\S+)$")
_POSSESSIVE = rx.compile(r"'s?$")
_ACRONYM = rx.compile(r"\b(?:\w\.){2,}(?!\w)")
_DECIMAL_DOT = rx.compile(r"(?<=\d)\.(?=\d)")
_SEPARATORS = rx.compile(r"[\s\-_/\\|.,;:!?\"'()\[\]{}<>\u2013\u2014\u2026\u00b7*~^=]+")
_ARTICLES = frozenset({"the", "a", "an"})


def _fold_latin_marks(text: str) -> str:
    # Only marks on ASCII base letters are dropped ("José" -> "jose"); marks that carry meaning in other scripts
    # (Devanagari vowel signs, Japanese dakuten) stay, so those names do not collapse into each other.
    if text.isascii():
        return text
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def entity_key(name: str) -> str:
    """The normalised key under which an entity is stored and matched in the graph.

    Two mentions of the same thing must meet on one node however they were typed: ``"The Beatles"``,
    ``"beatles"``, ``"Caroline's"`` / ``"Caroline"``, ``"José"`` / ``"Jose"``, ``"U.S.A."`` / ``"USA"``,
    ``"New-York"`` / ``"new york"``. Emails and URLs are kept whole (casefolded) because their punctuation is
    identity. ``+``, ``#``, ``&``, ``@`` and ``%`` are kept ("C++" and "C" must differ). Returns ``""`` when nothing
    meaningful is left; callers should skip such entities.
    """
    if not isinstance(name, str):
        return ""
    return (
        _entity_key(name) if len(name) <= 256 else _entity_key.__wrapped__(name)
    )  # bound the cache's memory


@functools.lru_cache(maxsize=1 << 16)  # pure, and called for every name of every memory on the write path
def _entity_key(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).translate(_QUOTES).replace("\ue000", "").strip()
    if not text:
        return ""
    folded = _fold_latin_marks(text).casefold()
    if _KEEP_WHOLE.match(folded):
        return folded.rstrip(".,;:!?)")
    folded = _POSSESSIVE.sub("", folded)
    folded = _ACRONYM.sub(lambda m: m.group(0).replace(".", ""), folded)
    folded = _DECIMAL_DOT.sub("\ue000", folded)
    folded = folded.replace("'", "")
    words = _SEPARATORS.sub(" ", folded).replace("\ue000", ".").split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)
