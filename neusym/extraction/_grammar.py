"""Regex building blocks for clause-level facts: subjects, negation, object spans, and how spans are cleaned.

Every rule in :mod:`neusym.extraction._rules` is ``<subject> <adverbs> <aux> <negation> <verb> <object>``; putting
the shared parts here keeps each rule short and guarantees that negation, "used to" and third-person
subjects behave the same for every predicate.

Patterns are compiled case-insensitively; proper names are matched case-sensitively inside ``(?-i:...)`` because
capitalisation is the only name signal available.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from neusym.extraction._text import (
    ABBREV_DOT,
    COMMON_WORDS,
    DEMONYMS,
    EMOTIONS,
    MONTHS,
    OCCUPATIONS,
    PETS,
    RELATIONS,
    UPPER,
    WEEKDAYS,
    words_of,
)
from neusym.extraction.dates import DateMention
from neusym.language import regex as rx

__all__ = [
    "ENT_RX",
    "ITEM_RX",
    "LIST_RX",
    "ACT_RX",
    "ORG_RX",
    "DEMONYM_RX",
    "EMO_RX",
    "INTENS_RX",
    "MODAL_RX",
    "EVENT_NOUN_RX",
    "OCCUPATION_WORDS",
    "DEMONYM_WORDS",
    "PET_WORDS",
    "EMOTION_WORDS",
    "EVENT_WORDS",
    "Handler",
    "Rule",
    "ADJ",
    "ADV",
    "END_ACT",
    "END_ENT",
    "END_LIST",
    "HEAD",
    "HEAD_NONEG",
    "NAME",
    "NAME_ANY",
    "OWNER",
    "PETS_RX",
    "REL_RX",
    "SUBJ",
    "Ctx",
    "RawTriple",
    "clean_object",
    "disagrees",
    "obj",
    "owner_of",
    "split_list",
    "subject_of",
]

Handler = Callable[[re.Match[str], "Ctx"], list["RawTriple"]]
"""Turns one regex match into triples (see :mod:`neusym.extraction._handlers`)."""

_TOK = rf"(?!I\b)[{UPPER}][\w\-{ABBREV_DOT}]*(?:'[{UPPER}][\w\-]*)?"
NAME = rf"(?-i:{_TOK}(?:\s+{_TOK}){{0,3}})"
"""A capitalised name of up to four words ("Caroline", "New York City")."""
NAME_ANY = rf"(?:[^\W\d_][\w'\-]*(?:\s+(?-i:{_TOK})){{0,2}})"
"""A name whose first word may be lowercase (after "my name is", "named"): later words must be capitalised."""


def _alt(words: Iterable[str]) -> str:
    items = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in items) + ")"


REL_RX = _alt(RELATIONS)
PETS_RX = _alt(PETS)
ADJ = (
    r"(?:(?:best|good|close|old|oldest|eldest|younger|youngest|older|little|big|baby|twin|step|new|dear|late|lovely|"
    r"beloved|amazing|sweet|only|future|current)[\s-]+)*"
)
SUBJ = (
    rf"(?P<subj>\b(?:i|we)\b|\bmy\s+(?P<sex>ex[\s-]+)?{ADJ}(?P<srel>{REL_RX}|{PETS_RX})(?:,?\s+(?P<sname>{NAME}))?(?=[\s,])"
    rf"|(?P<poss>{NAME})'s\s+{ADJ}(?P<prel>{REL_RX}|{PETS_RX})\b|\b(?:he|she)\b|\b{NAME})"
)
ADV = (
    r"(?:\s+(?:really|also|still|actually|absolutely|totally|just|truly|definitely|genuinely|kind\s+of|kinda|sort\s+of|"
    r"usually|generally|currently|recently|honestly|literally|even|already|finally|personally|both|all|mostly|"
    r"originally|basically|now|happily|sometimes|often|always|secretly|seriously|officially|certainly|sure|"
    r"probably|possibly|maybe|perhaps|apparently|severely|very|so|super|quite|pretty|a\s+bit))*"
)
AUX = (
    r"(?:\s+(?P<aux>am|is|are|was|were|have|has|had|will|shall|(?:might|may|must|could|should|will|would)\s+be)"
    r"(?:\s+(?P<been>been))?)?"
)
NEG = (
    r"(?P<neg>\s+(?:do\s+not|does\s+not|did\s+not|never|no\s+longer|not|cannot|can\s+not|used\s+to|"
    r"no\s+more|hardly|rarely|have\s+never|has\s+never))?"
)
HEAD = SUBJ + ADV + AUX + NEG + ADV
"""Subject, adverbs, auxiliary and negation: everything before the verb."""
HEAD_NONEG = SUBJ + ADV
OWNER = rf"(?P<owner>\bmy|\bour|\bhis|\bher|(?P<oname>{NAME})'s)"

_STOP = r"[,;:!?()\[\]\"]|\.(?:\s|$)|\s-\s"
_CORE = (
    r"because|but|although|though|whereas|while|unless|since|so|if|when|whenever|which|who|whom|whose|where|"
    r"now|today|tonight|tomorrow|yesterday|anymore|any\s+more|again|lately|currently|recently|nowadays|"
    r"these\s+days|right\s+now|at\s+the\s+moment|ago|haha+|lol|lmao|anyway|already|soon|later|then|either|every|"
    r"each|i|we|he|she|they|you|is|was|are|were|am|will|would|could|should|can|might"
)
_ENT_BOUND = (
    _CORE + r"|and|or|with|for|by|on|from|near|to|at|in|into|during|over|under|around|about|like|as|than|"
    r"that|after|before|until|till|too|last|next|this|these|those|has|have|had|because"
)
_LIST_BOUND = (
    _CORE + r"|with|for|by|from|as|than|more|over|rather|instead|that|after|before|until|till|too|"
    r"a\s+lot|so\s+much|very\s+much|as\s+well|at\s+all"
)
_ACT_BOUND = _CORE.replace(
    "|i|we|he|she|they|you|is|was|are|were|am|will|would|could|should|can|might", "|i|we|you"
)

END_ENT = rf"(?=\s*(?:$|{_STOP})|\s+(?:{_ENT_BOUND})\b)"
END_LIST = rf"(?=\s*(?:$|[;:!?()\[\]\"]|\.(?:\s|$)|\s-\s)|\s+(?:{_LIST_BOUND})\b|,\s*(?:{_CORE})\b)"
END_ACT = rf"(?=\s*(?:$|{_STOP})|\s+(?:{_ACT_BOUND}|and\s+(?:then|i|we|also))\b)"


def obj(group: str, end: str, *, commas: bool = False) -> str:
    """A lazily matched object span ending at ``end``."""
    chars = r"[^;:!?()\[\]\"\n]" if commas else r"[^,;:!?()\[\]\"\n]"
    return rf"(?P<{group}>{chars}+?){end}"


# Object spans and closed-class alternations shared by the rule table.
ENT_RX = obj("obj", END_ENT)
ITEM_RX = obj("obj", END_LIST)
LIST_RX = obj("obj", END_LIST, commas=True)
ACT_RX = obj("obj", END_ACT)
ORG_RX = obj("org", END_ENT)
DEMONYM_RX = "(?:" + "|".join(sorted(DEMONYMS, key=len, reverse=True)) + ")"
EMO_RX = (
    "(?:"
    + "|".join(sorted(EMOTIONS, key=len, reverse=True))
    + r"|burn(?:ed|t)\s+out|stressed\s+out|fed\s+up)"
)
INTENS_RX = (
    r"(?:(?:so|very|really|pretty|quite|a\s+bit|a\s+little(?:\s+bit)?|kind\s+of|kinda|sort\s+of|extremely|super|"
    r"incredibly|totally|rather|somewhat|too|fairly|deeply|truly|absolutely|utterly|slightly|increasingly|a\s+lot|"
    r"genuinely|honestly|still|getting|becoming|been|more|less|even|just)\s+)*"
)
MODAL_RX = (
    r"(?P<modal>will|shall|(?:(?:am|is|are)\s+)?going\s+to|plan\s+to|plans\s+to|"
    r"(?:(?:am|is|are)\s+)?planning\s+(?:to|on)|intend\s+to|intends\s+to|(?:(?:am|is|are)\s+)?about\s+to|have\s+to|"
    r"has\s+to|need\s+to|needs\s+to|must|hope\s+to|hopes\s+to|(?:(?:am|is|are)\s+)?hoping\s+to|want\s+to|wants\s+to|"
    r"would\s+like\s+to|would\s+love\s+to|(?:(?:am|is|are)\s+)?thinking\s+(?:about|of)|aim\s+to|"
    r"(?:(?:am|is|are)\s+)?scheduled\s+to|(?:(?:am|is|are)\s+)?supposed\s+to|expect\s+to|might|should|"
    r"(?:(?:am|is|are)\s+)?considering)"
)
EVENT_NOUN_RX = (
    r"(?:meeting|appointment|interview|exam|test|flight|party|date|call|deadline|presentation|class|lesson|game|"
    r"match|concert|trip|surgery|operation|wedding|conference|shift|event|session|check-?up|reservation|recital|"
    r"performance|tournament|race|marathon|audition|hearing|review|demo|vacation|holiday|visit)"
)

OCCUPATION_WORDS = " ".join(OCCUPATIONS) + " #occ"
DEMONYM_WORDS = " ".join(DEMONYMS)
PET_WORDS = " ".join(w for p in PETS for w in p.split())
EMOTION_WORDS = " ".join(EMOTIONS) + " burned burnt stressed fed"
EVENT_WORDS = (
    "meeting appointment interview exam test flight party date call deadline presentation class lesson game match "
    "concert trip surgery operation wedding conference shift event session checkup check-up reservation recital "
    "performance tournament race marathon audition hearing review demo vacation holiday visit"
)


@dataclass(slots=True)
class RawTriple:
    subject: str
    predicate: str
    object: str
    polarity: bool = True
    weight: float = 1.0  # how much the rule itself is trusted (multiplies the sentence confidence)
    kind: str = "fact"  # fact | preference | event | plan | emotion | knowledge | routine
    third_party: bool = False
    past: bool = False
    pronoun: bool = False
    derived: bool = False  # implied by another triple (the rejected option of "prefer X over Y")
    aspect: str = ""  # ongoing | past_event | habitual_past | ended | future ("" = decided later from flags)
    source: str = "rule"  # rule | clause | parser: which reader found it
    verb: str = ""  # the verb lemma as said ("relocate"), kept for audits and semantic mapping
    span_start: int = -1  # where the object starts in the sentence (-1 unknown)
    retracts: bool = False  # a correction withdraws this value ("Berlin, not Munich": Munich)


@dataclass(slots=True)
class Ctx:
    """What a rule handler needs to know about the sentence it matched in."""

    me: str
    sentence: str
    lowercase: bool
    dates: list[DateMention] = field(default_factory=list)
    referent: str | None = None
    future: bool = False
    names: list[tuple[int, str]] = field(default_factory=list)  # (start, name) of names in this sentence

    def referent_at(self, pos: int) -> str | None:
        """The person "he"/"she" at ``pos`` most likely refers to: the last name before it, else the carried one."""
        before = [name for start, name in self.names if start < pos]
        return before[-1] if before else self.referent


@dataclass(frozen=True, slots=True)
class Subject:
    name: str
    third_party: bool
    pronoun: bool = False
    named: bool = False  # a bare capitalised name, so the verb must agree ("Alice likes", not "Sounds like")


_PRONOUN_OBJ = words_of(
    "it this that them those these him her you one something anything everything nothing stuff things "
    "there here all lot much so yes no what which me myself us yourself everyone everybody someone "
    "somebody none whatever"
)
# each alternative starts where its run starts (the lookbehinds): the same matches, but a long run of spaces,
# commas or punctuation is no longer re-scanned from every position inside it (quadratic in re)
_TRAIL = rx.compile(
    r"(?<![\s,])(?:[\s,]+(?:a\s+lot|so\s+much|very\s+much|as\s+well|too|anymore|any\s+more|now|though|lol|haha+|really|"
    r"actually|at\s+all|and|or|but|then|also|right|ok|okay|yet|a\s+bit|more|most|the\s+most|best|honestly|tbh|"
    r"myself|either|personally|a\s+little|here|there|lately|recently|these\s+days|nowadays|currently|even|"
    r"though|anyway|again|already|still|ever|forever|every\s+day|everyday|daily|with|to|for|of|at|in|on|about|"
    r"from|by|the|a|an|my|your|our|their|his|her))+\s*$|(?<![^\w+#%)])[^\w+#%)]+$",
    re.IGNORECASE,
)
_LEAD = rx.compile(
    r"^(?:(?:i\s+think|i\s+guess|i\s+believe|i\s+would\s+say|i\s+mean|honestly|definitely|probably|maybe|perhaps|"
    r"well|oh|so|and|but|also|actually|really|just|especially|particularly|mainly|mostly|including)[\s,]+)+",
    re.IGNORECASE,
)
_JUNK = rx.compile(r"^[^\w@+$\u20ac\u00a3#\"']+")
_DET = rx.compile(r"^(?:a|an|the|some|any|this|that|these|those)\s+", re.IGNORECASE)
_MY = rx.compile(r"^(?:my|our)\s+", re.IGNORECASE)
_MY_APPOS = rx.compile(rf"^(?:my|our)\s+{ADJ}(?:{REL_RX}|{PETS_RX}),?\s+(?P<n>{NAME})$", re.IGNORECASE)
_LIST_SPLIT = rx.compile(
    r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|as\s+well\s+as|plus|along\s+with)\s+", re.IGNORECASE
)
_BAD_START = words_of(
    "i you we he she they it to of for and or every each today tomorrow yesterday tonight now then there "
    "here so too much very makes made gives gave helps helped keeps brings means meant does did gets takes took "
    "goes is are was were can will would"
)
_MAX_WORDS = {"ent": 7, "item": 8, "act": 12}


def _title(text: str) -> str:
    return " ".join(w[:1].upper() + w[1:] for w in text.split())


def clean_object(raw: str | None, kind: str, ctx: Ctx, start: int = -1) -> str | None:
    """Trim a captured span to the object it names, or ``None`` if it is not a usable object.

    Dates inside the span are cut off ("call mom tomorrow" -> "call mom"), so are fillers ("a lot", "too"),
    leading hedges and, except for activities, determiners. Pronouns are rejected: "I love it" says nothing
    storable about what "it" is.
    """
    if not raw:
        return None
    text = raw
    if start >= 0:
        for d in ctx.dates:
            if start <= d.start < start + len(text):
                text = text[: d.start - start]
                break
    for _ in range(3):
        before = text
        text = _TRAIL.sub("", _LEAD.sub("", _JUNK.sub("", text.strip())))
        if text == before:
            break
    if kind == "act":
        text = rx.sub(r"^(?:to|and)\s+", "", text, flags=re.IGNORECASE)
    else:
        text = _DET.sub("", text)
        appos = _MY_APPOS.match(text)
        if appos:
            text = appos.group("n")
        elif _MY.match(text):
            text = f"{ctx.me}'s {_MY.sub('', text)}"
    text = text.strip().replace(ABBREV_DOT, ".")
    if not text:
        return None
    words = text.split()
    if len(words) > _MAX_WORDS.get(kind, 8) or (len(words) == 1 and words[0].lower() in _PRONOUN_OBJ):
        return None
    if words[0].lower() in _BAD_START:
        return None
    low = text.lower()
    if low in WEEKDAYS or low in MONTHS:
        return None
    if kind == "ent" and ctx.lowercase and len(words) <= 3:
        text = _title(text)
    return text


def split_list(raw: str | None, kind: str, ctx: Ctx, start: int = -1) -> list[str]:
    """Clean a list object ("peanuts, shellfish and penicillin") into its items."""
    if not raw:
        return []
    if start >= 0:
        for d in ctx.dates:
            if start <= d.start < start + len(raw):
                raw = raw[: d.start - start]
                break
    out: list[str] = []
    for k, part in enumerate(_LIST_SPLIT.split(raw)):
        item = clean_object(part, kind, ctx)
        if k == 0 and item is None and part.strip():
            return []  # "likes to write about topics like X and Y": not a list of liked things
        if item and item.lower() not in {x.lower() for x in out}:
            out.append(item)
    return out


def _strip_common(name: str) -> str:
    words = name.replace(ABBREV_DOT, ".").split()
    while words and words[0].lower().rstrip(".") in COMMON_WORDS:
        words.pop(0)
    return " ".join(words)


def _named(name: str, ctx: Ctx) -> Subject | None:
    clean = _strip_common(name)
    if not clean or (" " not in clean and clean.lower().endswith("ing")):
        return None  # a capitalised gerund ("Dancing is ...") is an activity, not a person
    if clean.lower() == ctx.me.lower():
        return Subject(ctx.me, False, named=True)
    return Subject(clean, True, named=True)


def subject_of(m: re.Match[str], ctx: Ctx) -> Subject | None:
    """Resolve the SUBJ group of a match to a display name (speaker for "I", "user's sister", a name...)."""
    gd = m.groupdict()
    raw = gd.get("subj")
    if raw is None:
        return None
    low = raw.lower()
    if low in {"i", "we"}:
        return Subject(ctx.me, False)
    if low in {"he", "she"}:
        who = ctx.referent_at(m.start("subj"))
        return Subject(who, True, pronoun=True) if who else None
    rel = gd.get("srel")
    if rel is not None:
        if gd.get("sname"):
            sub = _named(gd["sname"], ctx)
            return Subject(sub.name, sub.third_party) if sub else None
        return Subject(f"{ctx.me}'s {' '.join(rel.lower().split())}", True)
    if gd.get("poss") is not None:
        owner = _named(gd["poss"], ctx)
        if owner is None:
            return None
        return Subject(f"{owner.name}'s {' '.join(gd['prel'].lower().split())}", True)
    return _named(raw, ctx)


_IRREGULAR_PAST = words_of(
    "went been came grew had got met bought spoke ran caught hung gave took made did said felt left quit "
    "wore drove flew saw began became"
)


def disagrees(subject: Subject, verb: str | None, aux: str | None) -> bool:
    """True when a bare name is followed by a base-form verb: "Sounds like a plan" is not about someone "Sounds"."""
    if not subject.named or not verb or aux:
        return False
    low = verb.lower()
    if low.endswith("ing"):
        return True  # "Poland living in Amsterdam" is a participle phrase, not a clause about Poland
    return not (low.endswith(("s", "ed")) or low in _IRREGULAR_PAST or " " in low)


def owner_of(m: re.Match[str], ctx: Ctx) -> Subject | None:
    """Resolve an OWNER group ("my", "her", "Caroline's") to the subject the fact is about."""
    gd = m.groupdict()
    raw = (gd.get("owner") or "").lower()
    if raw in {"my", "our"}:
        return Subject(ctx.me, False)
    if raw in {"his", "her"}:
        who = ctx.referent_at(m.start("owner"))
        return Subject(who, True, pronoun=True) if who else None
    name = gd.get("oname")
    return _named(name, ctx) if name else None


@dataclass(frozen=True, slots=True)
class Rule:
    """A named pattern, the words that gate it, and the handler that turns a match into triples.

    ``triggers`` is a space-separated set of lowercase words; the regex runs only if the sentence contains one of
    them (``#digit`` stands for "contains a digit", ``#occ`` for "has a word with an occupation suffix").
    """

    name: str
    pattern: str
    triggers: str
    handler: Handler
    gate: frozenset[str] = field(init=False, repr=False, compare=False)
    _compiled: rx.TextPattern | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gate", frozenset(self.triggers.split()))

    @property
    def regex(self) -> rx.TextPattern:
        """Compiled on first use: the rule table's patterns are large, and compiling all of them at import made
        ``import neusym`` take seconds; the gate means many rules never run in a given process."""
        compiled = self._compiled
        if compiled is None:
            compiled = rx.compile(self.pattern, re.IGNORECASE)
            object.__setattr__(self, "_compiled", compiled)
        return compiled
