"""Is a new memory an update of an older one? A small pair model instead of a pile of hand thresholds.

For a (new, old) pair of one tenant that the FAISS neighbour search found, :func:`pair_features` reads a handful of
signals that say *same attribute, same subject, another value*:

* how close the two vectors are (``cos``), and how much the older memory stands out among the new one's other
  neighbours (``cos_margin``: in a tenant whose memories are all in one language, all of them are fairly close);
* whether both sit in the same **attribute slot** (embedding similarity to slot descriptions written in English,
  German, Spanish and French: home, employer, manager, favourite ...), how clearly, whether that slot holds one value
  at a time, and how much closer to conversation filler they are than to any slot;
* **change / ending / correction cues** from a multilingual lexicon of lemmas (:mod:`neusym.governance.update_lexicon`):
  a change word the old memory lacks, an ending word next to a value the old memory states ("left Siemens"),
  a correction ("actually", "not X");
* **word overlap**: what the new one adds, what the old one loses, how long the old one is (a story tells more than
  one value, superseding it would hide the rest), a new value-like token;
* the **subject**: a third person, or a role ("my wife") the new memory names ("Sofia left the council").

Value-masked similarity (proper nouns, numbers and quotes replaced by a placeholder, the two frames embedded and
compared) was measured as a feature and dropped: with the others it changed nothing (cross-validated 84 vs 85 of 110
update pairs found, LoCoMo 2 vs 3 false pairs) and it costs two embeddings per pair on the write path.

A logistic regression weighs them (:data:`neusym.governance._update_weights.WEIGHTS`), fitted by
``python -m benchmarks.governance.fit_updates`` on the governance benchmark's train split (updates as positives;
contradiction cases, controls, unrelated context, forget-topic memories and multi-valued additions as negatives) and
on LoCoMo dev pairs of one speaker (ordinary conversation, which must not supersede); the threshold is set so that
those conversations stay clean. Rules keep only what is not a matter of degree: a question states no value, a
statement framed as the past replaces nothing, two different people are two subjects.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import numpy as np

from neusym.governance import _update_weights
from neusym.governance.update_lexicon import (
    ADDITIVE,
    CHANGE,
    CORRECTION,
    ENDING,
    FUNCTION_WORDS,
    NEGATION,
    ROLE_NOUNS,
    cue_positions,
    mentions,
    words,
    wordset,
)
from neusym.language import regex as rx
from neusym.record import MemoryRecord
from neusym.retrieval.lexical import STOPWORDS

__all__ = [
    "BACKGROUND", "FEATURES", "FITTED_EMBEDDER", "SLOTS", "TEXT_FEATURES", "GateFacts", "PairModel", "Slot",
    "Subject", "body", "content_words", "cos_margin", "ended_values", "gate_facts", "negated", "negation_named",
    "objects_of", "pair_features", "past_framed", "same_subject", "says_change", "statement", "stem", "subject_of",
    "text_features", "unprefixed", "value_spans",
]


FITTED_EMBEDDER = "all-MiniLM-L6-v2"
"""The embedder family :data:`neusym.governance._update_weights` was fitted on (see ``GovernancePolicy.update_model``)."""


@dataclass(frozen=True)
class Slot:
    """An attribute slot: ``single`` if a person holds one value at a time (one home, one employer); described in
    several languages because MiniLM places a German sentence closer to a German description."""

    name: str
    single: bool
    descriptions: tuple[str, ...]


SLOTS: tuple[Slot, ...] = (
    Slot("home", True, ("where I live: my home town, city, neighbourhood, flat, apartment or house",
                        "wo ich wohne: meine Stadt, meine Wohnung, mein Haus, umgezogen",
                        "dónde vivo: mi ciudad, mi piso, mi casa, me mudé",
                        "où j'habite: ma ville, mon appartement, ma maison, déménagé")),
    Slot("address", True, ("my postal or shipping address: street, house number and city",
                           "meine Adresse: Straße, Hausnummer, Postleitzahl und Stadt",
                           "mi dirección: calle, número y ciudad",
                           "mon adresse: rue, numéro et ville")),
    Slot("employer", True, ("where I work: my employer, the company I work for, my job",
                            "wo ich arbeite: mein Arbeitgeber, meine Firma, mein Job",
                            "dónde trabajo: mi empresa, mi trabajo, mi empleo",
                            "où je travaille: mon employeur, mon entreprise, mon travail, mon poste")),
    Slot("job_title", True, ("my job title, role or position at work, my profession",
                             "mein Beruf, meine Stelle, meine Position bei der Arbeit",
                             "mi profesión, mi puesto, mi cargo en el trabajo",
                             "mon métier, mon poste, ma fonction au travail")),
    Slot("partner", True, ("my romantic partner and relationship: girlfriend, boyfriend, husband, wife, fiancé, "
                           "dating, engaged, married, broke up",
                           "mein Partner, meine Freundin, mein Freund, verheiratet, getrennt",
                           "mi pareja, mi novia, mi novio, casados, separados",
                           "mon copain, ma copine, mon conjoint, mariés, séparés")),
    Slot("school", True, ("the school, college or university someone goes to",
                          "die Schule oder Universität, die jemand besucht",
                          "el colegio, la escuela o la universidad a la que va alguien",
                          "l'école, le lycée ou l'université où va quelqu'un")),
    Slot("phone", True, ("my phone number or mobile number", "meine Telefonnummer oder Handynummer",
                         "mi número de teléfono o de móvil", "mon numéro de téléphone ou de portable")),
    Slot("email", True, ("my email address or username handle", "meine E-Mail-Adresse", "mi correo electrónico",
                         "mon adresse e-mail")),
    Slot("favourite", True, ("my favourite thing: favourite band, colour, song, food, drink, film, game, season or "
                             "sport", "mein Lieblingsessen, meine Lieblingsfarbe, mein Lieblingsfilm",
                             "mi comida favorita, mi color favorito, mi película favorita",
                             "mon plat préféré, ma couleur préférée, mon film préféré")),
    Slot("diet", True, ("the diet I follow: vegetarian, vegan, pescatarian, keto or low-carb diet",
                        "meine Ernährung: vegetarisch, vegan", "mi dieta: vegetariana, vegana",
                        "mon régime: végétarien, végan")),
    Slot("manager", True, ("my manager, boss, supervisor or team lead at work", "mein Chef, meine Chefin, "
                           "mein Vorgesetzter", "mi jefe, mi jefa, mi supervisor", "mon chef, ma responsable, "
                           "mon manager")),
    Slot("doctor", True, ("my doctor, GP, dentist or medical specialist", "mein Arzt, meine Ärztin, mein Zahnarzt",
                          "mi médico, mi dentista", "mon médecin, mon dentiste")),
    Slot("professional", True, ("my lawyer, accountant, agent, landlord or account manager",
                                "mein Anwalt, mein Steuerberater, mein Vermieter",
                                "mi abogado, mi contable, mi casero", "mon avocat, mon comptable, mon propriétaire")),
    Slot("timezone", True, ("the time zone I am in", "meine Zeitzone", "mi zona horaria", "mon fuseau horaire")),
    Slot("pronouns", True, ("my pronouns or the name I go by", "meine Pronomen, wie ich genannt werde",
                            "mis pronombres, cómo me llaman", "mes pronoms, comment on m'appelle")),
    Slot("units", True, ("the measurement units or language I want you to use", "die Einheiten oder die Sprache, "
                         "die du verwenden sollst", "las unidades o el idioma que quiero que uses",
                         "les unités ou la langue que tu dois utiliser")),
    Slot("vehicle", True, ("the car or vehicle I drive", "das Auto, das ich fahre", "el coche que conduzco",
                           "la voiture que je conduis")),
    Slot("device", True, ("the laptop, computer or phone I use", "mein Laptop, mein Computer, mein Handy",
                          "mi portátil, mi ordenador, mi móvil", "mon ordinateur portable, mon téléphone")),
    Slot("money", True, ("my salary, income, rent or bills and who I pay", "mein Gehalt, meine Miete",
                         "mi sueldo, mi alquiler", "mon salaire, mon loyer")),
    Slot("body", True, ("my weight, height or clothing and shoe size", "mein Gewicht, meine Größe, Schuhgröße",
                        "mi peso, mi altura, mi talla", "mon poids, ma taille, ma pointure")),
    Slot("provider", True, ("my gym, bank, insurance company or phone and internet provider",
                            "mein Fitnessstudio, meine Bank, meine Versicherung",
                            "mi gimnasio, mi banco, mi seguro", "ma salle de sport, ma banque, mon assurance")),
    Slot("team", True, ("the team or department I am on at work", "mein Team, meine Abteilung",
                        "mi equipo, mi departamento", "mon équipe, mon service")),
    Slot("drink", True, ("what I drink: coffee, tea, alcohol", "was ich trinke: Kaffee, Tee",
                         "lo que bebo: café, té", "ce que je bois: café, thé")),
    Slot("pet", False, ("my pet: a dog, cat or other animal and its name", "mein Haustier: Hund, Katze",
                        "mi mascota: perro, gato", "mon animal: chien, chat")),
    Slot("hobby", False, ("a hobby, sport or musical instrument I play or enjoy", "mein Hobby, Sport, Instrument",
                          "mi afición, deporte, instrumento", "mon loisir, sport, instrument")),
    Slot("learning", False, ("a language, course or subject I am learning or taking classes in",
                             "eine Sprache oder ein Kurs, den ich lerne", "un idioma o curso que estudio",
                             "une langue ou un cours que j'apprends")),
    Slot("family", False, ("my children, siblings, parents or relatives and their names",
                           "meine Kinder, Geschwister, Eltern", "mis hijos, hermanos, padres",
                           "mes enfants, frères et sœurs, parents")),
)
"""Slots of a personal profile. Descriptions, not example sentences: a memory is matched to a slot by meaning."""

BACKGROUND: tuple[str, ...] = (
    "thanks for your support and kind words, that means a lot to me",
    "that sounds great, I am so happy for you, keep going and never give up",
    "how did it feel, what happened, tell me more about it",
    "we had a great time together with family and friends",
    "I went to an event last week and it was fun and exciting",
    "feelings, emotions, dreams, motivation and encouragement",
    "talk to you soon, bye, see you later, take care",
    "spending time with loved ones is important",
    "helping our community and neighborhood and making a difference",
    "cooking, baking and trying new recipes and flavors",
    "hey, hi, long time no see, how have you been, good to hear from you",
    "got it, thanks, sure thing, I definitely will, you too",
    "wow, that's awesome, amazing, so cool, I'm so proud of you",
    "I'm sorry to hear that, that must be hard, hang in there",
)
"""What conversation is mostly made of: a memory closer to one of these than to a slot is not about a slot."""

FEATURES: tuple[str, ...] = (
    "cos", "slot_same", "slot_agree", "filler", "slot_margin", "single", "change", "ending",
    "correction", "old_len", "novelty_new", "novelty_old", "value_new", "event_old", "third", "role_link",
    "single_change", "slot_change", "slot_value", "agree_change", "change_value", "additive", "cos_margin",
    "head_mismatch",
)
"""The pair model's inputs, in weight order."""

_PAST = rx.compile(
    r"\b(?:used\s+to|use\s+to|when\s+(?:i|he|she|we|they)\s+(?:was|were)\s+(?:younger|little|a\s+(?:kid|child|"
    r"teen|teenager|student|boy|girl))|as\s+a\s+(?:kid|child|teen|teenager)|back\s+(?:then|in\s+the\s+day|in\s+\d{4}|"
    r"when)|years\s+ago|in\s+my\s+(?:youth|childhood|teens|twenties|thirties)|growing\s+up|formerly|"
    r"in\s+the\s+past|früher|als\s+kind|damals|antes\s+(?:solía|era|vivía|trabajaba)|solía|solían|de\s+niñ[oa]|"
    r"autrefois|quand\s+j'étais|dans\s+le\s+temps)\b", re.IGNORECASE)
_EVENT_PAST = rx.compile(r"\b(?:yesterday|last\s+(?:week|weekend|month|year|night|friday|saturday|sunday|monday|"
                         r"tuesday|wednesday|thursday)|\d+\s+(?:days?|weeks?|months?|years?)\s+ago|the\s+other\s+day)\b",
                         re.IGNORECASE)
"""A dated event ("last Friday", "yesterday"): something that happened, not a standing value to replace."""
_VALUE = rx.compile(r"\"[^\"]{1,60}\"|“[^”]{1,60}”|[\w.+-]+@[\w-]+\.[\w.]+|\+?\d[\d\s./:-]*\d|\d"
                    r"|(?<![.!?:]\s)(?<!^)\b(?!I\b|I')[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý0-9][\w'’-]*)*")
"""Value-like spans: quotes, e-mails, numbers and capitalised words that do not open a sentence."""
_PERSON_WORDS = frozenset(
    ["i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours", "he", "him", "his", "she",
     "her", "hers", "they", "them", "their", "i'm", "i've", "i'll", "i'd", "we're", "you're", "you've"])
_NOT_NAMES = frozenset(["the", "a", "an", "my", "our", "your", "his", "her", "their", "this", "that", "these",
                        "those", "so", "oh", "btw", "anyway", "sorry", "correction", "honestly", "um", "well", "hey",
                        "hi", "yes", "yeah", "no", "not", "now", "also", "and", "but", "then", "just", "got",
                        "started", "switched", "moved", "left", "work", "mein", "meine", "mi", "ma", "mon", "ich",
                        "je", "yo", "sadly", "finally", "today", "after", "since", "congrats", "great", "we", "i",
                        "address", "crm", "new", "update", "actually", "eigentlich", "en", "seit", "desde",
                        "depuis", "inzwischen", "ahora", "maintenant", "désormais", "wir", "on", "got", "done", "understood"])


_NEGATED = rx.compile(r"\b(?:not|never|no|don't|doesn't|didn't|can't|won't|isn't|aren't|nicht|nie|kein\w*|nunca|"
                      r"jamás|ne|n'|pas|jamais)\b|n't\b", re.IGNORECASE)
_NEW = frozenset(["new", "newly", "neu", "neue", "neuer", "neues", "neuen", "nuevo", "nueva", "nuevos", "nuevas",
                  "nouveau", "nouvel", "nouvelle", "nouveaux"])


def negated(text: str) -> bool:
    """A negated statement ("I don't own a TV", "Ich trinke nie Alkohol"): a standing constraint, not a value."""
    return bool(_NEGATED.search(text))


def says_change(text: str) -> bool:
    """The text says a state ended, was corrected or changed ("anymore", "quit", "actually", "now", "switched");
    "new" alone does not ("our new TV" is a thing, not a change of the speaker's state)."""
    toks = words(text)
    if cue_positions(text, ENDING) or cue_positions(text, CORRECTION):
        return True
    return any(toks[i] not in _NEW for i in cue_positions(text, CHANGE) if i < len(toks))


def past_framed(text: str) -> bool:
    """True if the statement says it is about the past ("used to", "as a kid", "back then", "years ago")."""
    return bool(_PAST.search(text))


def stem(w: str) -> str:
    """A word lower-cased and lightly stemmed ("kids" -> "kid", "Lily's" -> "lily")."""
    return _stem(w)


@functools.lru_cache(maxsize=65536)
def _stem(w: str) -> str:
    w = w.strip(".'-/").casefold()
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def content_words(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words that can carry a value (no function words, pronouns or cue words)."""
    return set(_content_words(text))


@functools.lru_cache(maxsize=8192)
def _content_words(text: str) -> frozenset[str]:
    toks = tuple(words(text))
    cues = {i for lex in (CHANGE, ENDING, CORRECTION) for i in lex.positions(toks)}
    out = set()
    for i, raw in enumerate(toks):
        if i in cues:
            continue
        w = _stem(raw)
        if len(w) < 2 or w in STOPWORDS or w in FUNCTION_WORDS or w in _PERSON_WORDS:
            continue
        out.add(w)
    return frozenset(out)


def value_spans(text: str) -> set[str]:
    """The value-like spans of ``text`` (proper nouns, numbers, e-mails, quotes), normalised."""
    return set(_value_spans(text))


@functools.lru_cache(maxsize=8192)
def _value_spans(text: str) -> frozenset[str]:
    return frozenset(_stem(m.group(0)) for m in _VALUE.finditer(text))


_values = value_spans


@dataclass(frozen=True)
class Subject:
    """Who a memory is about: the speaker, a named third person (leading name or triple subject) and a role."""

    speaker: str | None
    names: frozenset[str]
    roles: frozenset[str]
    lead_only: bool = False  # the only name is a capitalised word opening the text ("Denver is home now")


_FIRST_PERSON = wordset("""i i'm i've i'll i'd me my mine myself we we're we've our ours us ich mein meine meinen
meinem meiner mir mich wir unser unsere yo mi mis me nosotros nosotras nuestro nuestra je j' moi mon ma mes nous
notre nos""")
_INTERJECTIONS = wordset("""oops whoops ah oh ooh ugh hmm hm wow ok okay yay ha haha lol ups huch ach na naja oje
vaya uy ay bueno pues oups bah ben bon euh oh là""")
_HEADER = rx.compile(r"^\s*(?:[\w-]+\s+){0,2}[\w-]+:\s+")
"""A label before a colon ("Address service: ...", "CRM sync: ...", "Got it: ..."): not the sentence's subject."""


def _leading_name(text: str) -> str | None:
    """A capitalised word opening the text (after a header label), unless it is a function or cue word."""
    m = rx.match(r"\s*([A-ZÀ-Ý][\w'-]+)", _HEADER.sub("", text, count=1))
    if not m:
        return None
    w = m.group(1).split("'")[0].casefold()
    if w in _NOT_NAMES or w in _PERSON_WORDS or w in ROLE_NOUNS or w in NEGATION or w in FUNCTION_WORDS:
        return None
    if w in _INTERJECTIONS or any(cue_positions(w, lex) for lex in (CHANGE, ENDING, CORRECTION, ADDITIVE)):
        return None  # "Oops, not Maya, Mia", "Perdón, no italiano", "Pardon, pas Louis": not a person
    return w


def subject_of(rec: MemoryRecord) -> Subject:
    """Who ``rec`` is about (see :func:`_subject`)."""
    return _subject(rec.content, rec.source.speaker, tuple(t.subject for t in rec.triples))


@functools.lru_cache(maxsize=8192)
def _subject(content: str, speaker: str | None, triple_subjects: tuple[str, ...]) -> Subject:
    """Who a memory is about. Roles ("my wife", "Dad") always count; named people (the extractor's triple subjects,
    a capitalised word opening the text) only when the memory has no first person ("Sofia left the council", not
    "Emma and I got married", which is about the speaker). An assistant's turn is about the user it talks to, so it
    has no speaker of its own."""
    if speaker and speaker.casefold() in ("assistant", "user"):
        speaker = None
    spk = speaker.casefold() if speaker else None
    toks = words(_HEADER.sub("", content, count=1))
    first = any(t in _FIRST_PERSON for t in toks)
    roles = {toks[i + 1] for i in range(len(toks) - 1) if toks[i] in _POSSESSIVE and toks[i + 1] in ROLE_NOUNS}
    if toks and toks[0] in ROLE_NOUNS:
        roles.add(toks[0])
    names: set[str] = set()
    lead = _leading_name(content)
    if lead and lead != spk:
        names.add(lead)
    from_lead = set(names)
    for subj in triple_subjects:
        s = subj.strip().casefold()
        if not s or s in _PERSON_WORDS or s in ("user", "speaker", "the user", "assistant"):
            continue
        parts = s.replace("user's", " ").split()
        if s.startswith(("user's", "my ", "our ")):  # the speaker's role ("user's wife"), not someone else's
            roles |= {p for p in parts if p in ROLE_NOUNS}
        names |= {p.split("'")[0] for p in parts
                  if len(p) > 2 and p not in ROLE_NOUNS and p not in _NOT_NAMES and p != spk}
    lead_only = bool(from_lead) and names == from_lead and not roles and not any(
        s.strip().casefold().split("'")[0] in from_lead for s in triple_subjects)
    return Subject(spk, frozenset() if first else frozenset(names), frozenset(roles), lead_only and not first)


_POSSESSIVE = frozenset(["my", "our", "mein", "meine", "meiner", "meinem", "meinen", "unser", "unsere", "mi", "mis",
                         "nuestro", "nuestra", "ma", "mon", "mes", "notre", "nos", "his", "her", "their"])


def _role_match(a: str, b: str) -> bool:
    """One role in two forms ("jefa"/"jefe", "Chef"/"Chefin", "novio"/"novia")."""
    if a == b:
        return True
    k = min(len(a), len(b)) - 1
    return k >= 3 and a[:k] == b[:k]


def same_subject(new: MemoryRecord, old: MemoryRecord, s_new: Subject, s_old: Subject) -> tuple[bool, bool, bool]:
    """``(same, third_person, via_role)``: whether ``new`` can be about the subject of ``old``.

    Two speakers are two people. A person the old memory is about must be named (or their role said) in the new
    one; a new memory with no subject of its own ("Not Lily, Lola!") may continue it; when the old one names them
    only by a role ("my wife") the new one may name someone who is not in the old memory at all (perhaps the role's
    name): that link is weaker and the model knows it (``via_role``). A new memory about a third person the old one
    never mentions is about someone else.
    """
    if s_new.speaker and s_old.speaker and s_new.speaker != s_old.speaker:
        return False, False, False
    text_new, text_old = new.content.casefold(), old.content.casefold()
    old_subj, new_subj = s_old.names | s_old.roles, s_new.names | s_new.roles
    if not old_subj:
        # the old memory is about the speaker: a new one about a third person (or about a thing the old one
        # names as its value: "I work at Spotify" / "Spotify opened an office") is about someone else; a
        # capitalised word that merely opens the new one ("Denver is home now", "First week at the BBC ...") may
        # be a place or a thing said of the speaker: the model weighs it as a third person
        if new_subj and s_new.lead_only and not any(mentions(text_old, n) for n in s_new.names):
            return True, True, False
        return (False, True, False) if new_subj else (True, False, False)
    if (any(mentions(text_new, n) for n in s_old.names) or any(mentions(text_old, n) for n in s_new.names)
            or any(_role_match(r, w) for r in s_old.roles for w in s_new.roles)):
        return True, True, False
    if not new_subj:
        return True, True, False  # elliptical: continues whatever the old memory was about
    if s_old.roles and s_new.names and not s_new.roles:
        return True, True, True  # "my wife ..." then "Sofia ...": the role's name, perhaps
    return False, True, False


def _new_values(t_new: str, t_old: str) -> set[str]:
    """Value spans of ``t_new`` that ``t_old`` does not say, as a value or as words: a name that opens one sentence
    and sits inside the other ("Alice tunes ..." / "Every Sunday, Alice tunes ...") is the same name, and a
    note's number in its label is no value (callers pass :func:`body`)."""
    said = _said(t_old)
    return {v for v in _values(t_new) - _values(t_old) if not set(v.split()) <= said}


@functools.lru_cache(maxsize=8192)
def _said(text: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in words(text))


@functools.lru_cache(maxsize=8192)
def _event_past(text: str) -> bool:
    return _EVENT_PAST.search(text) is not None


def _near(positions: Sequence[int], targets: Sequence[int], span: int = 3) -> bool:
    return any(abs(p - t) <= span for p in positions for t in targets)


_NEGATORS = frozenset(["not", "don't", "never", "didn't", "won't", "can't", "nicht", "nie", "nunca", "jamais"])
"""An ending word right after one of these ends nothing ("don't quit", "the importance of not quitting")."""


def ended_values(text: str, shared: AbstractSet[str]) -> set[str]:
    """The ``shared`` values ``text`` ends or corrects by name: an ending word within three words of it ("left
    Tesco", "Bruno passed away", "ne bois plus de thé") or a negation opening a clause before it ("not piano,
    ukulele", "nicht den Astra"). An ending word under a negation ("don't quit", "not quitting") ends nothing."""
    if not shared:
        return set()
    return {w for w in _endable(text) if w in shared}


@functools.lru_cache(maxsize=8192)
def _endable(text: str) -> frozenset[str]:
    """Every word of ``text`` that an ending word or a clause-opening negation would end (see
    :func:`ended_values`), read once per text."""
    out: set[str] = set(negation_named(text))
    for clause in rx.split(r"(?<=[.!?;])\s+", text):
        toks = words(clause)
        stems = [_stem(w) for w in toks]
        named = {w for span in _value_spans(clause) for w in span.split()}  # "Quito" is a value, not "quit"
        ends = [p for p in ENDING.positions(tuple(toks))
                if not (p > 0 and toks[p - 1] in _NEGATORS) and stems[p] not in named]
        out |= {w for i, w in enumerate(stems) if _near(ends, [i])}
    return frozenset(out)


@functools.lru_cache(maxsize=8192)
def negation_named(text: str) -> frozenset[str]:
    """The words a negation opening a clause names as wrong ("not piano, ukulele", "nicht den Astra", "pas Louis
    mais Lucas"): up to three words after it."""
    out: set[str] = set()
    for clause in rx.split(r"(?<=[.!?;])\s+", text):
        for part in rx.split(r"[,;:()!]", clause):
            ptoks = [_stem(w) for w in words(part)]
            if ptoks and ptoks[0] in NEGATION:
                out |= set(ptoks[1:4])
    return frozenset(out)


_LABEL = rx.compile(r"^\s*(?:[\w-]+\s+){0,3}[\w-]+:\s+|\s*[(\[][^()\[\]]{0,40}[)\]]")
"""A label before a colon ("Local state note 12: ...") and a bracketed note ("(note 1-3)", "[ticket 4]")."""


@functools.lru_cache(maxsize=8192)
def body(text: str) -> str:
    """``text`` without its labels: what two memories that differ only there (two numbered notes saying the same
    thing) have in common is their whole statement, so neither holds a new value for the other."""
    return _LABEL.sub(" ", text)


@dataclass(frozen=True)
class GateFacts:
    """What the rules before the pair model read from one text, read once per text (a memory is in several pairs,
    as the new one and as a neighbour): framed as the past, a question, negated, the content words of its body."""

    past: bool
    question: bool
    negated: bool
    words: frozenset[str]


@functools.lru_cache(maxsize=8192)
def gate_facts(text: str) -> GateFacts:
    return GateFacts(past_framed(text), "?" in text, negated(text), _content_words(body(text)))


def statement(rec: MemoryRecord) -> str:
    """The memory's words without a leading "Speaker: " prefix (a conversation turn's, which every turn of that
    speaker shares and which says nothing about the attribute)."""
    return unprefixed(rec.content, rec.source.speaker)


def unprefixed(text: str, speaker: str | None) -> str:
    """``text`` without a leading "``speaker``: " (see :func:`statement`)."""
    if speaker and text.startswith(f"{speaker}: "):
        return text[len(speaker) + 2:]
    return text


def objects_of(rec: MemoryRecord) -> tuple[str, ...]:
    """The objects of a memory's triples (what :func:`text_features` counts among its values)."""
    return tuple(t.object for t in rec.triples)


_HEAD_SKIP = frozenset(["favourite", "favorite", "fav", "new", "current", "old", "own", "lieblings", "neue", "neuer",
                        "neues", "nuevo", "nueva", "nouveau", "nouvelle", "actual"])


def heads(text: str) -> set[str]:
    """The attribute nouns a memory names after a first-person possessive ("my favourite *colour*", "mi *jefa*",
    "my shoe *size*"): two memories whose heads differ talk about two attributes ("my favourite food" is not an
    update of "my favourite colour")."""
    return set(_heads(text))


@functools.lru_cache(maxsize=8192)
def _heads(text: str) -> frozenset[str]:
    toks = words(text)
    out: set[str] = set()
    for i, w in enumerate(toks):
        if w not in _POSSESSIVE or w in ("his", "her", "their"):
            continue
        for nxt in toks[i + 1:i + 4]:
            if nxt in _HEAD_SKIP or nxt.startswith("lieblings") and len(nxt) == 9:
                continue
            if nxt.startswith("lieblings"):
                nxt = nxt[9:]
            if nxt in STOPWORDS or nxt in FUNCTION_WORDS or cue_positions(nxt, CHANGE):
                break
            out.add(_stem(nxt))
            break
    return frozenset(out)


def _heads_differ(a: AbstractSet[str], b: AbstractSet[str]) -> bool:
    return bool(a and b) and not any(_role_match(x, y) for x in a for y in b)


def old_values(old: MemoryRecord, text: str) -> set[str]:
    """Words of the older memory that can be its value: its value-like spans and the objects of its triples (not
    its verbs: "fahre" is shared by "ich fahre einen Golf" and "ich fahre nach Italien" and ends nothing)."""
    return set(_old_values(text, objects_of(old)))


@functools.lru_cache(maxsize=8192)
def _old_values(text: str, objects: tuple[str, ...]) -> frozenset[str]:
    out = {w for span in _value_spans(text) for w in span.split()}
    for o in objects:
        out |= {_stem(w) for w in words(o)}
    return frozenset(out)


def pair_features(new: MemoryRecord, old: MemoryRecord, sim: float,
                  slots_new: np.ndarray, slots_old: np.ndarray, *, third: bool, via_role: bool,
                  others: Sequence[float] = (), text: dict[str, float] | None = None) -> np.ndarray:
    """The model's inputs for one pair (order: :data:`FEATURES`). ``slots_*`` are per-slot scores followed by the
    background scores (:meth:`neusym.governance.updates.UpdateDetector.scores`); ``others`` are the new memory's
    similarities to its other candidate pairs (how much this older memory stands out among them); ``text`` is the
    pair's :func:`text_features` when the caller has them already."""
    n = len(SLOTS)
    a_new, a_old = slots_new[:n], slots_old[:n]
    joint = np.minimum(a_new, a_old)
    a = int(np.argmax(joint))
    slot_same = float(joint[a])
    bg_new, bg_old = float(slots_new[n:].max(initial=0.0)), float(slots_old[n:].max(initial=0.0))
    filler = max(bg_new, bg_old) - slot_same
    margin = min(float(a_new[a]) - bg_new, float(a_old[a]) - bg_old)
    single = 1.0 if SLOTS[a].single else 0.0
    agree = 1.0 if int(np.argmax(a_new)) == int(np.argmax(a_old)) else 0.0
    tx = text if text is not None else text_features(statement(new), statement(old), objects_of(old))
    change, value_new = tx["change"], tx["value_new"]
    return np.array([
        sim, slot_same, agree, filler, margin, single, change, tx["ending"], tx["correction"],
        tx["old_len"], tx["novelty_new"], tx["novelty_old"], value_new, tx["event_old"],
        1.0 if third else 0.0, 1.0 if via_role else 0.0, single * change, slot_same * change, slot_same * value_new,
        agree * change, change * value_new, tx["additive"], cos_margin(sim, others), tx["head_mismatch"],
    ], dtype=np.float64)


def cos_margin(sim: float, others: Sequence[float]) -> float:
    """How much the older memory stands out among the new one's other candidates (0 when it has none)."""
    return sim - sum(others) / len(others) if len(others) else 0.0


TEXT_FEATURES = ("change", "ending", "correction", "old_len", "novelty_new", "novelty_old", "value_new", "event_old",
                 "additive", "head_mismatch")
"""The features :func:`text_features` reads."""


def text_features(t_new: str, t_old: str, old_objects: tuple[str, ...] = ()) -> dict[str, float]:
    """The features of a pair read from the two memories' words (their :func:`statement`; ``old_objects``: the
    older one's triple objects): cue words, content words, value spans, heads, each text's reads cached. All but
    the vectors' and the subject's: the write path bounds a pair with these before it fetches the older record and
    reads who the two are about, and most pairs of ordinary conversation stop there."""
    w_new, w_old = _content_words(t_new), _content_words(t_old)
    shared = w_new & w_old & _old_values(t_old, old_objects)
    # "not judo, karate": a negation opening a clause names a value of the old memory even where it is no proper
    # noun or triple object (an ending word near a common word ends less reliably: "left early", "sold out")
    named = (negation_named(t_new) - negation_named(t_old)) & w_new & w_old
    ended = (ended_values(t_new, shared) - ended_values(t_old, shared)) | named
    change_new = bool(cue_positions(t_new, CHANGE))
    change = (0.5 if cue_positions(t_old, CHANGE) else 1.0) if change_new else 0.0
    return {
        "change": change, "ending": 1.0 if ended else 0.0,
        "correction": 1.0 if cue_positions(t_new, CORRECTION) else 0.0,
        "old_len": min(len(w_old), 20) / 20.0, "novelty_new": len(w_new - w_old) / max(1, len(w_new)),
        "novelty_old": len(w_old - w_new) / max(1, len(w_old)),
        "value_new": 1.0 if _new_values(body(t_new), body(t_old)) else 0.0,
        "event_old": 1.0 if _event_past(t_old) else 0.0,
        "additive": 1.0 if cue_positions(t_new, ADDITIVE) else 0.0,
        "head_mismatch": 1.0 if _heads_differ(_heads(t_new), _heads(t_old)) else 0.0,
    }


class PairModel:
    """The fitted logistic regression over :data:`FEATURES` (weights in :mod:`neusym.governance._update_weights`)."""

    def __init__(self, weights: Sequence[float] | None = None, bias: float | None = None,
                 threshold: float | None = None, mean: Sequence[float] | None = None,
                 scale: Sequence[float] | None = None) -> None:
        w = _update_weights
        self.weights = np.asarray(weights if weights is not None else w.WEIGHTS, dtype=np.float64)
        self.bias = float(bias if bias is not None else w.BIAS)
        self.threshold = float(threshold if threshold is not None else w.THRESHOLD)
        self.mean = np.asarray(mean if mean is not None else w.MEAN, dtype=np.float64)
        self.scale = np.asarray(scale if scale is not None else w.SCALE, dtype=np.float64)
        if len(self.weights) != len(FEATURES):
            raise ValueError(f"update model has {len(self.weights)} weights for {len(FEATURES)} features")

    def probability(self, x: np.ndarray) -> float:
        z = float(((x - self.mean) / self.scale) @ self.weights) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def explain(self, x: np.ndarray, top: int = 3) -> list[str]:
        """The features that pushed this pair's score most (for the audit)."""
        contrib = ((x - self.mean) / self.scale) * self.weights
        order = np.argsort(-np.abs(contrib))[:top]
        return [f"{FEATURES[i]}{'+' if contrib[i] > 0 else '-'}" for i in order.tolist()]
