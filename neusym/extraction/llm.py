"""``LLMExtractor``: one prompt, validated JSON, bounded retries, and the rules as a safety net.

An LLM understands paraphrase, coreference and implicit facts that no regex will, but it also returns prose, broken
JSON or nothing at all, and providers time out. So the model's output is validated and normalised (snake_case
predicates from the shared vocabulary, clamped scores, no empty memories), malformed replies are re-asked with the
error a bounded number of times, and when that fails the rule extractor answers instead. Ingestion never fails
because a model misbehaved; the fallback is visible on every result as ``extractor="rules-fallback"``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from neusym.errors import ExtractionError, InvalidInputError
from neusym.extraction.base import Extraction, Extractor, FactDetail, _value_span, entity_key
from neusym.extraction.dates import resolve_now
from neusym.extraction.prompts import PROMPT_VERSION, SYSTEM_PROMPT, LLMMemory, LLMResponse, build_user_prompt
from neusym.extraction.rules import RuleExtractor
from neusym.extraction.vocabulary import VALUE_PREDICATES, is_functional, normalise_predicate, predicate_tag
from neusym.llm import ChatModel, as_chat_model, complete_json
from neusym.record import MemoryType, Triple

__all__ = ["LLMExtractor"]

log = logging.getLogger(__name__)

_DEFAULT_FALLBACK: Extractor = RuleExtractor()
_SELF_WORDS = frozenset({"i", "me", "my", "myself", "user", "the user", "speaker", "the speaker", "mine"})
_TYPE_ALIASES = {
    "preferences": MemoryType.PREFERENCE,
    "like": MemoryType.PREFERENCE,
    "event": MemoryType.OBSERVATION,
    "episode": MemoryType.OBSERVATION,
    "episodic": MemoryType.OBSERVATION,
    "goal": MemoryType.PLAN,
    "todo": MemoryType.PLAN,
    "task": MemoryType.PLAN,
    "reminder": MemoryType.PLAN,
    "intention": MemoryType.PLAN,
    "rule": MemoryType.INSTRUCTION,
    "directive": MemoryType.INSTRUCTION,
    "feeling": MemoryType.EMOTION,
    "mood": MemoryType.EMOTION,
    "semantic": MemoryType.KNOWLEDGE,
    "world_knowledge": MemoryType.KNOWLEDGE,
    "personal_fact": MemoryType.FACT,
    "profile": MemoryType.FACT,
}
_MAX_ENTITIES = 32
_MAX_TRIPLES = 32


def _clamp(value: float, default: float) -> float:
    if math.isnan(value) or math.isinf(value):
        return default
    return max(0.0, min(1.0, value))


def _memory_type(raw: str) -> MemoryType:
    key = raw.strip().lower().replace(" ", "_").replace("-", "_")
    try:
        return MemoryType(key)
    except ValueError:
        return _TYPE_ALIASES.get(key, MemoryType.OBSERVATION)


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


class LLMExtractor:
    """Extraction by a chat model, validated, retried, and falling back to rules.

    Args:
        model: anything :func:`neusym.llm.as_chat_model` accepts: a LangChain chat model, a LlamaIndex LLM, a
            ``ChatModel``, a ``str -> str`` callable, or a :class:`~neusym.llm.ScriptedChatModel`.
        fallback: extractor used when the model fails after its retries (default: a :class:`RuleExtractor`).
            ``None`` makes such failures raise :class:`~neusym.errors.ExtractionError` instead.
        retries: how many times a malformed reply is re-asked (so at most ``retries + 1`` model calls).
        max_context: how many earlier messages are shown to the model for reference resolution.

    Raises:
        InvalidInputError: ``model`` is ``None`` or not usable as a chat model, or ``retries`` is negative.
    """

    name = "llm"

    def __init__(
        self,
        model: Any,
        fallback: Extractor | None = _DEFAULT_FALLBACK,
        retries: int = 2,
        *,
        max_context: int = 5,
    ) -> None:
        chat = as_chat_model(model)
        if chat is None:
            raise InvalidInputError(
                "LLMExtractor needs a model (LangChain chat model, LlamaIndex LLM or callable)"
            )
        if not isinstance(retries, int) or retries < 0:
            raise InvalidInputError(f"retries must be a non-negative int, got {retries!r}")
        self.model: ChatModel = chat
        self.fallback = fallback
        self.retries = retries
        self.max_context = max_context
        self.last_error: str | None = None
        """Why the last call fell back to the rules (``None`` when it did not): for logs and audits."""

    def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        now: datetime | None = None,
        context: Sequence[str] | None = None,
    ) -> list[Extraction]:
        """Candidate memories in ``text``; never raises for model failures while a fallback is set.

        Raises:
            InvalidInputError: ``text`` is not a string.
            ExtractionError: the model failed and ``fallback`` is ``None``.
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        moment = resolve_now(now)
        who = speaker.strip() if speaker and speaker.strip() else None
        user = build_user_prompt(
            text, speaker=who, now=moment, context=list(context or []), max_context=self.max_context
        )
        self.last_error = None
        try:
            reply = complete_json(self.model, SYSTEM_PROMPT, user, LLMResponse, retries=self.retries)
            return self._convert(reply, who)
        except (ExtractionError, ValueError, TypeError) as err:
            self.last_error = f"{type(err).__name__}: {err}"
            if self.fallback is None:
                raise ExtractionError(f"LLM extraction failed: {err}") from err
            log.warning("LLM extraction failed, falling back to %s: %s", type(self.fallback).__name__, err)
        results = self.fallback.extract(text, speaker=speaker, now=moment, context=list(context or []))
        return [r.model_copy(update={"extractor": "rules-fallback"}) for r in results]

    # ------------------------------------------------------------------ conversion
    def _convert(self, reply: LLMResponse, speaker: str | None) -> list[Extraction]:
        out: list[Extraction] = []
        for memory in reply.memories:
            ext = self._memory(memory, speaker)
            if ext is not None:
                out.append(ext)
        return out

    @staticmethod
    def _party(value: str, speaker: str | None) -> str:
        return (speaker or "user") if value.strip().lower() in _SELF_WORDS else value.strip()

    def _memory(self, memory: LLMMemory, speaker: str | None) -> Extraction | None:
        content = memory.content.strip()
        if not content:
            return None
        confidence = _clamp(memory.confidence, 0.8)
        triples: list[Triple] = []
        facts: list[FactDetail] = []
        seen: set[tuple[str, str, str, bool]] = set()
        for t in memory.triples[:_MAX_TRIPLES]:
            predicate = normalise_predicate(t.predicate)
            subject, obj = self._party(t.subject, speaker), self._party(t.object, speaker)
            if not predicate or not subject or not obj:
                continue
            key = (entity_key(subject), predicate, entity_key(obj), t.polarity)
            if key in seen:
                continue
            seen.add(key)
            tconf = _clamp(t.confidence, confidence) if t.confidence is not None else confidence
            polarity = (
                t.polarity and not t.retracts
            )  # a retracted value is withdrawn, whatever the model said
            triples.append(
                Triple(subject=subject, predicate=predicate, object=obj, polarity=polarity, confidence=tconf)
            )
            facts.append(
                FactDetail(
                    predicate=predicate,
                    functional=is_functional(predicate),
                    aspect=t.aspect,  # type: ignore[arg-type]  # validated against ASPECTS in LLMTriple
                    negated=not polarity,
                    retracts=t.retracts,
                    value_span=_value_span(content, obj),
                    source="llm",
                )
            )
        entities: dict[str, str] = {}
        # the same entity shape as the rules: named things, then what the facts link (short objects)
        names = [
            *memory.entities,
            *(t.subject for t in triples),
            *(
                t.object
                for t in triples
                if len(t.object.split()) <= 4 and t.predicate not in VALUE_PREDICATES
            ),
        ]
        for name in names:
            ekey = entity_key(name)
            if (
                ekey
                and ekey not in entities
                and ekey not in {"user", "assistant"}
                and len(entities) < _MAX_ENTITIES
            ):
                entities[ekey] = name.strip()
        tags = [t.lower() for t in memory.tags if len(t) <= 64]
        tags += [tag for t in triples if (tag := predicate_tag(t.predicate))]
        tags.append(PROMPT_VERSION)
        signals = [s.strip().lower().replace(" ", "_") for s in memory.intent_signals if len(s) <= 64]
        return Extraction(
            content=content,
            type=_memory_type(memory.type),
            entities=list(entities.values()),
            triples=triples,
            tags=list(dict.fromkeys(tags)),
            confidence=confidence,
            importance=_clamp(memory.importance, 0.5),
            valid_from=_aware(memory.valid_from),
            expires_in=memory.expires_in,
            plan_due=_aware(memory.plan_due),
            speaker=speaker,
            intent_signals=list(dict.fromkeys(signals)),
            extractor=self.name,
            facts=facts,
            aspect=next((f.aspect for f in facts if not f.retracts), None),
        )
