"""The rule table: one regex per way of stating a fact, each with the handler that turns a match into triples.

Rules carry cheap trigger substrings; a rule's regex runs only when one of them occurs in the lowercased sentence,
which is what keeps the extractor at thousands of texts a second with ~60 rules.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from neusym.extraction._grammar import (
    ADJ,
    END_ACT,
    END_ENT,
    END_LIST,
    HEAD,
    HEAD_NONEG,
    NAME,
    NAME_ANY,
    OWNER,
    PETS_RX,
    REL_RX,
    SUBJ,
    Ctx,
    RawTriple,
    Subject,
    clean_object,
    disagrees,
    obj,
    owner_of,
    split_list,
    subject_of,
)
from neusym.extraction._text import DEMONYMS, EMOTIONS, OCCUPATIONS, PETS, RELATIONS, singular
from neusym.extraction.dates import format_day
from neusym.extraction.entities import EMAIL, PHONE, URL
from neusym.extraction.vocabulary import canonical_predicate

__all__ = ["RULES", "Rule", "run_rules", "sentence_words"]

Handler = Callable[[re.Match[str], Ctx], list[RawTriple]]
_BE = frozenset({"am", "is", "are", "was", "were", "might be", "may be", "must be", "could be", "should be", "will be"})
_PAST_NEG = frozenset({"used to", "no longer", "no more"})


@dataclass(frozen=True, slots=True)
class Rule:
    """A named pattern, the words that gate it, and the handler that turns a match into triples.

    ``triggers`` is a space-separated set of lowercase words; the regex runs only if the sentence contains one of
    them (``#digit`` stands for "contains a digit", ``#occ`` for "has a word with an occupation suffix").
    """

    name: str
    regex: re.Pattern[str]
    triggers: str
    handler: Handler
    gate: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gate", frozenset(self.triggers.split()))


def _c(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _neg(m: re.Match[str], *groups: str) -> tuple[bool, bool]:
    """(polarity, past) from the negation groups of a match."""
    for g in groups or ("neg",):
        value = m.groupdict().get(g)
        if value:
            low = " ".join(value.lower().split())
            return False, low in _PAST_NEG
    return True, False


def _t(subj: Subject, pred: str, obj_: str, polarity: bool, kind: str, *, weight: float = 1.0, past: bool = False) -> RawTriple:
    return RawTriple(subj.name, pred, obj_, polarity, weight, kind, subj.third_party, past, subj.pronoun)


def _gstart(m: re.Match[str], group: str) -> int:
    return m.start(group) if m.groupdict().get(group) is not None else -1


def simple(
    pred: str,
    kind: str,
    obj_kind: str = "ent",
    *,
    group: str = "obj",
    many: bool = False,
    past_verbs: Iterable[str] = (),
    need_be: bool = False,
    weight: float = 1.0,
    owner: bool = False,
) -> Handler:
    """Handler for the common shape: subject (or owner), optional negation, one object or a list of objects."""
    past_set = frozenset(past_verbs)

    def handle(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
        gd = m.groupdict()
        if need_be and (gd.get("aux") or "").lower() not in _BE:
            return []
        subj = owner_of(m, ctx) if owner else subject_of(m, ctx)
        if subj is None or disagrees(subj, gd.get("v"), gd.get("aux") or gd.get("neg")):
            return []
        polarity, past = _neg(m)
        verb = (gd.get("v") or "").lower()
        if verb in past_set and not gd.get("aux"):
            polarity, past = False, True
        if gd.get("aux", "") and (gd.get("aux") or "").lower() in {"was", "were"} and pred in {"lives_in", "works_at"}:
            polarity, past = False, True
        start = _gstart(m, group)
        objects = split_list(m.group(group), obj_kind, ctx, start) if many else [clean_object(m.group(group), obj_kind, ctx, start)]
        return [_t(subj, pred, o, polarity, kind, weight=weight, past=past) for o in objects if o]

    return handle


def _moved_from_to(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    out: list[RawTriple] = []
    new = clean_object(m.group("obj"), "ent", ctx, m.start("obj"))
    old = clean_object(m.group("src"), "ent", ctx, m.start("src"))
    if new:
        out.append(_t(subj, "lives_in", new, True, "fact"))
    if old:
        out.append(RawTriple(subj.name, "lives_in", old, False, 1.0, "fact", subj.third_party, True, derived=True))
    return out


def _from(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    if not m.group("v") and (m.group("aux") or "").lower() not in _BE:
        return []
    return simple("from", "fact")(m, ctx)


def _date_after(ctx: Ctx, pos: int, window: int = 12) -> tuple[str, str] | None:
    for d in ctx.dates:
        if pos <= d.start <= pos + window:
            if d.precision == "year":
                return "birth_year", str(d.when.year)
            return "birthday", format_day(d.when, has_year=d.has_year)
    return None


def _born(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    found = _date_after(ctx, m.start("rest"))
    if found:
        return [_t(subj, found[0], found[1], True, "fact")]
    place = clean_object(m.group("place"), "ent", ctx, _gstart(m, "place"))
    out = [_t(subj, "born_in", place, True, "fact")] if place else []
    if place and m.group("raised"):
        out.append(_t(subj, "from", place, True, "fact"))
    return out


def _birthday(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = owner_of(m, ctx)
    found = _date_after(ctx, m.start("rest"), 4)
    if subj is None or not found or found[0] != "birthday":
        return []
    return [_t(subj, "birthday", found[1], True, "fact")]


def _name(m: re.Match[str], ctx: Ctx, weight: float = 1.0) -> list[RawTriple]:
    subj = owner_of(m, ctx) if "owner" in m.groupdict() else Subject(ctx.me, False)
    value = clean_object(m.group("obj"), "ent", ctx, m.start("obj"))
    if subj is None or not value or len(value.split()) > 4:
        return []
    low = value.lower()
    if low in DEMONYMS or low in EMOTIONS or low in OCCUPATIONS or low in {"back", "later", "anytime", "now", "soon"}:
        return []
    if not value[:1].isupper():
        value = value[:1].upper() + value[1:]
    return [_t(subj, "name", value, True, "fact", weight=weight)]


def _job(m: re.Match[str], ctx: Ctx, *, need_be: bool = False, check: bool = False) -> list[RawTriple]:
    gd = m.groupdict()
    if need_be and (gd.get("aux") or "").lower() not in _BE:
        return []
    subj = owner_of(m, ctx) if "owner" in gd else subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = _neg(m)
    if (gd.get("aux") or "").lower() in {"was", "were"} or (
        (gd.get("v") or "").lower() in {"worked", "interned"} and not gd.get("aux")
    ):
        polarity, past = False, True
    title = clean_object(gd.get("title"), "item", ctx, _gstart(m, "title"))
    org = clean_object(gd.get("org"), "ent", ctx, _gstart(m, "org"))
    if title and check and not _is_occupation(title):
        return []
    out: list[RawTriple] = []
    if title:
        out.append(_t(subj, "job_title", title, polarity, "fact", past=past))
    if org:
        pred = "studies_at" if title and title.lower() == "student" else "works_at"
        out.append(_t(subj, pred, org, polarity, "fact", past=past))
    return out


def _is_occupation(title: str) -> bool:
    head = title.lower().split()[-1]
    return head in OCCUPATIONS or head.endswith(("ist", "ician", "ologist", "eer", "grapher", "ator"))


def _prefers(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = _neg(m)
    first = clean_object(m.group("obj"), "act" if m.group("obj").lower().startswith("to ") else "item", ctx, m.start("obj"))
    other = clean_object(m.group("other"), "item", ctx, _gstart(m, "other"))
    out = [_t(subj, "prefers", first, polarity, "preference", past=past)] if first else []
    if first and other and polarity:
        out.append(RawTriple(subj.name, "prefers", other, False, 1.0, "preference", subj.third_party, derived=True))
    return out


_CATEGORY_FIX = {"color": "colour", "flavor": "flavour", "theater": "theatre", "tv": "tv_show", "film": "movie"}


def _favourite(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = owner_of(m, ctx)
    if subj is None:
        return []
    cat_words = [singular(w) for w in m.group("cat").lower().split()]
    cat = canonical_predicate("_".join(_CATEGORY_FIX.get(w, w) for w in cat_words))
    if not cat or cat in {"thing", "one", "part"}:
        return []
    values = split_list(m.group("obj"), "item", ctx, m.start("obj"))
    polarity = not m.groupdict().get("neg")
    return [_t(subj, f"favourite_{cat}", v, polarity, "preference") for v in values[:3]]


def _pet(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    subj = owner_of(m, ctx) if "owner" in gd else subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = _neg(m)
    if (gd.get("v") or "").lower() == "had" and not gd.get("aux"):
        polarity, past = False, True
    species = singular(" ".join(m.group("species").lower().split()))
    name = clean_object(gd.get("pname"), "ent", ctx, _gstart(m, "pname"))
    if name and name.lower() in PETS:
        name = None
    out = [_t(subj, "has_pet", name or species, polarity, "fact", past=past)]
    if name and species != "pet":
        out.append(RawTriple(name, "is_a", species, True, 1.0, "fact", True))
    return out


def _relation(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    subj = owner_of(m, ctx) if gd.get("owner") else Subject(ctx.me, False)
    name = clean_object(gd.get("name"), "ent", ctx, _gstart(m, "name"))
    if subj is None or not name or name.split()[0].lower() in {"and", "is", "was", "who", "said"}:
        return []
    rel = " ".join(m.group("rel").lower().split())
    pred = RELATIONS.get(rel)
    if pred is None:  # a pet species
        return [_t(subj, "has_pet", name, True, "fact"), RawTriple(name, "is_a", singular(rel), True, 1.0, "fact", True)]
    return [_t(subj, pred, name, not gd.get("ex"), "fact", past=bool(gd.get("ex")))]


def _married(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    name = clean_object(m.group("name"), "ent", ctx, m.start("name"))
    if subj is None or not name:
        return []
    verb = m.group("v").lower()
    polarity, past = _neg(m)
    if verb in {"divorced", "separated"}:
        polarity, past = False, True
    pred = "married_to" if verb in {"married", "divorced", "separated"} else "partner_of"
    return [_t(subj, pred, name, polarity, "fact", past=past)]


def _emotion(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    if not gd.get("feel") and (gd.get("aux") or "").lower() not in _BE | {"have", "has"}:
        return []
    emo = m.group("emo").lower()
    nxt = ctx.sentence[m.end() : m.end() + 6].lower().split()[:1]
    if emo in {"good", "great", "bad", "fine", "okay", "ok", "amazing", "terrible", "awful", "sick", "down"} and nxt and nxt[0] in {
        "at", "with", "for", "of", "to", "in", "on", "about", "and", "idea", "news", "thing"
    }:
        return []
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    polarity, _ = _neg(m)
    return [_t(subj, "feels", emo, polarity, "emotion")]


_GO_NOUN = frozenset(
    "bed work school church college class town dinner lunch breakfast jail court hospital prison university uni mass "
    "therapy practice rehab the a an my our his her their this that some".split()
)
_SPEECH = re.compile(
    r"^(?:say|admit|agree|tell\s+you|be\s+honest|confess|thank|apologi[sz]e|ask|mention|point\s+out|let\s+you|"
    r"keep\s+you\s+posted|keep\s+that\s+in\s+mind|check\s+it\s+out|try|see|think|wait|go\s+now)\b|"
    r"^(?:let|be|do|get|have|make|keep|go)$",
    re.I,
)
_ASPIRATION = ("hope", "want", "would like", "would love", "thinking", "considering", "aim", "wish")
_OBLIGATION = ("have to", "has to", "need to", "needs to", "must", "should", "supposed")


def _plan(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    subj = subject_of(m, ctx) if gd.get("subj") is not None else Subject(ctx.me, False)
    if subj is None:
        return []
    raw = m.group("obj")
    modal = " ".join((gd.get("modal") or "").lower().split())
    act = clean_object(raw, "act", ctx, m.start("obj"))
    if not act or _SPEECH.match(act):
        return []
    if modal in {"might", "may", "should", "must", "could"} and act.lower().startswith("be "):
        return []  # "I might be allergic to X" is a hedged fact, not a plan
    if modal.endswith("going to") and (act[:1].isupper() or act.split()[0].lower() in _GO_NOUN):
        act = f"go to {act}"
    polarity = not (gd.get("neg1") or gd.get("neg2") or gd.get("neg"))
    weight = 0.85 if any(a in modal for a in _ASPIRATION) else 1.0
    kind = "aspiration" if weight < 1.0 else "obligation" if any(o in modal for o in _OBLIGATION) else "plan"
    return [RawTriple(subj.name, "plans_to", act, polarity, weight, kind, subj.third_party, False, subj.pronoun)]


def _progressive(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    if (m.group("aux") or "").lower() not in {"am", "is", "are"}:
        return []
    words = m.group("obj").lower().split()
    if words[0] == "going" and words[1:2] == ["to"]:
        return []  # "going to X" is the plan rule's
    if not (ctx.future or words[0] in {"moving", "relocating"}):
        return []
    return _plan(m, ctx)


_WENT = simple("went_to", "event")
_GOES = simple("goes_to", "routine")


def _went(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    if (m.group("aux") or "").lower() in {"will", "shall"}:
        return []
    return _WENT(m, ctx) if m.group("v").lower() in {"went", "been"} else _GOES(m, ctx)


def _knowledge_of(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    role = canonical_predicate(m.group("role"))
    target = clean_object(m.group("obj"), "ent", ctx, m.start("obj"))
    if subj is None or not role or not target or role in {"one", "best", "most", "rest", "end", "part", "kind", "type", "sort", "name", "first", "last"}:
        return []
    return [RawTriple(subj.name, f"{role}_of", target, True, 0.85, "knowledge", subj.third_party)]


def _is_a(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    what = clean_object(m.group("obj"), "item", ctx, m.start("obj"))
    if subj is None or not what or subj.name == ctx.me:
        return []
    if _is_occupation(what):
        past = m.group("v").lower() == "was"
        return [RawTriple(subj.name, "job_title", what, not past, 0.8, "fact", True, past, subj.pronoun)]
    return [RawTriple(subj.name, "is_a", what, True, 0.7, "knowledge", subj.third_party, False, subj.pronoun)]


_ENT = obj("obj", END_ENT)
_ITEM = obj("obj", END_LIST)
_LIST = obj("obj", END_LIST, commas=True)
_ACT = obj("obj", END_ACT)
_ORG = obj("org", END_ENT)
_DEMONYM_RX = "(?:" + "|".join(sorted(DEMONYMS, key=len, reverse=True)) + ")"
_EMO_RX = "(?:" + "|".join(sorted(EMOTIONS, key=len, reverse=True)) + r"|burn(?:ed|t)\s+out|stressed\s+out|fed\s+up)"
_INTENS = (
    r"(?:(?:so|very|really|pretty|quite|a\s+bit|a\s+little(?:\s+bit)?|kind\s+of|kinda|sort\s+of|extremely|super|"
    r"incredibly|totally|rather|somewhat|too|fairly|deeply|truly|absolutely|utterly|slightly|increasingly|a\s+lot|"
    r"genuinely|honestly|still|getting|becoming|been|more|less|even|just)\s+)*"
)
_MODAL = (
    r"(?P<modal>will|shall|(?:(?:am|is|are)\s+)?going\s+to|plan\s+to|plans\s+to|"
    r"(?:(?:am|is|are)\s+)?planning\s+(?:to|on)|intend\s+to|intends\s+to|(?:(?:am|is|are)\s+)?about\s+to|have\s+to|"
    r"has\s+to|need\s+to|needs\s+to|must|hope\s+to|hopes\s+to|(?:(?:am|is|are)\s+)?hoping\s+to|want\s+to|wants\s+to|"
    r"would\s+like\s+to|would\s+love\s+to|(?:(?:am|is|are)\s+)?thinking\s+(?:about|of)|aim\s+to|"
    r"(?:(?:am|is|are)\s+)?scheduled\s+to|(?:(?:am|is|are)\s+)?supposed\s+to|expect\s+to|might|should|"
    r"(?:(?:am|is|are)\s+)?considering)"
)
_EVENT_NOUN = (
    r"(?:meeting|appointment|interview|exam|test|flight|party|date|call|deadline|presentation|class|lesson|game|"
    r"match|concert|trip|surgery|operation|wedding|conference|shift|event|session|check-?up|reservation|recital|"
    r"performance|tournament|race|marathon|audition|hearing|review|demo|vacation|holiday|visit)"
)

_OCCUPATION_WORDS = " ".join(OCCUPATIONS) + " #occ"
_DEMONYM_WORDS = " ".join(DEMONYMS)
_PET_WORDS = " ".join(w for p in PETS for w in p.split())
_EMOTION_WORDS = " ".join(EMOTIONS) + " burned burnt stressed fed"
_EVENT_WORDS = (
    "meeting appointment interview exam test flight party date call deadline presentation class lesson game match "
    "concert trip surgery operation wedding conference shift event session checkup check-up reservation recital "
    "performance tournament race marathon audition hearing review demo vacation holiday visit"
)

_I_AM_NAME = Rule(
    "i_am_name",
    _c(rf"^(?:(?:hi|hello|hey)(?:\s+there|\s+all|\s+everyone)?[,!.]?\s+)?(?:i\s+am|this\s+is|it\s+is)\s+(?P<obj>{NAME})"
       r"(?=\s*(?:$|[,.!;]|\s+(?:and|from|by|here|speaking)\b))"),
    "am is",
    lambda m, c: _name(m, c, 0.75),
)

RULES: tuple[Rule, ...] = (
    # identity
    Rule("name", _c(rf"{OWNER}\s+(?:full\s+|first\s+|real\s+|legal\s+)?name\s+is\s+(?P<obj>{NAME_ANY}){END_ENT}"), "name", _name),
    Rule("call_me", _c(rf"\b(?:you\s+can\s+|please\s+|just\s+|everyone\s+|people\s+|friends\s+)?call\s+me\s+(?P<obj>{NAME_ANY}){END_ENT}"), "call", _name),
    _I_AM_NAME,
    Rule("nationality", _c(rf"{HEAD}\s+(?:an?\s+)?(?P<obj>{_DEMONYM_RX})\b(?!\s+(?:food|cuisine|music|movies?|films?|restaurants?|dishes|culture|wine|beer))"),
         _DEMONYM_WORDS, simple("nationality", "fact", "item", need_be=True)),
    Rule("age", _c(rf"{HEAD}\s+(?:turning\s+|turned\s+)?(?P<obj>\d{{1,3}})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*(?:yo|y/o))?{END_ENT}"), "#digit",
         simple("age", "fact", "item", weight=0.9)),
    Rule("my_age", _c(rf"{OWNER}\s+age\s+is\s+(?P<obj>\d{{1,3}})\b"), "age", simple("age", "fact", "item", owner=True)),
    Rule("born", _c(rf"{HEAD}\s+born(?P<raised>\s+and\s+raised)?(?P<rest>\s+(?:on|in|at)?\s*(?P<place>[^,;!?]{{2,60}}?){END_ENT})"), "born", _born),
    Rule("birthday", _c(rf"{OWNER}\s+(?:birthday|bday|b-day|date\s+of\s+birth|dob)\s+is\s+(?:on\s+)?(?P<rest>)"), "birthday bday b-day birth dob", _birthday),
    # places
    Rule("moved_from_to", _c(rf"{HEAD}\s+(?:moved|relocated)\s+(?:here\s+)?from\s+{obj('src', END_ENT)}\s+to\s+{_ENT}"), "moved relocated", _moved_from_to),
    Rule("lives_in", _c(rf"{HEAD}\s+(?P<v>live|lives|lived|living|reside|resides|resided|residing|based|settled|staying|stay|stays)\s+(?:in|at|on|near)\s+{_ENT}"),
         "live lives lived living reside resides resided residing based settled staying stay stays", simple("lives_in", "fact", past_verbs=("lived", "resided"))),
    Rule("moved_to", _c(rf"{HEAD}\s+(?:moved|relocated)\s+(?:back\s+|over\s+|out\s+)?to\s+{_ENT}"), "moved relocated", simple("lives_in", "fact")),
    Rule("from", _c(rf"{HEAD}\s+(?:(?P<v>come|comes|came)\s+)?(?:originally\s+)?from\s+{_ENT}"), "from", _from),
    Rule("grew_up", _c(rf"{HEAD}\s+grew\s+up\s+in\s+{_ENT}"), "grew", simple("from", "fact")),
    Rule("hometown", _c(rf"{OWNER}\s+home\s*town\s+is\s+{_ENT}"), "hometown home", simple("from", "fact", owner=True)),
    # work and study
    Rule("works_as", _c(rf"{HEAD}\s+(?P<v>work|works|worked|working)\s+as\s+(?:an?\s+|the\s+)?{obj('title', END_ENT)}(?:\s+(?:at|for|with)\s+{_ORG})?"), "work works worked working", _job),
    Rule("works_at", _c(rf"{HEAD}\s+(?P<v>work|works|worked|working|employed|interning|interned)\s+(?:at|for|by)\s+{_ORG}(?:\s+as\s+(?:an?\s+|the\s+)?{obj('title', END_ENT)})?"),
         "work works worked working employed interning interned", _job),
    Rule("job_at", _c(rf"{HEAD}\s+(?:an?|the)\s+{obj('title', END_ENT)}\s+(?:at|for|of|with)\s+{_ORG}"), _OCCUPATION_WORDS, lambda m, c: _job(m, c, need_be=True, check=True)),
    Rule("job_title", _c(rf"{HEAD}\s+(?:an?)\s+{obj('title', END_ENT)}"), _OCCUPATION_WORDS, lambda m, c: _job(m, c, need_be=True, check=True)),
    Rule("my_job", _c(rf"{OWNER}\s+(?:job|job\s+title|role|position|occupation|profession)\s+is\s+(?:an?\s+)?{obj('title', END_ENT)}"), "job role position occupation profession", _job),
    Rule("my_employer", _c(rf"{OWNER}\s+(?:employer|company)\s+is\s+{_ORG}"), "employer company", _job),
    Rule("got_job", _c(rf"{HEAD}\s+(?:got|landed|started|accepted|took)\s+(?:a\s+|an\s+|my\s+|the\s+)?(?:new\s+)?(?:job|position|role|internship)\s+(?:at|with)\s+{_ORG}"), "job position role internship", _job),
    Rule("studies", _c(rf"{HEAD}\s+(?P<v>study|studies|studied|studying|major|majors|majored|majoring)\s+(?:in\s+)?{_ITEM}"), "study studies studied studying major majors majored majoring", simple("studies", "fact", "item")),
    Rule("studies_at", _c(rf"{HEAD}\s+(?:study|studies|studying|am\s+a\s+student)\s+(?:\w+\s+){{0,3}}?at\s+{_ENT}"), "study studies studying student", simple("studies_at", "fact")),
    Rule("graduated", _c(rf"{HEAD}\s+graduated\s+from\s+{_ENT}"), "graduated", simple("graduated_from", "fact")),
    Rule("volunteers", _c(rf"{HEAD}\s+(?:volunteer|volunteers|volunteered|volunteering)\s+(?:at|for|with)\s+{_ENT}"), "volunteer volunteers volunteered volunteering", simple("volunteers_at", "fact")),
    Rule("member", _c(rf"{HEAD}\s+(?:joined|(?:a\s+)?member\s+of|belongs?\s+to)\s+{_ENT}"), "joined member belong belongs", simple("member_of", "fact")),
    # tastes
    Rule("likes", _c(rf"{HEAD}\s+(?P<v>like|likes|liked|love|loves|loved|enjoy|enjoys|enjoyed|adore|adores|adored|dig|digs)\s+{_LIST}"),
         "like likes liked love loves loved enjoy enjoys enjoyed adore adores adored dig digs", simple("likes", "preference", "item", many=True)),
    Rule("likes_be", _c(rf"{HEAD}\s+(?:a\s+(?:big\s+|huge\s+|massive\s+)?fan\s+of|into|fond\s+of|passionate\s+about|obsessed\s+with|crazy\s+about|keen\s+on|a\s+lover\s+of)\s+{_LIST}"),
         "fan into fond passionate obsessed crazy keen lover", simple("likes", "preference", "item", many=True, need_be=True)),
    Rule("dislikes", _c(rf"{HEAD}\s+(?P<v>hate|hates|hated|dislike|dislikes|disliked|detest|detests|despise|despises|loathe|loathes|cannot\s+stand|can\s+not\s+stand|could\s+not\s+stand|cannot\s+bear)\s+{_LIST}"),
         "hate hates hated dislike dislikes disliked detest detests despise despises loathe loathes stand bear", simple("dislikes", "preference", "item", many=True)),
    Rule("prefers", _c(rf"{HEAD}\s+(?:prefer|prefers|preferred)\s+{obj('obj', END_LIST.replace('|over|', '|over|to|'))}(?:\s+(?:over|to|rather\s+than|instead\s+of|than)\s+{obj('other', END_LIST)})?"), "prefer prefers preferred", _prefers),
    Rule("rather", _c(rf"{SUBJ}\s+would\s+rather\s+{obj('obj', END_LIST)}\s+than\s+{obj('other', END_LIST)}"), "rather", _prefers),
    Rule("favourite", _c(rf"{OWNER}\s+(?:all[\s-]time\s+|absolute\s+|personal\s+|current\s+)?(?:favou?rite|fave|fav)\s+(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?(?P<cat>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?)\s+(?:is|are|was|were|has\s+to\s+be|would\s+have\s+to\s+be)(?P<neg>\s+not)?\s+{_LIST}"), "favourite favorite fave fav", _favourite),
    Rule("favourite_inv", _c(rf"(?:^|[,;]\s*|\b(?:and|but|so|think|guess)\s+)(?P<obj>[^,;.!?]{{1,60}}?)\s+(?:is|are|was)\s+{OWNER}\s+(?:all[\s-]time\s+)?(?:favou?rite|fave)\s+(?P<cat>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?){END_ENT}"), "favourite favorite fave", _favourite),
    Rule("one_of_favs", _c(rf"(?:^|[,;]\s*|\b(?:and|but|so|think|guess)\s+)(?P<obj>[^,;.!?]{{1,60}}?)\s+(?:is|are)\s+(?:one|some)\s+of\s+{OWNER}\s+(?:all[\s-]time\s+)?(?:favou?rites?|faves?)\b"), "favourite favorite fave favourites favorites faves",
         simple("likes", "preference", "item", owner=True)),
    Rule("allergic", _c(rf"{HEAD}\s+(?:(?:severely|very|deathly|highly|mildly|slightly|badly|super|extremely|seriously)\s+)?allergic\s+to\s+{_LIST}"), "allergic", simple("allergic_to", "fact", "item", many=True)),
    Rule("allergy_have", _c(rf"{HEAD}\s+(?:have|has|got)\s+(?:an?\s+)?(?:(?:severe|bad|serious|mild|slight)\s+)?(?P<obj>[\w\-]+(?:\s+[\w\-]+)?)\s+allerg(?:y|ies)\b"), "allergy allergies", simple("allergic_to", "fact", "item")),
    Rule("allergy_to", _c(rf"{HEAD}\s+(?:have|has|got)\s+(?:an?\s+)?(?:(?:severe|bad|serious|mild)\s+)?allerg(?:y|ies)\s+to\s+{_LIST}"), "allergy allergies", simple("allergic_to", "fact", "item", many=True)),
    Rule("my_allergy", _c(rf"{OWNER}\s+(?:(?:severe|bad|serious)\s+)?(?P<obj>[\w\-]+(?:\s+[\w\-]+)?)\s+allergy\b"), "allergy", simple("allergic_to", "fact", "item", owner=True)),
    Rule("intolerant", _c(rf"{HEAD}\s+(?P<obj>lactose|gluten|fructose|histamine|dairy|wheat)[\s-]+intolerant\b"), "intolerant", simple("intolerant_to", "fact", "item")),
    Rule("diet", _c(rf"{HEAD}\s+(?:an?\s+)?(?:strict\s+)?(?P<obj>vegetarian|vegan|pescatarian|pescetarian|gluten[\s-]free|keto|kosher|halal|teetotal|sober|paleo|plant[\s-]based)\b(?!\s+(?:food|restaurants?|recipes?|options?|places?|cafes?|dish(?:es)?|meals?|cook(?:ing|book)?))"),
         "vegetarian vegan pescatarian pescetarian gluten keto kosher halal teetotal sober paleo plant", simple("diet", "fact", "item", need_be=True)),
    Rule("avoids", _c(rf"{HEAD_NONEG}\s+(?:avoid|avoids|(?:do|does)\s+not\s+(?:eat|drink)|cannot\s+(?:eat|drink|have)|can\s+not\s+(?:eat|drink)|never\s+(?:eat|drink)|no\s+longer\s+(?:eat|drink)|stopped\s+(?:eating|drinking)|gave\s+up)\s+{_LIST}"),
         "avoid avoids eat drink eating drinking gave", simple("avoids", "fact", "item", many=True)),
    Rule("speaks", _c(rf"{HEAD}\s+(?:speak|speaks)(?!\s+(?:to|with|about|up|out|for|of|at|on|in)\b)\s+{_LIST}"), "speak speaks", simple("speaks", "fact", "item", many=True)),
    Rule("fluent", _c(rf"{HEAD}\s+(?:fluent|native|conversational|proficient)\s+in\s+{_LIST}"), "fluent native conversational proficient", simple("speaks", "fact", "item", many=True)),
    Rule("plays", _c(rf"{HEAD}\s+(?P<v>play|plays|played|playing)\s+(?:the\s+)?{_LIST}"), "play plays played playing", simple("plays", "preference", "item", many=True)),
    Rule("uses", _c(rf"{HEAD}\s+(?:use|uses|using)\s+(?!to\b){_ITEM}"), "use uses using", simple("uses", "fact", "item")),
    # possessions and family
    Rule("pet", _c(rf"{HEAD}\s+(?P<v>have|has|had|got|adopted|own|owns|owned|bought|rescued)\s+(?:a|an|one|two|three|four|five|\d+|another|some)?\s*(?:(?:new|little|big|small|old|young|cute|rescue|rescued|baby|black|white|brown|grey|gray|golden|ginger|tabby|senior|sweet|lovely)\s+){{0,2}}(?P<species>{PETS_RX})\b(?:(?:,\s*|\s+)(?:named|called)\s+(?P<pname>{NAME_ANY}))?"),
         _PET_WORDS, _pet),
    Rule("pet_named", _c(rf"{OWNER}\s+{ADJ}(?P<species>{PETS_RX})(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<pname>{NAME_ANY})"), "name called named", _pet),
    Rule("has_family", _c(rf"{HEAD}\s+(?:have|has|had)\s+(?P<obj>(?:a|an|one|two|three|four|five|six|seven|\d+)\s+(?:(?:young|little|small|older|younger|big|grown|grown-up|twin|adult|beautiful|wonderful)\s+)?(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings?|grandchildren|grandkids|grandsons?|granddaughters?|twins|boys|girls|babies|baby))\b"),
         "kid kids child children son sons daughter daughters brother brothers sister sisters sibling siblings grandchildren grandkids grandson grandsons granddaughter granddaughters twins boys girls babies baby", simple("has", "fact", "act")),
    Rule("owns", _c(rf"{HEAD}\s+(?P<v>own|owns|owned)\s+(?!(?:a|an|one|two|\d+)?\s*{PETS_RX}\b){_ITEM}"), "own owns owned", simple("owns", "fact", "item", past_verbs=("owned",))),
    Rule("rel_appos", _c(rf"\bmy\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX}|{PETS_RX}),?\s+(?P<name>{NAME})"), "my", _relation),
    Rule("rel_is_my", _c(rf"(?P<name>{NAME})\s+(?:is|was)\s+(?:also\s+)?my\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX})\b"), "my", _relation),
    Rule("rel_named", _c(rf"{OWNER}\s+(?P<ex>ex[\s-]+)?{ADJ}(?P<rel>{REL_RX})(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+(?P<name>{NAME_ANY})"), "name called named", _relation),
    Rule("married", _c(rf"{HEAD}\s+(?:(?:happily|recently|just)\s+)?(?P<v>married|engaged|dating|seeing|divorced|separated)(?:\s+(?:to|from|with))?\s+(?P<name>{NAME}|my\s+\w+|(?:a|an)\s+\w+)"),
         "married engaged dating seeing divorced separated", _married),
    # contact
    Rule("phone", _c(rf"{OWNER}\s+(?:(?:cell|mobile|home|work|office|personal|new)\s+)?(?:phone(?:\s+number)?|number|cell(?:\s+number)?|mobile(?:\s+number)?|telephone(?:\s+number)?)\s+is\s+(?P<obj>{PHONE})"),
         "phone number cell mobile telephone", simple("phone", "fact", "item", owner=True)),
    Rule("email", _c(rf"{OWNER}\s+(?:(?:work|personal|private|new|school)\s+)?e-?mail(?:\s+address)?\s+is\s+(?P<obj>{EMAIL})"), "email e-mail mail", simple("email", "fact", "item", owner=True)),
    Rule("reach_email", _c(rf"\b(?:reach|contact|email|e-mail|message|ping)\s+me\s+(?:at|on|via)\s+(?P<obj>{EMAIL})"), "me", lambda m, c: [_t(Subject(c.me, False), "email", m.group("obj"), True, "fact")]),
    Rule("reach_phone", _c(rf"\b(?:reach|contact|text|call|ring|message|ping)\s+me\s+(?:at|on)\s+(?P<obj>{PHONE})"), "me", lambda m, c: [_t(Subject(c.me, False), "phone", m.group("obj"), True, "fact")]),
    Rule("website", _c(rf"{OWNER}\s+(?:personal\s+)?(?:website|site|blog|homepage|portfolio)\s+is\s+(?P<obj>{URL}|[\w\-]+(?:\.[\w\-]+)+)"), "website site blog homepage portfolio", simple("website", "fact", "item", owner=True)),
    Rule("handle", _c(rf"{OWNER}\s+(?P<plat>twitter|instagram|insta|github|gitlab|linkedin|telegram|discord|tiktok|mastodon|bluesky|reddit|snapchat|youtube|twitch|steam|skype|slack)(?:\s+(?:handle|username|user\s*name|account|id|name|profile|tag))?\s+is\s+(?P<obj>@?[\w.\-]+)"),
         "twitter instagram insta github gitlab linkedin telegram discord tiktok mastodon bluesky reddit snapchat youtube twitch steam skype slack",
         lambda m, c: [_t(s, f"{'instagram' if m.group('plat').lower() == 'insta' else m.group('plat').lower()}_handle", m.group("obj").rstrip("."), True, "fact")] if (s := owner_of(m, c)) else []),
    # events
    Rule("went_to", _c(rf"{HEAD}\s+(?P<v>went|go|goes|been)\s+(?:back\s+)?to\s+(?!(?:see|visit|get|buy|pick|meet|watch|check|grab|do|have|make|take|play|eat|help|sleep|bed|be|the\s+bathroom|it|this|that)\b){_ENT}"),
         "went go goes been", lambda m, c: _went(m, c)),
    Rule("visited", _c(rf"{HEAD}\s+(?:visited|toured|explored)\s+{_ENT}"), "visited toured explored", simple("visited", "event")),
    Rule("attended", _c(rf"{HEAD}\s+(?:attended|attend|attends)\s+{_ENT}"), "attended attend attends", simple("attended", "event")),
    Rule("met", _c(rf"{HEAD}\s+(?:met|met\s+up\s+with|ran\s+into|bumped\s+into|hung\s+out\s+with|caught\s+up\s+with)\s+{_ENT}"), "met ran bumped hung caught", simple("met", "event")),
    Rule("bought", _c(rf"{HEAD}\s+(?:bought|purchased|ordered|got\s+(?:myself\s+)?(?:a|an)\s+new)\s+(?!(?:a|an|one|two)?\s*{PETS_RX}\b){_ITEM}"), "bought purchased ordered got", simple("bought", "event", "item")),
    # feelings and intentions
    Rule("emotion", _c(rf"{HEAD}\s+(?:(?P<feel>feel|feels|felt|feeling)\s+)?{_INTENS}(?P<emo>{_EMO_RX})\b"), _EMOTION_WORDS, _emotion),
    Rule("plan", _c(rf"(?<!\bif\s)(?<!whether\s){HEAD_NONEG}(?P<neg1>\s+(?:do\s+not|does\s+not|am\s+not|is\s+not|are\s+not|never))?\s+{_MODAL}(?P<neg2>\s+not|\s+never)?\s+{_ACT}"),
         "will shall going plan plans planning intend intends about have has need needs must hope hopes hoping want wants would thinking aim scheduled supposed expect might should considering", _plan),
    Rule("remind", _c(rf"\bremind\s+me\s+(?:to|about|that)\s+{_ACT}"), "remind", _plan),
    Rule("remember_to", _c(rf"^(?:(?:ok(?:ay)?|so|also|and|oh|hey|btw|please|pls|just)[,!]?\s+)*(?:remember|do\s+not\s+forget|never\s+forget)\s+to\s+{_ACT}"), "remember forget", _plan),
    Rule("have_event", _c(rf"{HEAD_NONEG}\s+(?:have|has|got)\s+(?:an?|my|the|another|one\s+more|our)\s+(?P<obj>(?:[\w'\-]+\s+){{0,3}}?{_EVENT_NOUN})\b"), _EVENT_WORDS, _plan),
    Rule("progressive", _c(rf"{HEAD}\s+(?P<obj>(?:flying|driving|leaving|heading|travell?ing|moving|relocating|meeting|seeing|visiting|starting|going|coming|returning|hosting|attending|taking|having|getting|playing|running|doing|working|celebrating|throwing|cooking|picking|catching|joining|presenting|launching)\b[^,;!?()]*)"),
         "flying driving leaving heading traveling travelling moving relocating meeting seeing visiting starting going coming returning hosting attending taking having getting playing running doing working celebrating throwing cooking picking catching joining presenting launching", _progressive),
    # knowledge
    Rule("role_of", _c(rf"(?P<subj>{NAME})\s+(?:is|was)\s+(?:also\s+)?the\s+(?P<role>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?)\s+of\s+{_ENT}"), "of",
         lambda m, c: _knowledge_of(m, c)),
    Rule("is_a", _c(rf"(?P<subj>{NAME})\s+(?P<v>is|was)\s+(?:an?)\s+{_ITEM}"), "a an", _is_a),
    Rule("located_in", _c(rf"(?P<subj>{NAME})\s+(?:is|are)\s+(?:located|situated)\s+in\s+{_ENT}"), "located situated", simple("located_in", "knowledge")),
)


_WORD = re.compile(r"[a-z0-9](?:[a-z0-9\-]*[a-z0-9])?")
_OCC_SUFFIX = re.compile(r"\w(?:ist|ician|ologist|eer|grapher|ator)\b")


def sentence_words(lower: str) -> frozenset[str]:
    """The words of a lowercased sentence plus the ``#digit``/``#occ`` markers the rule gates use."""
    words = set(_WORD.findall(lower))
    if any(ch.isdigit() for ch in lower):
        words.add("#digit")
    if _OCC_SUFFIX.search(lower):
        words.add("#occ")
    return frozenset(words)


def run_rules(sentence: str, words: frozenset[str], ctx: Ctx) -> list[RawTriple]:
    """All triples the rules find in one normalised sentence, deduplicated (first rule wins)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[RawTriple] = []
    for rule in RULES:
        if rule.gate.isdisjoint(words):
            continue
        for m in rule.regex.finditer(sentence):
            for triple in rule.handler(m, ctx):
                key = (triple.subject.lower(), triple.predicate, triple.object.lower())
                if key not in seen:
                    seen.add(key)
                    out.append(triple)
    return out
