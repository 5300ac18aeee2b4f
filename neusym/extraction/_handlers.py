"""Match handlers: how a regex match of :mod:`neusym.extraction._rules` becomes triples.

Handlers hold the judgement calls that a regex cannot express: whether "was" ends a state ("I was living in
Paris"), whether a title is an occupation, whether "going to Paris" is a trip or "going to call" a verb, and
which of two objects a preference rejects. Keeping them apart from the patterns keeps the rule table readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from neusym.extraction._grammar import (
    Ctx,
    Handler,
    RawTriple,
    Subject,
    clean_object,
    disagrees,
    owner_of,
    split_list,
    subject_of,
)
from neusym.extraction._text import DEMONYMS, EMOTIONS, OCCUPATIONS, PETS, RELATIONS, singular, words_of
from neusym.extraction.dates import format_day
from neusym.extraction.vocabulary import canonical_predicate
from neusym.language import regex as rx

__all__ = [
    "age",
    "account",
    "job_checked",
    "name_guess",
    "self_fact",
    "Handler",
    "birthday",
    "born",
    "emotion",
    "favourite",
    "from_place",
    "is_a",
    "job",
    "knowledge_of",
    "married",
    "moved_from_to",
    "name",
    "nationality",
    "neg_of",
    "pet",
    "plan",
    "prefers",
    "progressive",
    "relation",
    "simple",
    "triple",
    "went",
]

_BE = frozenset(
    {"am", "is", "are", "was", "were", "might be", "may be", "must be", "could be", "should be", "will be"}
)
_PAST_NEG = frozenset({"used to", "no longer", "no more"})


def neg_of(m: re.Match[str], *groups: str) -> tuple[bool, bool]:
    """(polarity, past) from the negation groups of a match."""
    for g in groups or ("neg",):
        value = m.groupdict().get(g)
        if value:
            low = " ".join(value.lower().split())
            return False, low in _PAST_NEG
    return True, False


def triple(
    subj: Subject, pred: str, obj_: str, polarity: bool, kind: str, *, weight: float = 1.0, past: bool = False
) -> RawTriple:
    return RawTriple(subj.name, pred, obj_, polarity, weight, kind, subj.third_party, past, subj.pronoun)


def group_start(m: re.Match[str], group: str) -> int:
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
        if _copula_before_finite(gd.get("aux"), gd.get("v")):
            return []  # "Dancing is like second nature": "like" after "is" is a preposition
        polarity, past = neg_of(m)
        verb = (gd.get("v") or "").lower()
        if verb in past_set and not gd.get("aux"):
            polarity, past = False, True
        if (
            gd.get("aux", "")
            and (gd.get("aux") or "").lower() in {"was", "were"}
            and pred in {"lives_in", "works_at"}
        ):
            polarity, past = False, True
        start = group_start(m, group)
        objects = (
            split_list(m.group(group), obj_kind, ctx, start)
            if many
            else [clean_object(m.group(group), obj_kind, ctx, start)]
        )
        return [triple(subj, pred, o, polarity, kind, weight=weight, past=past) for o in objects if o]

    return handle


_PARTICIPLES = words_of("been gone done seen known met bought spoken grown had got gotten made")


def _copula_before_finite(aux: str | None, verb: str | None) -> bool:
    if not aux or not verb or aux.lower() not in {"am", "is", "are", "was", "were"}:
        return False
    low = verb.lower()
    return not (low.endswith(("ing", "ed")) or low in _PARTICIPLES)


def moved_from_to(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    out: list[RawTriple] = []
    new = clean_object(m.group("obj"), "ent", ctx, m.start("obj"))
    old = clean_object(m.group("src"), "ent", ctx, m.start("src"))
    if new:
        out.append(triple(subj, "lives_in", new, True, "fact"))
    if old:
        out.append(
            RawTriple(subj.name, "lives_in", old, False, 1.0, "fact", subj.third_party, True, derived=True)
        )
    return out


def from_place(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
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


def born(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    found = _date_after(ctx, m.start("rest"))
    if found:
        return [triple(subj, found[0], found[1], True, "fact")]
    place = clean_object(m.group("place"), "ent", ctx, group_start(m, "place"))
    out = [triple(subj, "born_in", place, True, "fact")] if place else []
    if place and m.group("raised"):
        out.append(triple(subj, "from", place, True, "fact"))
    return out


def birthday(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = owner_of(m, ctx)
    found = _date_after(ctx, m.start("rest"), 4)
    if subj is None or not found or found[0] != "birthday":
        return []
    return [triple(subj, "birthday", found[1], True, "fact")]


def name(m: re.Match[str], ctx: Ctx, weight: float = 1.0, group: str = "obj") -> list[RawTriple]:
    subj = owner_of(m, ctx) if "owner" in m.groupdict() else Subject(ctx.me, False)
    value = clean_object(m.group(group), "ent", ctx, m.start(group))
    if subj is None or not value or len(value.split()) > 4:
        return []
    low = value.lower()
    if (
        low in DEMONYMS
        or low in EMOTIONS
        or low in OCCUPATIONS
        or low in {"back", "later", "anytime", "now", "soon"}
    ):
        return []
    if not value[:1].isupper():
        value = value[:1].upper() + value[1:]
    return [triple(subj, "name", value, True, "fact", weight=weight)]


def job(m: re.Match[str], ctx: Ctx, *, need_be: bool = False, check: bool = False) -> list[RawTriple]:
    gd = m.groupdict()
    if need_be and (gd.get("aux") or "").lower() not in _BE:
        return []
    subj = owner_of(m, ctx) if "owner" in gd else subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = neg_of(m)
    if (gd.get("aux") or "").lower() in {"was", "were"} or (
        (gd.get("v") or "").lower() in {"worked", "interned"} and not gd.get("aux")
    ):
        polarity, past = False, True
    title = clean_object(gd.get("title"), "item", ctx, group_start(m, "title"))
    org = clean_object(gd.get("org"), "ent", ctx, group_start(m, "org"))
    if title and check and not is_occupation(title):
        return []
    out: list[RawTriple] = []
    if title:
        out.append(triple(subj, "job_title", title, polarity, "fact", past=past))
    if org:
        pred = "studies_at" if title and title.lower() == "student" else "works_at"
        out.append(triple(subj, pred, org, polarity, "fact", past=past))
    return out


def is_occupation(title: str) -> bool:
    head = title.lower().split()[-1]
    return head in OCCUPATIONS or head.endswith(("ist", "ician", "ologist", "eer", "grapher", "ator"))


def prefers(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = neg_of(m)
    first = clean_object(
        m.group("obj"), "act" if m.group("obj").lower().startswith("to ") else "item", ctx, m.start("obj")
    )
    other = clean_object(m.group("other"), "item", ctx, group_start(m, "other"))
    out = [triple(subj, "prefers", first, polarity, "preference", past=past)] if first else []
    if first and other and polarity:
        out.append(
            RawTriple(subj.name, "prefers", other, False, 1.0, "preference", subj.third_party, derived=True)
        )
    return out


_CATEGORY_FIX = {
    "color": "colour",
    "flavor": "flavour",
    "theater": "theatre",
    "tv": "tv_show",
    "film": "movie",
}


def favourite(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = owner_of(m, ctx)
    if subj is None:
        return []
    cat_words = [singular(w) for w in m.group("cat").lower().split()]
    cat = canonical_predicate("_".join(_CATEGORY_FIX.get(w, w) for w in cat_words))
    if not cat or cat in {"thing", "one", "part"}:
        return []
    values = split_list(m.group("obj"), "item", ctx, m.start("obj"))
    polarity = not m.groupdict().get("neg")
    return [triple(subj, f"favourite_{cat}", v, polarity, "preference") for v in values[:3]]


def pet(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    subj = owner_of(m, ctx) if "owner" in gd else subject_of(m, ctx)
    if subj is None:
        return []
    polarity, past = neg_of(m)
    if (gd.get("v") or "").lower() == "had" and not gd.get("aux"):
        polarity, past = False, True
    species = singular(" ".join(m.group("species").lower().split()))
    name = clean_object(gd.get("pname"), "ent", ctx, group_start(m, "pname"))
    if name and name.lower() in PETS:
        name = None
    out = [triple(subj, "has_pet", name or species, polarity, "fact", past=past)]
    if name and species != "pet":
        out.append(RawTriple(name, "is_a", species, True, 1.0, "fact", True))
    return out


def relation(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    subj = owner_of(m, ctx) if gd.get("owner") else Subject(ctx.me, False)
    name = clean_object(gd.get("name"), "ent", ctx, group_start(m, "name"))
    if subj is None or not name or name.split()[0].lower() in {"and", "is", "was", "who", "said"}:
        return []
    rel = " ".join(m.group("rel").lower().split())
    pred = RELATIONS.get(rel)
    if pred is None:  # a pet species
        return [
            triple(subj, "has_pet", name, True, "fact"),
            RawTriple(name, "is_a", singular(rel), True, 1.0, "fact", True),
        ]
    return [triple(subj, pred, name, not gd.get("ex"), "fact", past=bool(gd.get("ex")))]


def married(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    name = clean_object(m.group("name"), "ent", ctx, m.start("name"))
    if subj is None or not name:
        return []
    verb = m.group("v").lower()
    polarity, past = neg_of(m)
    if verb in {"divorced", "separated"}:
        polarity, past = False, True
    pred = "married_to" if verb in {"married", "divorced", "separated"} else "partner_of"
    return [triple(subj, pred, name, polarity, "fact", past=past)]


def emotion(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    gd = m.groupdict()
    if not gd.get("feel") and (gd.get("aux") or "").lower() not in _BE | {"have", "has"}:
        return []
    emo = m.group("emo").lower()
    nxt = ctx.sentence[m.end() : m.end() + 6].lower().split()[:1]
    if (
        emo in {"good", "great", "bad", "fine", "okay", "ok", "amazing", "terrible", "awful", "sick", "down"}
        and nxt
        and nxt[0] in {"at", "with", "for", "of", "to", "in", "on", "about", "and", "idea", "news", "thing"}
    ):
        return []
    subj = subject_of(m, ctx)
    if subj is None:
        return []
    polarity, _ = neg_of(m)
    return [triple(subj, "feels", emo, polarity, "emotion")]


_PERFECT = rx.compile(
    r"^have\s+(?:been|had|\w+ed|\w+en|done|gone|seen|made|found|got|known)\b", re.IGNORECASE
)
_GO_NOUN = words_of(
    "bed work school church college class town dinner lunch breakfast jail court hospital prison "
    "university uni mass therapy practice rehab the a an my our his her their this that some"
)
_SPEECH = rx.compile(
    r"^(?:say|admit|agree|tell\s+you|be\s+honest|confess|thank|apologi[sz]e|ask|mention|point\s+out|let\s+you|"
    r"keep\s+you\s+posted|keep\s+that\s+in\s+mind|check\s+it\s+out|try|see|think|wait|go\s+now)\b|"
    r"^(?:let|be|do|get|have|make|keep|go)$",
    re.I,
)
_ASPIRATION = ("hope", "want", "would like", "would love", "thinking", "considering", "aim", "wish")
_OBLIGATION = ("have to", "has to", "need to", "needs to", "must", "should", "supposed")


def plan(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
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
    if _PERFECT.match(act):
        return []  # "I might have found it otherwise" is about the past
    if modal.endswith("going to") and (act[:1].isupper() or act.split()[0].lower() in _GO_NOUN):
        act = f"go to {act}"
    polarity = not (gd.get("neg1") or gd.get("neg2") or gd.get("neg"))
    weight = 0.85 if any(a in modal for a in _ASPIRATION) else 1.0
    kind = "aspiration" if weight < 1.0 else "obligation" if any(o in modal for o in _OBLIGATION) else "plan"
    return [
        RawTriple(subj.name, "plans_to", act, polarity, weight, kind, subj.third_party, False, subj.pronoun)
    ]


def progressive(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    if (m.group("aux") or "").lower() not in {"am", "is", "are"}:
        return []
    words = m.group("obj").lower().split()
    if words[0] == "going" and words[1:2] == ["to"]:
        return []  # "going to X" is the plan rule's
    if not (ctx.future or words[0] in {"moving", "relocating"}):
        return []
    return plan(m, ctx)


_WENT = simple("went_to", "event")
_NATIONALITY = simple("nationality", "fact", "item", need_be=True)


def _titled(t: RawTriple) -> RawTriple:
    t.object = " ".join(w.capitalize() for w in t.object.split())
    return t


_GOES = simple("goes_to", "routine")


def went(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    if (m.group("aux") or "").lower() in {"will", "shall"}:
        return []
    return _WENT(m, ctx) if m.group("v").lower() in {"went", "been"} else _GOES(m, ctx)


def knowledge_of(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    role = canonical_predicate(m.group("role"))
    target = clean_object(m.group("obj"), "ent", ctx, m.start("obj"))
    if (
        subj is None
        or not role
        or not target
        or role
        in {"one", "best", "most", "rest", "end", "part", "kind", "type", "sort", "name", "first", "last"}
    ):
        return []
    return [RawTriple(subj.name, f"{role}_of", target, True, 0.85, "knowledge", subj.third_party)]


def is_a(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = subject_of(m, ctx)
    what = clean_object(m.group("obj"), "item", ctx, m.start("obj"))
    if subj is None or not what or subj.name == ctx.me:
        return []
    if is_occupation(what):
        past = m.group("v").lower() == "was"
        return [RawTriple(subj.name, "job_title", what, not past, 0.8, "fact", True, past, subj.pronoun)]
    return [RawTriple(subj.name, "is_a", what, True, 0.7, "knowledge", subj.third_party, False, subj.pronoun)]


def nationality(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    return [_titled(t) for t in _NATIONALITY(m, ctx)]


def job_checked(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    """``job`` for "I'm a X" shapes, where X must look like an occupation ("I'm a big fan" is not a job)."""
    return job(m, ctx, need_be=True, check=True)


def name_guess(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    """Names from "I'm John" or "this is John speaking": likely, but less certain than "my name is John"."""
    return name(m, ctx, 0.75, group="obj" if m.group("obj") else "obj2")


def self_fact(pred: str) -> Handler:
    """Handler for "reach me at <value>": the speaker's own contact detail, the whole match group as object."""

    def handle(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
        return [triple(Subject(ctx.me, False), pred, m.group("obj"), True, "fact")]

    return handle


_PLATFORM_ALIASES = {"insta": "instagram", "ig": "instagram"}


def account(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    subj = owner_of(m, ctx)
    if subj is None:
        return []
    platform = m.group("plat").lower()
    platform = _PLATFORM_ALIASES.get(platform, platform)
    return [triple(subj, f"{platform}_handle", m.group("obj").rstrip("."), True, "fact")]


def age(m: re.Match[str], ctx: Ctx) -> list[RawTriple]:
    """Ages from "I am 32" or "I just turned 32": the copula or "turn" is required, else any "X 123" is an age."""
    gd = m.groupdict()
    if not gd.get("turn") and (gd.get("aux") or "").lower() not in _BE:
        return []
    return _AGE(m, ctx)


_AGE = simple("age", "fact", "item", weight=0.9)
