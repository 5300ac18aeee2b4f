"""``RuleExtractor``: LLM-free extraction that is fast enough to run on every message.

It is the default extractor and the fallback of the LLM one, so it has to be predictable (the same text always
gives the same memories), cheap (precompiled regexes gated by substring triggers; no tagger) and conservative:
questions and hypotheticals assert no triples, hedges lower confidence, and anything it cannot type stays a plain
observation for admission control to judge.

A text is split into sentences; each sentence is typed and mined for triples; sentences are then grouped into
memories. Directive sentences (instructions, plans with a due date, anything with an expiry) become memories of
their own because they carry their own type, due date or TTL; other sentences are merged into one memory (a chat
turn stays one memory, which is also what turn-level benchmarks score), and follow-ups ("It was so powerful.",
"Please remember that.") stay attached to what they refer to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from neusym.errors import InvalidInputError
from neusym.extraction import _cues as cue
from neusym.extraction._clauses import VERB_LEMMAS, ClauseReader, clause_triples, read_sentence
from neusym.extraction._discourse import apply_corrections, markers_of, near_not_home, strip_markers
from neusym.extraction._grammar import Ctx, RawTriple
from neusym.extraction._lexicon import NEGATIVE_FIND, POSITIVE_FIND, lemma
from neusym.extraction._rules import run_rules
from neusym.extraction._text import is_chitchat, normalise, protect, restore, sentence_spans
from neusym.extraction.base import Aspect, Extraction, FactDetail, _value_span, entity_key
from neusym.extraction.dates import DateMention, find_dates, find_ttl, resolve_now
from neusym.extraction.entities import Mention, find_mentions
from neusym.extraction.semantic import PredicateMapper
from neusym.extraction.vocabulary import VALUE_PREDICATES, is_functional, predicate_tag
from neusym.language import regex as rx
from neusym.record import MemoryType, Triple

__all__ = ["RuleExtractor"]

_PRIORITY = (
    MemoryType.INSTRUCTION,
    MemoryType.PLAN,
    MemoryType.FACT,
    MemoryType.PREFERENCE,
    MemoryType.EMOTION,
    MemoryType.KNOWLEDGE,
    MemoryType.OBSERVATION,
)
_KIND_TYPE = {
    "plan": MemoryType.PLAN,
    "obligation": MemoryType.PLAN,
    "aspiration": MemoryType.PLAN,
    "fact": MemoryType.FACT,
    "routine": MemoryType.FACT,
    "preference": MemoryType.PREFERENCE,
    "emotion": MemoryType.EMOTION,
    "knowledge": MemoryType.KNOWLEDGE,
    "event": MemoryType.OBSERVATION,
}
_IMPORTANCE = {
    MemoryType.INSTRUCTION: 0.8,
    MemoryType.PLAN: 0.65,
    MemoryType.FACT: 0.6,
    MemoryType.PREFERENCE: 0.6,
    MemoryType.KNOWLEDGE: 0.5,
    MemoryType.OBSERVATION: 0.4,
    MemoryType.EMOTION: 0.3,
    MemoryType.REFLECTION: 0.5,
}
_SAFETY = frozenset({"allergic_to", "intolerant_to", "avoids", "diet"})
_IDENTITY = frozenset({"name", "birthday", "phone", "email", "married_to", "lives_in", "works_at"})
_ENTITY_KINDS = frozenset({"name", "place", "email", "url", "handle", "phone", "date", "amount", "title"})
_SELF_NAMES = frozenset({"user", "assistant"})


@dataclass(frozen=True, slots=True)
class _Detail:
    aspect: Aspect
    retracts: bool
    verb: str
    source: str


@dataclass(slots=True)
class _Sentence:
    text: str
    start: int
    end: int
    type: MemoryType = MemoryType.OBSERVATION
    triples: list[Triple] = field(default_factory=list)
    details: list[_Detail] = field(default_factory=list)
    aspect: Aspect | None = None
    mentions: list[Mention] = field(default_factory=list)
    concepts: list[str] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)
    confidence: float = 0.6
    importance: float = 0.4
    valid_from: datetime | None = None
    plan_due: datetime | None = None
    ttl: float | None = None
    directive: bool = False  # gets a memory of its own
    strong: bool = False  # states something on its own (vs. a follow-up like "It was great.")
    chitchat: bool = False
    tags: list[str] = field(default_factory=list)


def _check_encodable(text: str) -> None:
    # A lone surrogate cannot be stored (or even put in a pydantic model); refuse it like record.validate_text does.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InvalidInputError(f"text contains invalid Unicode at position {err.start}") from err


_THIRD_PARTY = 0.9  # second-hand facts are less certain than what people say about themselves
_PRONOUN = 0.8  # "she" resolved by recency is a guess


def _triple_factor(t: RawTriple, all_triples: list[RawTriple]) -> float:
    """Per-triple discount for what the sentence-level confidence has not already discounted."""
    factor = 1.0
    if t.third_party and not all(x.third_party for x in all_triples):
        factor *= _THIRD_PARTY
    if t.pronoun and not all(x.pronoun for x in all_triples):
        factor *= _PRONOUN
    return factor


_FUTURE_KINDS = frozenset({"plan", "aspiration", "obligation"})
_HABITUAL = ("used to", "would always", "would often", "would usually")


def _aspect_of(t: RawTriple, lower: str) -> Aspect:
    if t.aspect in {"ongoing", "past_event", "habitual_past", "ended", "future"}:
        return t.aspect  # type: ignore[return-value]
    if t.kind in _FUTURE_KINDS:
        return "future"
    if t.past:
        return "habitual_past" if any(h in lower for h in _HABITUAL) else "ended"
    if t.kind == "event":
        return "past_event"
    return "ongoing"


_PP_TAIL = rx.compile(
    r"\s+(?:in|at|on|near|from|for|with|called|named|during|since|by)\s+\S.*$", re.IGNORECASE
)
_TRIMMED = frozenset(
    {
        "plays",
        "studies",
        "owns",
        "bought",
        "is_a",
        "uses",
        "has",
        "attended",
        "visited",
        "went_to",
        "member_of",
        "job_title",
    }
)


_POSS_LEAD = rx.compile(r"^(?:his|her|their|its|your)\s+", re.IGNORECASE)
_CLAUSE_TAIL = rx.compile(
    r"\s+(?:what|that|which|who|whom|when|where|while|because|like|including|such\s+as)\b.*$", re.IGNORECASE
)
_TASTES = frozenset({"likes", "dislikes", "prefers"})


def _bad_item(obj: str) -> bool:
    """A list item of a taste rule that is really the next clause ("finds it challenging") or a filler word."""
    words = obj.lower().split()
    first = words[0]
    if len(words) == 1 and (first in POSITIVE_FIND or first in NEGATIVE_FIND or first in _FILLER):
        return True
    if first.endswith("s") and lemma(first) in VERB_LEMMAS and lemma(first) != first and len(words) > 1:
        return True  # "admires top players", "finds it challenging"
    return first.endswith("ing") and len(words) > 1 and words[1] in {"it", "them", "him", "her", "me", "us"}


_TRAIL_ADV = frozenset(
    {
        "nonstop",
        "together",
        "again",
        "now",
        "too",
        "recently",
        "lately",
        "often",
        "daily",
        "regularly",
        "sometimes",
        "anymore",
        "still",
        "already",
        "online",
        "remotely",
        "such",
    }
)
_FILLER = frozenset({"especially", "particularly", "mostly", "also", "too", "more", "most", "much", "lot"})


def _trim(triples: list[RawTriple]) -> list[RawTriple]:
    """Tidy rule objects: cut prepositional tails ("violin in the school orchestra" -> "violin": the tail is
    another fact, read by the clause reader) and relative clauses, drop possessive pronouns, and drop taste
    list items that are really the next clause ("loves X and finds it challenging")."""
    out: list[RawTriple] = []
    dropped: set[tuple[str, str]] = set()
    for t in triples:
        if (t.subject, t.predicate) in dropped and t.predicate in _TASTES:
            continue  # after "loves X and finds peace and Y", Y belongs to "finds", not to "loves"
        if (
            is_functional(t.predicate)
            and t.polarity
            and any(u.subject == t.subject and u.predicate == t.predicate and u.polarity for u in out)
        ):
            continue  # "my favourite food is sushi, especially salmon nigiri": one value at a time
        if " " in t.object and t.predicate != "plans_to":
            obj = _POSS_LEAD.sub("", t.object)
            if t.predicate in _TRIMMED:
                obj = _PP_TAIL.sub("", obj) or obj
            obj = _CLAUSE_TAIL.sub("", obj) or obj
            words = obj.split()
            while len(words) > 1 and (
                words[-1].lower() in _TRAIL_ADV
                or words[-1].lower().endswith("ly")
                or len(words) > 2
                and words[-1].lower().endswith("ed")
            ):
                words.pop()  # "Cyberpunk 2077 nonstop" -> "Cyberpunk 2077", "a workshop focused" -> "a workshop"
            t.object = " ".join(words)
        if t.predicate in _TASTES and _bad_item(t.object) or t.object.lower().startswith("not "):
            dropped.add((t.subject, t.predicate))
            continue  # "French, not Spanish": the corrections pass retracts Spanish
        out.append(t)
    return out


def _dedupe_is_a(triples: list[RawTriple]) -> list[RawTriple]:
    said = {(t.subject.casefold(), t.object.casefold()) for t in triples if t.predicate != "is_a"}
    return [
        t for t in triples if t.predicate != "is_a" or (t.subject.casefold(), t.object.casefold()) not in said
    ]


def _covered(t: RawTriple, found: list[RawTriple]) -> bool:
    """A clause triple repeats a rule triple when both link the same subject to overlapping objects."""
    subj, obj = t.subject.casefold(), t.object.casefold()
    for u in found:
        if u.subject.casefold() != subj:
            continue
        if u.predicate == "plans_to" and t.predicate != "plans_to":
            continue  # "wants to visit the Cliffs": the plan is a verb phrase, what it is about is a fact of its own
        other = u.object.casefold()
        if (
            obj == other
            or obj in other
            or other in obj
            or u.predicate == t.predicate
            and (is_functional(t.predicate) or t.predicate == "is_a")
        ):
            return True
    return False


def _planned(t: RawTriple, found: list[RawTriple]) -> bool:
    """A clause triple read inside a plan's verb phrase ("plans_to: moving to Helsinki in August")."""
    subj, obj = t.subject.casefold(), t.object.casefold()
    return any(
        u.predicate == "plans_to" and u.subject.casefold() == subj and obj in u.object.casefold()
        for u in found
    )


def _clamp(x: float) -> float:
    return max(0.0, min(1.0, round(x, 3)))


class RuleExtractor:
    """Regex and word-list extraction of typed memories, entities and triples; no model, no network.

    Args:
        split: group sentences into several memories when their types differ in ways that matter (instructions,
            plans, expiries). ``False`` always returns at most one memory per text.
        max_chars: only this many characters are analysed (the whole text is still the content of the memory).
            Memories are statements, not documents; this bounds the cost of a pasted document.
        clauses: run the shallow clause reader after the rule table (subject-verb-object facts for the long tail
            of phrasings, concept noun phrases as entities). ``False`` gives the rule table alone.
        predicate_mapper: maps verbs the lexicon does not know onto the vocabulary (e.g.
            :class:`~neusym.extraction.semantic.SemanticPredicateMapper`); ``None`` keeps their open lemma.
        clause_reader: replaces the shallow clause reader (e.g. a dependency parser's, see
            :mod:`neusym.extraction.parser`); it must return the same :class:`Clause` records.
    """

    name = "rules"

    def __init__(
        self,
        *,
        split: bool = True,
        max_chars: int = 20_000,
        clauses: bool = True,
        predicate_mapper: PredicateMapper | None = None,
        clause_reader: ClauseReader | None = None,
    ) -> None:
        self.split = split
        self.max_chars = max_chars
        self.clauses = clauses
        self.predicate_mapper = predicate_mapper
        self.clause_reader = clause_reader

    # ------------------------------------------------------------------ public API
    def extract(
        self,
        text: str,
        *,
        speaker: str | None = None,
        now: datetime | None = None,
        context: Sequence[str] | None = None,
    ) -> list[Extraction]:
        """Candidate memories in ``text`` (see :class:`~neusym.extraction.base.Extractor`).

        Returns ``[]`` for empty text and pure chit-chat ("thanks!", "lol").

        Raises:
            InvalidInputError: ``text`` is not a string or contains a lone surrogate (invalid Unicode).
        """
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        if not text.strip():
            return []
        _check_encodable(text)
        moment = resolve_now(now)
        me = speaker.strip() if speaker and speaker.strip() else "user"
        long_text = len(text) > self.max_chars
        protected = protect(text[: self.max_chars])
        known = {m.lower() for m in cue.MIDCAP.findall(protected)} | {me.lower()}
        referent = self._context_referent(context, me, known)
        sentences: list[_Sentence] = []
        for start, end in sentence_spans(protected):
            sent = self._analyse(protected[start:end], start, end, me, moment, referent, known)
            sentences.append(sent)
            for mention in sent.mentions:
                if mention.kind == "name" and entity_key(mention.text) != entity_key(me):
                    referent = mention.text
        groups = self._group(sentences, split=self.split and not long_text)
        out = [
            self._build(g, text, speaker, me, whole=long_text or len(groups) == 1 and g == sentences)
            for g in groups
        ]
        return [x for x in out if x is not None]

    def entities(self, text: str, *, context: Sequence[str] | None = None) -> list[str]:
        """Entity names mentioned in ``text`` (for matching a query against the graph), no typing or triples."""
        if not isinstance(text, str) or not text.strip():
            return []
        protected = protect(text[: self.max_chars])
        known = {m.lower() for m in cue.MIDCAP.findall(protected)}
        for c in context or ():
            known |= {m.lower() for m in cue.MIDCAP.findall(c)}
        names: dict[str, str] = {}
        for start, end in sentence_spans(protected):
            for mention in find_mentions(normalise(protected[start:end]), known):
                key = entity_key(mention.text)
                if key and key not in names:
                    names[key] = restore(mention.text)
        return list(names.values())

    # ------------------------------------------------------------------ per sentence
    @staticmethod
    def _context_referent(context: Sequence[str] | None, me: str, known: set[str]) -> str | None:
        for line in reversed(list(context or ())[-3:]):
            if not isinstance(line, str):
                continue
            known |= {m.lower() for m in cue.MIDCAP.findall(line)}
            names = [
                m.text for m in find_mentions(normalise(protect(line[:2000])), known) if m.kind == "name"
            ]
            names = [n for n in names if entity_key(n) != entity_key(me)]
            if names:
                return names[-1]
        return None

    def _analyse(
        self, raw: str, start: int, end: int, me: str, now: datetime, referent: str | None, known: set[str]
    ) -> _Sentence:
        said = normalise(raw)
        norm = strip_markers(said)
        lower = norm.lower()
        words = cue.sentence_words(lower)
        sent = _Sentence(text=restore(raw.strip()), start=start, end=end)
        sent.chitchat = is_chitchat(norm)
        polite = cue.POLITE.match(norm) is not None
        asks = norm.rstrip().endswith("?")
        unpunctuated = norm.rstrip()[-1:].isalnum() and len(norm.split()) <= 15
        question_form = not polite and (asks or unpunctuated) and cue.QUESTION.match(norm) is not None
        question = question_form or (not polite and asks)
        hypothetical = (
            not cue.HYPOTHETICAL_WORDS.isdisjoint(words) and cue.HYPOTHETICAL.search(lower) is not None
        )
        hedge = not cue.HEDGE_WORDS.isdisjoint(words) and cue.HEDGE.search(lower) is not None
        instruction = cue.INSTRUCTION.search(norm) is not None and not question_form
        remember = not cue.REMEMBER_WORDS.isdisjoint(words) and cue.REMEMBER.search(norm) is not None
        reminder = not cue.REMINDER_WORDS.isdisjoint(words) and cue.REMINDER.search(norm) is not None
        # the future hint only steers date resolution, so it is looked for only when a date word is there
        dated = not cue.DATE_WORDS.isdisjoint(words)
        prefer_future = dated and (instruction or reminder or cue.FUTURE_HINT.search(lower) is not None)
        dates = find_dates(norm, now, prefer_future=prefer_future) if dated else []
        today = now.replace(hour=0, minute=0, second=0, microsecond=0)
        future = any(d.direction == "future" or (d.direction == "either" and d.when >= today) for d in dates)
        sent.mentions = find_mentions(norm, known) if not sent.chitchat else []
        my_key = entity_key(me)
        ctx = Ctx(
            me=me,
            sentence=norm,
            lowercase=norm == lower,
            dates=dates,
            referent=referent,
            future=future and prefer_future,
            names=[
                (x.start, x.text) for x in sent.mentions if x.kind == "name" and entity_key(x.text) != my_key
            ],
        )
        raw_triples = _trim(run_rules(norm, words, ctx)) if len(norm) <= 1000 and not sent.chitchat else []
        if self.clauses and raw_triples is not None and not sent.chitchat and not (question or hypothetical):
            clauses, sent.concepts = (self.clause_reader or read_sentence)(norm, ctx)
            extra = clause_triples(clauses, ctx, self.predicate_mapper)
            kept = [t for t in extra if not _covered(t, raw_triples)]
            for t in kept:
                if _planned(t, raw_triples):
                    t.aspect = "future"  # "we're moving to Helsinki in August": not where we live yet
            raw_triples += kept
        if raw_triples:
            raw_triples = near_not_home(norm, apply_corrections(norm, _dedupe_is_a(raw_triples)))
        if question_form or hypothetical:
            raw_triples = []
        sent.ttl = find_ttl(norm, now)
        sent.type = self._type(
            raw_triples,
            norm,
            lower,
            dates,
            sent.mentions,
            question,
            hypothetical,
            instruction,
            reminder,
            remember,
            me != "user",
        )
        sent.signals = self._signals(
            raw_triples, lower, question, hypothetical, hedge, instruction, remember, reminder, sent
        )
        confidence = self._confidence(
            raw_triples, sent.type, question, question_form, hypothetical, hedge, remember
        )
        sent.confidence = confidence
        sent.triples = [
            Triple(
                subject=t.subject,
                predicate=t.predicate,
                object=t.object,
                polarity=t.polarity,
                confidence=_clamp(confidence * t.weight * _triple_factor(t, raw_triples)),
            )
            for t in raw_triples
        ]
        sent.details = [_Detail(_aspect_of(t, lower), t.retracts, t.verb, t.source) for t in raw_triples]
        asserted = [d.aspect for d, t in zip(sent.details, raw_triples, strict=True) if not t.derived]
        if "habitual_past" in asserted:
            sent.aspect = "habitual_past"
        elif asserted:
            sent.aspect = asserted[0]
        for marker in markers_of(said.lower()):
            if marker not in sent.signals:
                sent.signals.append(marker)
        if sent.aspect == "habitual_past":
            sent.signals.append("habitual_past")
        sent.tags = list(dict.fromkeys(tag for t in raw_triples if (tag := predicate_tag(t.predicate))))
        sent.importance = self._importance(
            raw_triples, sent.type, question_form, hypothetical, remember, sent.chitchat
        )
        self._times(sent, dates, now, today)
        sent.directive = not question_form and (
            sent.type == MemoryType.INSTRUCTION
            or sent.ttl is not None
            or (sent.type == MemoryType.PLAN and sent.plan_due is not None)
        )
        sent.strong = not question and (
            bool(raw_triples)
            or sent.directive
            or sent.type != MemoryType.OBSERVATION
            or (not sent.chitchat and len(norm.split()) > 6)
        )
        return sent

    @staticmethod
    def _type(
        triples: list[RawTriple],
        norm: str,
        lower: str,
        dates: list[DateMention],
        mentions: list[Mention],
        question: bool,
        hypothetical: bool,
        instruction: bool,
        reminder: bool,
        remember: bool,
        chat: bool,
    ) -> MemoryType:
        if question or hypothetical:
            return MemoryType.INSTRUCTION if instruction and not question else MemoryType.OBSERVATION
        if instruction:
            return MemoryType.INSTRUCTION
        if reminder:
            return MemoryType.PLAN
        types = {_KIND_TYPE[t.kind] for t in triples}
        for candidate in _PRIORITY:
            if candidate in types:
                return candidate
        if remember:
            return MemoryType.FACT
        if (
            not chat
            and not norm.endswith("!")
            and cue.PERSONAL.search(lower) is None
            and cue.GENERIC_VERB.search(lower) is not None
            and (mentions or any(map(str.isdigit, norm)))
            and all(d.has_year for d in dates)
        ):
            return MemoryType.KNOWLEDGE
        return MemoryType.OBSERVATION

    @staticmethod
    def _signals(
        triples: list[RawTriple],
        lower: str,
        question: bool,
        hypothetical: bool,
        hedge: bool,
        instruction: bool,
        remember: bool,
        reminder: bool,
        sent: _Sentence,
    ) -> list[str]:
        kinds = {t.kind for t in triples}
        flags = {
            "explicit_remember": remember,
            "reminder": reminder,
            "instruction": sent.type == MemoryType.INSTRUCTION,
            "transient_emotion": sent.type == MemoryType.EMOTION or "emotion" in kinds,
            "hypothetical": hypothetical,
            "question": question,
            "negation": any(not t.polarity and not t.derived for t in triples)
            or (not triples and cue.NEGATION.search(lower) is not None),
            "third_party": bool(triples) and all(t.third_party for t in triples),
            "hedge": hedge,
            "past": any(t.past and not t.derived for t in triples),
            "aspiration": "aspiration" in kinds,
            "obligation": "obligation" in kinds,
            "temporary": sent.ttl is not None or cue.TEMPORARY.search(lower) is not None,
            "pronoun_resolved": any(t.pronoun for t in triples),
        }
        return [name for name, on in flags.items() if on]

    @staticmethod
    def _confidence(
        triples: list[RawTriple],
        mtype: MemoryType,
        question: bool,
        question_form: bool,
        hypothetical: bool,
        hedge: bool,
        remember: bool,
    ) -> float:
        if triples:
            base = 0.9
        elif mtype in {MemoryType.INSTRUCTION, MemoryType.PLAN, MemoryType.EMOTION} or remember:
            base = 0.8
        else:
            base = 0.6
        if remember and not (hedge or hypothetical or question_form):
            base = 0.95
        if hedge:
            base *= 0.6
        if triples and all(t.third_party for t in triples):
            base *= _THIRD_PARTY
        if triples and all(t.pronoun for t in triples):
            base *= _PRONOUN
        if hypothetical:
            base = min(base, 0.3)
        if question_form:
            base = min(base, 0.2)
        elif question:
            base *= 0.8
        return _clamp(base)

    @staticmethod
    def _importance(
        triples: list[RawTriple],
        mtype: MemoryType,
        question: bool,
        hypothetical: bool,
        remember: bool,
        chitchat: bool,
    ) -> float:
        if chitchat:
            return 0.05
        if question:
            return 0.15
        if hypothetical:
            return 0.2
        value = _IMPORTANCE.get(mtype, 0.4)
        predicates = {t.predicate for t in triples}
        if predicates & _SAFETY:
            value += 0.25
        if predicates & _IDENTITY:
            value += 0.1
        if remember:
            value += 0.25
        return _clamp(value)

    @staticmethod
    def _times(sent: _Sentence, dates: list[DateMention], now: datetime, today: datetime) -> None:
        if not dates:
            return
        if sent.type == MemoryType.PLAN:
            upcoming = [d for d in dates if d.when >= today]
            sent.plan_due = upcoming[0].when if upcoming else None
            return
        if any(t.predicate in {"birthday", "birth_year"} for t in sent.triples):
            return  # the date is the fact's object, not the time the statement became true
        past = [d for d in dates if d.direction == "past" or d.when <= now]
        sent.valid_from = past[0].when if past else None

    # ------------------------------------------------------------------ grouping
    @staticmethod
    def _group(sentences: list[_Sentence], *, split: bool) -> list[list[_Sentence]]:
        useful = [s for s in sentences if not s.chitchat]
        if not useful:
            return []
        if not split:
            return [useful]
        groups: list[list[_Sentence]] = []
        pending: list[_Sentence] = []
        current_directive = False
        for sent in useful:
            attach = sent.type == MemoryType.EMOTION and not sent.directive or not sent.strong
            marker = (
                "explicit_remember" in sent.signals
                and not sent.triples
                and sent.ttl is None
                and len(sent.text.split()) <= 6
            )
            if groups and (attach or marker):
                groups[-1].append(sent)
            elif not groups and not sent.strong:
                pending.append(sent)
            elif sent.directive or current_directive or not groups:
                groups.append([*pending, sent])
                pending = []
                current_directive = sent.directive
            else:
                groups[-1].append(sent)
        if pending and groups:
            groups[-1].extend(pending)
        elif pending:
            groups.append(pending)
        return groups

    def _build(
        self, group: list[_Sentence], text: str, speaker: str | None, me: str, *, whole: bool
    ) -> Extraction | None:
        informative = [s for s in group if s.strong] or group
        pool = [s for s in informative if s.type != MemoryType.EMOTION] or informative
        mtype = next((t for t in _PRIORITY if any(s.type == t for s in pool)), MemoryType.OBSERVATION)
        primary = [s for s in pool if s.type == mtype]
        core = [s for s in primary if s.triples] or primary
        body = text.strip() if whole else " ".join(s.text for s in group).strip()
        if not body:
            return None
        content = body
        if speaker and speaker.strip() and speaker.strip().casefold() not in _SELF_NAMES:
            prefix = f"{speaker.strip()}:"
            if not body.startswith(prefix):
                content = f"{prefix} {body}"
        triples: dict[tuple[str, str, str, bool], Triple] = {}
        details: dict[tuple[str, str, str, bool], _Detail] = {}
        for s in group:
            for t, d in zip(s.triples, s.details, strict=True):
                key = (t.subject.casefold(), t.predicate, t.object.casefold(), t.polarity)
                if key not in triples:
                    triples[key] = t
                    details[key] = d
        facts = [
            FactDetail(
                predicate=t.predicate,
                functional=is_functional(t.predicate),
                aspect=d.aspect,
                negated=not t.polarity,
                retracts=d.retracts,
                value_span=_value_span(content, t.object),
                verb=d.verb or None,
                source="rules" if d.source == "rule" else d.source,
            )
            for t, d in zip(triples.values(), details.values(), strict=True)
        ]
        aspect = next((s.aspect for s in core if s.aspect), None) or next(
            (s.aspect for s in group if s.aspect), None
        )
        signals = list(dict.fromkeys(sig for s in core for sig in s.signals))
        if any("explicit_remember" in s.signals for s in group) and "explicit_remember" not in signals:
            signals.insert(0, "explicit_remember")
        importance = max(s.importance for s in group)
        if "explicit_remember" in signals:
            importance = max(importance, _clamp(_IMPORTANCE.get(mtype, 0.4) + 0.25))
        ttls = [s.ttl for s in group if s.ttl is not None]
        return Extraction(
            content=content,
            type=mtype,
            entities=self._entities(group, list(triples.values()), me),
            triples=list(triples.values()),
            tags=list(dict.fromkeys(tag for s in group for tag in s.tags)),
            confidence=min(s.confidence for s in core)
            if core[0].triples
            else max(s.confidence for s in core),
            importance=importance,
            valid_from=next((s.valid_from for s in [*core, *group] if s.valid_from and s.strong), None),
            expires_in=min(ttls) if ttls else None,
            plan_due=next((s.plan_due for s in group if s.plan_due and s.type == MemoryType.PLAN), None),
            speaker=speaker.strip() if speaker and speaker.strip() else None,
            intent_signals=signals,
            extractor=self.name,
            facts=facts,
            aspect=aspect,
        )

    @staticmethod
    def _entities(group: list[_Sentence], triples: list[Triple], me: str) -> list[str]:
        found: dict[str, str] = {}

        own = f"{me.casefold()}'s "

        def add(name: str) -> None:
            key = entity_key(name)
            if key and key not in found and key not in _SELF_NAMES and not name.casefold().startswith(own):
                found[key] = name

        for t in triples:
            if "'s " in t.subject:
                add(t.subject.split("'s ", 1)[0])
            if t.subject != me or me not in _SELF_NAMES:
                add(t.subject)
        for s in group:
            for m in s.mentions:
                if m.kind in _ENTITY_KINDS:
                    add(restore(m.text))
        for t in triples:
            if t.predicate not in VALUE_PREDICATES and len(t.object.split()) <= 4:
                add(t.object)
        for s in group:
            for concept in s.concepts:
                add(concept)
        return list(found.values())
