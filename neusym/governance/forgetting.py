"""Forgetting: by id, by scope and by meaning; soft (archive) or hard (purge from every store).

A hard forget has to reach every copy NeuSym keeps, not just the graph node: the FAISS vector (tombstoned slots
still hold the vector until compaction), the BM25 postings (positions are retired, not erased, and every earlier
version of an edited memory left postings behind), the embedding cache (keyed by the text), and the audit log
(edit entries keep "before" values for rollback). The audit keeps the *event* and the ids, never the content.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from neusym.embeddings.cache import CachedEmbedder
from neusym.extraction.vocabulary import topic_predicates
from neusym.governance.policy import GovernancePolicy
from neusym.governance.topics import (
    ROLES,
    TopicSense,
    fold,
    introduced_names,
    language_of,
    read_topic,
    role_names,
)
from neusym.governance.update_lexicon import mentions
from neusym.language import regex as rx
from neusym.record import MemoryRecord, Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.pipeline import query_entity_uids
from neusym.symbolic.governance_store import GovernanceQueries
from neusym.symbolic.staging import forget_staged
from neusym.symbolic.store import SymbolicStore

__all__ = ["ForgetItem", "ForgetPreview", "ForgetReport", "Purger", "forget_staged", "forget_topic", "topic_predicates",
           "topic_vectors"]

log = logging.getLogger(__name__)

ALL_STATUSES = ("active", "pending", "superseded", "archived", "quarantined")

_LEAD = [
    rx.compile(r"^\s*(?:please\s+|can\s+you\s+|could\s+you\s+|i\s+want\s+you\s+to\s+)*(?:forget|delete|remove|erase|"
               r"wipe|purge|drop|scrub|clear|stop\s+remembering|don't\s+remember|no\s+longer\s+remember)\b\s*",
               re.IGNORECASE),
    # de / es / fr / it: "Bitte vergiss, was ich über X erzählt habe", "borra todo lo de X", "oublie ce que j'ai dit
    # sur X", "dimentica quello che ho detto su X"
    rx.compile(r"^\s*(?:bitte\s+)?(?:vergiss|vergessen\s+sie|losche|lösche|lösch|losch|löschen\s+sie|entferne)\b[\s,]*(?:bitte\s+)?"
               r"(?:alles\s+)?(?:,?\s*was\s+ich\s+(?:dir\s+)?(?:über|uber|zu|von)\s+|(?:über|uber|zu|von)\s+)?",
               re.IGNORECASE),
    rx.compile(r"^\s*(?:por\s+favor\s+)?(?:olvida|borra|elimina|olvidate\s+de)\b\s*(?:todo\s+)?(?:lo\s+(?:que\s+"
               r"(?:te\s+)?(?:dije|conte|he\s+dicho)\s+)?(?:de|sobre|acerca\s+de)\s+|(?:sobre|de|acerca\s+de)\s+)?",
               re.IGNORECASE),
    rx.compile(r"^\s*(?:s'il\s+te\s+pla[iî]t\s+)?(?:oublie|oubliez|efface|effacez|supprime|supprimez)\b\s*(?:tout\s+)?"
               r"(?:ce\s+que\s+(?:je\s+)?(?:t'ai|j'ai)\s+(?:dit|raconté|raconte)\s+(?:sur|à\s+propos\s+de|de)\s+|"
               r"(?:sur|à\s+propos\s+de)\s+)?", re.IGNORECASE),
    rx.compile(r"^\s*(?:per\s+favore\s+)?(?:dimentica|cancella)\b\s*(?:tutto\s+)?(?:quello\s+che\s+ti\s+ho\s+"
               r"detto\s+)?(?:su|di|riguardo)?\s*", re.IGNORECASE),
    rx.compile(r"^(?:about\s+)?(?:everything|all|anything|what(?:ever)?|the\s+(?:stuff|things|memories|facts))?\s*"
               r"(?:(?:that\s+)?(?:i|you)\s+(?:have\s+|'ve\s+)?(?:said|told\s+you|mentioned|shared|wrote|know|"
               r"remember|stored|noted|saved)(?:\s+(?:to\s+you|before|earlier|so\s+far))?\s*)?", re.IGNORECASE),
    rx.compile(r"^(?:about|regarding|concerning|on|of|related\s+to|to\s+do\s+with)\s+", re.IGNORECASE),
]

_NOT_ENTITIES = frozenset({"user", "assistant", "i", "me", "my", "everything", "anything", "stuff"})


_TRAIL = rx.compile(r"\s+(?:erz[äa]hlt|gesagt|gesprochen)?\s*(?:habe|hab)\s*$|\s+(?:erz[äa]hlt|gesagt)\s*$",
                    re.IGNORECASE)


# what a request's topic follows, wherever it stands: "I don't want you to remember anything about my divorce",
# "remove all memories related to my health", "Vergiss alles, was du über meinen Job weißt", "oublie tout ce qui
# concerne ma santé"
_ABOUT = rx.compile(r"\b(?:about|regarding|concerning|related\s+to|relating\s+to|to\s+do\s+with|über|uber|bezüglich|"
                    r"betreffend|sobre|acerca\s+de|respecto\s+a|relacionado\s+con|sur|à\s+propos\s+de|a\s+propos\s+de|"
                    r"concernant|(?:qui\s+)?concerne|au\s+sujet\s+de)\s+", re.IGNORECASE)
# a preposition that leads a topic only after a catch-all object: "any info on my boss", "alles zu meiner
# Krankheit", "lo que sabes de mi ex", "the bit about"
_OBJECT_OF = rx.compile(
    r"^(?:all|everything|anything|any|the|what|whatever|stuff|things|info|information|details|notes|memories|bits?|"
    r"of|it|you|i|my|know|said|told|have|alles|was|du|weißt|lo|todo|cualquier|cosa|que|sabes|tout|ce|que|tu|sais|"
    r"[\s,'])+(?:on|of|zu|von|de|del|d')\s+", re.IGNORECASE)
_POLITE = rx.compile(r"[\s,]+(?:please|thanks|thank\s+you|bitte|danke|por\s+favor|gracias|s'il\s+(?:te|vous)\s+pla[iî]t|"
                     r"merci)\s*$", re.IGNORECASE)
_KNOW = rx.compile(r"\s+(?:weißt|weisst|kennst|sabes|sais|know|remember)\s*$", re.IGNORECASE)


def forget_topic(request: str) -> str:
    """ "forget what I said about my address" -> "my address" (what the request is *about*), in en/de/es/fr/it."""
    said = _POLITE.sub("", request.strip().rstrip(".!?")).rstrip(".!?")
    about = _ABOUT.search(said)
    if about is not None:
        topic = said[about.end():]
    else:
        topic = said
        for pattern in _LEAD:
            topic = pattern.sub("", topic, count=1)
        topic = _OBJECT_OF.sub("", topic, count=1)
    topic = _KNOW.sub("", _TRAIL.sub("", topic)).strip(" ,")
    return topic.strip() or request.strip()


class ForgetItem(BaseModel):
    """One memory a forget would remove, and why it was selected."""

    id: str
    content: str
    type: str
    status: str
    created_at: datetime
    why: list[str] = Field(default_factory=list)
    score: float = 0.0


class ForgetPreview(BaseModel):
    """What a forget-by-meaning would remove. Pass it (or its ids) back to ``forget`` to apply it."""

    query: str
    topic: str
    scope: dict[str, str | None]
    predicates: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    items: list[ForgetItem] = Field(default_factory=list)
    descriptions: list[str] = Field(default_factory=list)  # what the topic's category covers (matched too)

    @property
    def matched(self) -> bool:
        """Whether anything matched (a forget of an empty preview forgets nothing, and says so)."""
        return bool(self.items)

    @property
    def ids(self) -> list[str]:
        return [i.id for i in self.items]

    def __len__(self) -> int:
        return len(self.items)


class ForgetReport(BaseModel):
    """The outcome of ``forget``: ``applied`` is False for a preview-only call."""

    applied: bool
    hard: bool
    ids: list[str] = Field(default_factory=list)
    reason: str = ""
    preview: ForgetPreview | None = None

    @property
    def count(self) -> int:
        return len(self.ids) if self.applied else 0


# Calibrated on the governance benchmark's train split (benchmarks/governance, forget cases; see
# benchmarks/governance/README.md for the cross-validation): a memory is about the topic when its best similarity to
# the topic or one of its category descriptions reaches _SIM_ABS, or reaches _SIM_MIN while within _SIM_REL of the
# best-matching memory of the tenant (topics differ in how close MiniLM puts anything to them: "my health" tops out
# near 0.66, "Project Falcon" near 0.7). MiniLM is an English model: a memory in another language sits as close to an
# unrelated memory of its language as to the topic, so there similarity alone counts only from _SIM_FOREIGN, and the
# words (topic words, category cue words, names) carry the match.
_SIM_ABS = 0.5
_SIM_MIN = 0.3
_SIM_REL = 0.7
_SIM_FOREIGN = 0.7
# a memory closer to one word of a several-word topic than to the whole topic matches that word, not the topic
# ("Hair appointment on Saturday" for "my medical appointments", "Dad is a retired plumber" for "my dad's surgery")
_TRAP = 0.05
_POOL = 200  # nearest memories per query vector considered
# scores (what a hard forget by meaning takes: >= 0.5, see services.governance.HARD_MIN_SCORE)
_S_PREDICATE, _S_ENTITY, _S_PERSON, _S_WORDS, _S_CUE, _S_CUE_ONLY = 1.0, 0.9, 0.85, 0.8, 0.6, 0.45
_NAME = rx.compile(r"\b([A-ZÀ-ÖØ-Þ][\w'’-]*\w)")
_TITLE = rx.compile(r"\b(?:Mr|Mrs|Ms|Miss|Dr|Prof|Herr|Frau|Sr|Sra|M|Mme|Mlle)\.?\s+$")
_NAME_STOP = frozenset({"I", "I'm", "I've", "I'll", "I'd", "Mr", "Mrs", "Ms", "Dr", "Prof", "The", "A", "An",
                        "My", "Our", "Mum", "Mom", "Dad", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
                        "Saturday", "Sunday", "January", "February", "March", "April", "May", "June", "July",
                        "August", "September", "October", "November", "December", "Project", "Herr", "Frau",
                        "Mme", "Mlle", "Sra", "Sr"})
# German capitalises every noun: after one of these a capitalised word is a noun ("auf dem Konto", "200 Euro")
_DE_DETERMINER = rx.compile(
    r"(?:\b(?:der|die|das|den|dem|des|ein|eine|einen|einem|einer|eines|kein|keine|mein|meine|meinen|meinem|meiner|"
    r"dein|deine|sein|seine|ihr|ihre|unser|unsere|im|am|zum|zur|beim|vom|ins|ans|jeden|jede|jedes|diese|dieser|"
    r"diesen|dieses|seit|pro|je|viele|alle|zwei|drei|vier|noch)|\d)\s+$", re.IGNORECASE)
_DE_NOUNS = frozenset(str.split("Euro Euros Monat Monate Jahr Jahre Jahren Woche Wochen Tag Tage Tagen Uhr Zeit Termin Arbeit "
                      "Geld Haus Wohnung Auto Kind Kinder Leute Morgen Abend Ende Anfang Geburtstag Urlaub Stadt "
                      "Schule Büro Problem Probleme Mann Frau Freund Freundin Familie Essen Hause"))


def _names(rec: MemoryRecord, known: Iterable[str] = ()) -> set[str]:
    """Names a memory mentions: its graph entities and capitalised words inside its sentences (a surname). Names in
    ``known`` (resolved from a role: "my landlord, Mr. Okafor") count even as the memory's subject."""
    text = rec.content
    known = set(known) | introduced_names(text)
    german = language_of(text) == "de"
    # graph entities count when they are names (capitalised as written): "park" or "tuna salad" is no person
    out = {e for e in rec.entities if e and e[:1].isupper() and e.lower() not in _NOT_ENTITIES
           and e not in _NAME_STOP and e in text and (" " not in e or not german)}
    # what the memory is *about* is no lead to the topic: its subject ("Ana is allergic to peanuts": forgetting
    # the allergy must not take every memory that names Ana) and who said it; the names it mentions beside the
    # topic are ("my landlord is Mr. Peters" -> "Peters fixed the heater")
    own = {t.subject.casefold() for t in rec.triples} | {(rec.source.speaker or "").casefold()}
    out = {e for e in out if e.casefold() not in own or e in known}
    for m in _NAME.finditer(text):
        before = text[: m.start()]
        titled = _TITLE.search(before) is not None
        # a capital at the start of a sentence is grammar, not a name, unless a title precedes it ("Mrs. Patel")
        if (not before.strip() or rx.search(r"[.!?:]\s*$", before)) and not titled:
            continue
        word = m.group(1).removesuffix("'s").removesuffix("’s")
        if german and not titled and (word in _DE_NOUNS or _DE_DETERMINER.search(before)):
            continue
        if word not in _NAME_STOP and len(word) > 2 and (word.casefold() not in own or word in known):
            out.add(word)
    if german:  # a German noun an entity extractor took for a name ("Euro", "Konto"): keep only name-like ones
        out = {e for e in out if e in known or e not in _DE_NOUNS}
    return out | {k for k in known if mentions(text, k)}


_STEM_END = ("es", "en", "s", "n", "e")


def _stem(word: str) -> str:
    """A crude stem for matching a topic word inside a memory ("Schulden" ~ "schulde", "deudas" ~ "deuda")."""
    for end in _STEM_END:
        if word.endswith(end) and len(word) - len(end) >= 4:
            return word[: -len(end)]
    return word


def _says_topic(sense: TopicSense, text: str, skip: frozenset[str]) -> str | None:
    """The topic's own words, when ``text`` uses every one of them ("Falcon", "Vermieter"): all of them, so "hair
    appointment" does not say "medical appointments"."""
    words = [w for w in sense.words if w not in skip]
    if not words:
        return None
    tokens = [fold(t) for t in rx.findall(r"[\w'’-]+", text)]
    found: list[str] = []
    for w in words:
        stem = _stem(w)
        hit = next((t for t in tokens if t == w or (t.startswith(stem) and len(t) <= len(stem) + 3)), None)
        if hit is None:
            return None
        found.append(hit)
    return " ".join(found)


def topic_vectors(embedder: Any, topic: str) -> tuple[np.ndarray, list[str], np.ndarray | None, np.ndarray | None]:
    """What :func:`find_by_meaning` compares memories with: the topic, its category descriptions and, for a topic of
    several words, each content word alone (the keyword-trap check)."""
    sense = read_topic(topic)
    qvec = np.asarray(embedder.embed_query(topic), dtype=np.float32)
    descriptions = list(sense.descriptions)
    dvecs = np.asarray(embedder.embed_documents(descriptions), dtype=np.float32) if descriptions else None
    words = [w for w in sense.words if len(w) > 2]
    # each distinct word once (a long topic repeats its words; only each word's best match is used)
    wvecs = (np.asarray([embedder.embed_query(w) for w in dict.fromkeys(words)], dtype=np.float32)
             if len(words) > 1 else None)
    return qvec, descriptions, dvecs, wvecs


def _nearest(derived: DerivedIndexes, vec: np.ndarray, k: int, allow: np.ndarray | None) -> list[tuple[int, float]]:
    nids, sims = derived.faiss.search(np.asarray(vec, dtype=np.float32).reshape(1, -1), k, allow_ids=allow)
    return [(int(n), float(s)) for n, s in zip(np.asarray(nids).reshape(-1).tolist(),
                                                 np.asarray(sims).reshape(-1).tolist(), strict=False) if int(n) >= 0]


def _lexical(derived: DerivedIndexes, mask: np.ndarray, terms: Sequence[str], k: int) -> list[int]:
    """Nids of memories using any of ``terms`` (BM25): the words and names of a topic reach memories beyond the
    nearest vectors of a large tenant."""
    text = " ".join(t.rstrip("*") for t in terms if t)
    if not text.strip():
        return []
    positions, _ = derived.lexical.search(text, mask, k, context=False)
    return [int(n) for n in derived.catalog.nid[positions].tolist()] if len(positions) else []


def find_by_meaning(query: str, scope: Scope, *, store: SymbolicStore, derived: DerivedIndexes,
                    queries: GovernanceQueries, qvec: np.ndarray, policy: GovernancePolicy,
                    statuses: Sequence[str] = ALL_STATUSES, limit: int | None = None,
                    descriptions: Sequence[str] = (), desc_vecs: np.ndarray | None = None,
                    word_vecs: np.ndarray | None = None) -> ForgetPreview:
    """Topic (predicate), entity, word and semantic match of a forget request against the scope's memories (every
    status), then the people it names and one hop through the names the matching memories mention ("my neighbour"
    -> "Mrs. Patel waters our plants" -> "Patel's dog barks all night"). ``descriptions``/``desc_vecs`` describe the
    topic's category, ``word_vecs`` its content words one by one (:func:`topic_vectors`). Every item says why it
    matched."""
    limit = limit or policy.forget_max_items
    topic = forget_topic(query)
    sense = read_topic(topic)
    preds = topic_predicates(topic)
    why: dict[str, list[str]] = {}
    score: dict[str, float] = {}

    def hit(rid: str, reason: str, value: float) -> None:
        if reason not in why.setdefault(rid, []):
            why[rid].append(reason)
        score[rid] = max(score.get(rid, 0.0), value)

    for r in queries.ids_by_predicates(scope, preds, statuses, limit):
        hit(r["id"], f"states {r['predicate']}", _S_PREDICATE)
    # the person a topic is *of* ("my dad's heart surgery") is what memories are about, not the topic itself
    held = {w for r in sense.holder_roles for w in ROLES[r].split()}
    uids = [u for u in query_entity_uids(topic, scope) if u.split("\x1f", 1)[-1] not in _NOT_ENTITIES
            and fold(u.split("\x1f", 1)[-1]) not in held and not sense.is_filler(u.split("\x1f", 1)[-1])]
    names: list[str] = []
    for r in queries.ids_by_entities(scope, uids, statuses, limit):
        found = [str(n) for n in r["names"] or []]
        names.extend(n for n in found if n not in names)
        hit(r["id"], "mentions " + ", ".join(repr(n) for n in found), _S_ENTITY)
    # semantic: best similarity to the topic or to one of its category descriptions, and to its words one by one
    best: dict[int, tuple[float, str]] = {}
    by_word: dict[int, float] = {}
    mask, allow = derived.allowed(scope, list(statuses))
    k = min(_POOL, max(limit, 1))
    if allow is None or len(allow):
        vectors = [("the topic", np.asarray(qvec, dtype=np.float32).reshape(1, -1))]
        if desc_vecs is not None:
            dv = np.asarray(desc_vecs, dtype=np.float32).reshape(len(descriptions), -1)
            vectors += [(f"{d!r}", dv[i : i + 1]) for i, d in enumerate(descriptions)]
        for label, vec in vectors:
            for n, sim in _nearest(derived, vec, k, allow):
                if sim > best.get(n, (-2.0, ""))[0]:
                    best[n] = (sim, label)
        for vec in ([] if word_vecs is None else np.asarray(word_vecs, dtype=np.float32)):
            for n, sim in _nearest(derived, vec, k, allow):
                by_word[n] = max(by_word.get(n, -2.0), sim)
    roles = [*sense.person_roles, *sense.holder_roles]
    role_words = [w for r in roles for w in ROLES[r].split()]
    extra = _lexical(derived, mask, [*sense.words, *role_words, *sense.cues], k) if len(mask) else []
    pool = queries.records_by_nids(list(dict.fromkeys([*best, *extra])), scope) if best or extra else []
    # the people the topic names by role, as the tenant's memories name them ("my landlord" -> "Okafor")
    person: dict[str, str] = {}
    holders: set[str] = set()
    for rec in pool:
        for role in sense.person_roles:
            for name in role_names(role, rec.content):
                person.setdefault(name, role)
        for role in sense.holder_roles:
            holders.update(role_names(role, rec.content))
    person = {n: r for n, r in person.items() if n not in holders}
    if person:
        more = _lexical(derived, mask, list(person), k)
        seen = {r.nid for r in pool}
        pool += queries.records_by_nids([n for n in more if n not in seen], scope)
    english = [b[0] for n, b in best.items() if n in {r.nid for r in pool if language_of(r.content) == "en"}]
    top = max(english, default=0.0)
    floor = max(_SIM_MIN, _SIM_REL * top)
    direct_roles = set(sense.words) & {w for r in sense.person_roles for w in ROLES[r].split()}
    skip = frozenset(w for w in sense.words if w in direct_roles)
    for rec in pool:
        sim, label = best.get(rec.nid, (0.0, ""))
        foreign = language_of(rec.content) != "en"
        said = _says_topic(sense, rec.content, frozenset())
        if said is not None:
            hit(rec.id, f"says {said!r}", _S_WORDS)
        for name, role in person.items():
            if mentions(rec.content, name):
                hit(rec.id, f"mentions {name!r} (the {role})", _S_PERSON)
        if said is None and skip:
            for w in skip:  # "my landlord": a memory that says "landlord" is about the landlord
                if _says_topic(TopicSense(text=w, words=(w,)), rec.content, frozenset()) is not None:
                    hit(rec.id, f"says {w!r}", _S_WORDS)
        # (an English-embedding check: outside English the similarities it compares are noise)
        trap = (not foreign and rec.nid in by_word and label == "the topic" and by_word[rec.nid] - sim > _TRAP)
        semantic = (not trap and (sim >= _SIM_FOREIGN if foreign else (sim >= _SIM_ABS or sim >= floor)))
        if semantic:
            hit(rec.id, f"similar to {label} ({sim:.2f})", sim)
        cue = sense.cue_in(rec.content)
        if cue is not None and not trap:
            # a cue word outside English is the match; in English it confirms a weak similarity
            supported = foreign or sim >= _SIM_MIN
            hit(rec.id, f"uses {cue!r} ({'/'.join(sense.categories)})", _S_CUE if supported else _S_CUE_ONLY)
        # a kind of what the topic covers, by WordNet ("'tinnitus' is a kind of symptom"): a word with no other
        # reading, or one the memory's similarity to the topic supports ("shingles" the illness, not the roof tiles;
        # "yoga" is a Hindu discipline to WordNet, yet a memory about a yoga class is not about religion)
        kind = next((k for k in ([] if trap else sense.kinds_in(rec.content))
                     if k.reading.unambiguous or sim >= _SIM_MIN), None)
        if kind is not None:
            about = "/".join(sense.categories) or sense.text
            hit(rec.id, f"{kind.why} ({about})", _S_CUE if sim >= _SIM_MIN else _S_CUE_ONLY)
    # one hop through names the matching memories mention; a name most of the tenant's memories share is a hub
    # (the user's own name, a speaker) and says nothing about the topic; the person a topic is *of* ("my sister's
    # pregnancy": Emma) is what the memories are about, not a lead to the topic
    direct = set(why)
    # a reflection summarises many memories: the names it carries are theirs, not the topic's
    seeds = [r for r in pool if r.id in direct and r.type.value != "reflection"]
    linked: dict[str, str] = {}
    for rec in seeds:
        for name in _names(rec, person):
            if name not in holders and name not in person:
                linked.setdefault(name, rec.id)
    hub = max(8, len(pool) // 3)
    for name, source in linked.items():
        others = [r for r in pool if r.id != source and mentions(r.content, name)]
        if not others or len(others) >= hub:
            continue
        for rec in others:
            if rec.id in why and any(w.startswith("mentions") for w in why[rec.id]):
                continue
            hit(rec.id, f"mentions {name!r}, named in a matching memory",
                0.5 * best.get(rec.nid, (0.0, ""))[0] + 0.3)
        if name not in names:
            names.append(name)
    names.extend(n for n in person if n not in names)
    records = [r for r in store.get(list(why), scope) if r.status.value in statuses]
    items = [ForgetItem(id=r.id, content=r.content, type=r.type.value, status=r.status.value,
                        created_at=r.created_at, why=why[r.id], score=round(score[r.id], 4)) for r in records]
    items.sort(key=lambda i: -i.score)
    return ForgetPreview(query=query, topic=topic, scope=scope.as_params(), predicates=preds, entities=names,
                         items=items[:limit], descriptions=list(descriptions))


_SAFE_DETAIL_KEYS = frozenset({
    "decision", "dedup", "similarity", "target_id", "risk", "signals", "judged_by", "origin", "type", "trust",
    "confidence", "raw_confidence", "supersede", "superseded_by", "conflicts", "contradictions", "by", "with",
    "previous", "predicate", "kind", "strategy", "rule", "version", "strength", "count", "hard", "ids", "archived", "reason_code", "status",
})
_SAFE_REASON_ACTIONS = frozenset({"admit", "reject", "quarantine", "supersede", "conflict", "merge", "decay",
                                  "archive", "purge", "reflect"})


def redact_details(details: Any) -> dict[str, Any]:
    """Keep only content-free audit details (ids, numbers, rule names, previous statuses)."""
    if not isinstance(details, dict):
        return {}
    out = {k: v for k, v in details.items() if k in _SAFE_DETAIL_KEYS}
    out["redacted"] = True
    return out


class Purger:
    """Hard removal of memories from every store NeuSym keeps (see the module docstring)."""

    def __init__(self, store: SymbolicStore, derived: DerivedIndexes, queries: GovernanceQueries, embedder: Any,
                 policy: GovernancePolicy, *, sync: Callable[[], object]) -> None:
        self.store = store
        self.derived = derived
        self.queries = queries
        self.embedder = embedder
        self.policy = policy
        self.sync = sync  # the engine's catch-up (inside the open mutation): the indexes must drop the vectors first

    def purge(self, ids: Sequence[str], scope: Scope, *, extra_texts: Iterable[str] = (),
              rewrite: bool = True) -> list[str]:
        """Delete ``ids`` (visible in ``scope``) everywhere. Returns the ids actually deleted. ``rewrite=False``
        leaves the graph server's log rewrite to the caller (the janitor does one after all its purges)."""
        wanted = list(dict.fromkeys(ids))
        forget_staged(self.store.executor, memory_ids=wanted)  # a restore's staged copies of them go too
        records = self.store.get(wanted, scope)
        if not records:
            self._complete_interrupted(ids, scope, extra_texts)
            return []
        found = [r.id for r in records]
        texts = {r.content for r in records} | set(extra_texts) | self.earlier_versions(found)
        # the audit trail loses its content before the graph delete: a crash after the delete's first statement
        # leaves the rest of the delete to SymbolicStore.recover, which knows nothing of audit content
        self.redact(found)
        gone = self.store.delete_hard(found, scope)
        self.sync()
        self.finish(texts, audit_ids=gone, rewrite=rewrite)
        return gone

    def redact(self, ids: Sequence[str], *, tenant: str | None = None) -> None:
        """Strip the content from the audit entries of ``ids`` (and of the whole ``tenant``); idempotent."""
        rows = self.queries.audit_rows(memory_ids=ids) if ids else []
        if tenant is not None:
            rows += self.queries.audit_rows(user_id=tenant)
        self.queries.redact_audit([_redacted(r) for r in rows])

    def finish(self, texts: Iterable[str], *, audit_ids: Sequence[str] = (), tenant: str | None = None,
               rewrite: bool = True) -> None:
        """Everything after the graph delete: derived indexes, caches, audit redaction, persistence."""
        with self.derived.lock:
            compact_lexical(self.derived)
            if self.policy.compact_on_hard_forget:
                self.derived.faiss.compact()
            self.derived.dirty += 1
        forget_cached_texts(self.embedder, texts)
        self.redact(audit_ids, tenant=tenant)
        self.derived.save()
        # the graph server's own files still hold the deleted strings (the AOF that created them, the old snapshot)
        if rewrite:
            self.queries.rewrite_log()

    def _complete_interrupted(self, ids: Sequence[str], scope: Scope, extra_texts: Iterable[str]) -> None:
        """Finish a purge that died after its graph delete (crash, lost connection): a retry finds nothing left to
        delete, but the orphaned entities (names from the forgotten text) and the audit entries quoting it would
        otherwise stay forever. Only this tenant's ids that are gone from the graph are touched; idempotent."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return
        self.store.delete_orphan_entities(scope)
        present = {r.id for r in self.store.get(wanted, Scope())}
        gone = list(dict.fromkeys(str(r["memory_id"]) for r in self.queries.audit_rows(
            memory_ids=[i for i in wanted if i not in present]) if r.get("user_id") == scope.user_id))
        if gone:
            self.finish(set(extra_texts) | self.earlier_versions(gone), audit_ids=gone)

    def earlier_versions(self, ids: Sequence[str]) -> set[str]:
        """Texts of earlier versions (edit audits keep them for rollback): their cache entries must go too."""
        out: set[str] = set()
        for row in self.queries.audit_rows(memory_ids=ids):
            try:
                details = json.loads(row.get("details_json") or "{}")
            except ValueError:
                continue
            before = details.get("before") if isinstance(details, dict) else None
            if isinstance(before, dict) and isinstance(before.get("content"), str):
                out.add(before["content"])
        return out


def _redacted(row: dict[str, Any]) -> dict[str, Any]:
    try:
        details = json.loads(row.get("details_json") or "{}")
    except ValueError:
        details = {}
    reason = row.get("reason") or ""
    if row.get("action") not in _SAFE_REASON_ACTIONS:
        reason = f"[redacted] {row.get('action')}"
    return {"id": row["id"], "memory_id": row.get("memory_id"), "details_json": json.dumps(redact_details(details)),
            "reason": reason}


def compact_lexical(derived: DerivedIndexes) -> int:
    """Drop BM25 postings of positions that are no longer alive (deleted memories and superseded versions).

    ``LexicalIndex.retire`` only stops counting a position, so the terms of deleted or edited text would survive
    in the postings (and in ``lexical.npz``) forever. Returns the number of postings removed.
    """
    return derived.lexical.prune(derived.catalog.alive[: derived.catalog.size])


def _caches(embedder: Any) -> list[CachedEmbedder]:
    out: list[CachedEmbedder] = []
    seen: set[int] = set()
    current = embedder
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, CachedEmbedder):
            out.append(current)
        current = getattr(current, "inner", None)
    return out


def forget_cached_texts(embedder: Any, texts: Iterable[str]) -> int:
    """Remove cached vectors of ``texts`` (both document and query roles) from every cache around ``embedder``."""
    removed = 0
    items = [t for t in texts if isinstance(t, str)]
    for cache in _caches(embedder):
        forget = getattr(cache, "forget", None)
        if callable(forget):
            removed += int(forget(items) or 0)
            continue
        with cache._lock:
            for text in items:
                for kind in (b"d", b"q"):
                    if cache._store.pop(cache._key(kind, text), None) is not None:
                        removed += 1
    return removed


def record_texts(records: Iterable[MemoryRecord]) -> set[str]:
    return {r.content for r in records}
