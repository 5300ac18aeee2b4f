"""The predicate vocabulary shared by the extractors, governance and the graph.

Predicates are the join keys of the symbolic side: a fact stored as ``works_for`` is invisible to a query or a
conflict check written against ``works_at``. Every extractor therefore funnels its predicates through
:func:`canonical_predicate`, and governance asks :func:`is_functional` instead of keeping its own list.

Open families (``favourite_<x>``, ``<platform>_handle``, ``<role>_of``) are allowed because their suffix carries the
meaning; everything else should come from :data:`PREDICATES`.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from neusym.language import regex as rx

__all__ = [
    "FUNCTIONAL_PREDICATES",
    "FUNCTIONAL_PREFIXES",
    "PREDICATES",
    "PREDICATE_ALIASES",
    "PREDICATE_TAGS",
    "VALUE_PREDICATES",
    "canonical_predicate",
    "is_functional",
    "normalise_predicate",
    "predicate_tag",
    "TOPIC_PREDICATES",
    "PREDICATE_SPECS",
    "PredicateSpec",
    "topic_predicates",
]

PREDICATES: Mapping[str, str] = MappingProxyType(
    {
        # identity
        "name": "the subject's name or the name they want to be called",
        "age": "age in years (a number as text)",
        "birthday": "birth date: ISO date, or 'May 3' when the year is unknown",
        "birth_year": "year of birth",
        "born_in": "place of birth",
        "nationality": "nationality as a capitalised demonym, e.g. Canadian",
        # places
        "lives_in": "current home town/city/country/address (moved_to is folded into this)",
        "from": "place the subject comes from / grew up in",
        "located_in": "where a non-person thing is (knowledge)",
        # work and study
        "works_at": "current employer or workplace",
        "job_title": "occupation or role",
        "studies": "field of study",
        "studies_at": "school or university attended now",
        "graduated_from": "school or university graduated from",
        "member_of": "club, team, group or organisation joined",
        "volunteers_at": "organisation the subject volunteers for",
        # tastes
        "likes": "things or activities the subject likes, loves or enjoys",
        "dislikes": "things the subject hates or dislikes",
        "prefers": "the option the subject prefers (polarity False for the rejected alternative)",
        "favourite_*": "favourite thing of a category, e.g. favourite_colour",
        "diet": "dietary pattern: vegetarian, vegan, halal ...",
        "avoids": "food, drink or substance the subject does not consume",
        "allergic_to": "allergen",
        "intolerant_to": "food intolerance (lactose, gluten ...)",
        "speaks": "language spoken",
        "plays": "sport, game or instrument played",
        "uses": "tool, product or service used",
        # possessions and family
        "has_pet": "pet (its name when known, else its species)",
        "is_a": "class membership, e.g. a pet's species or a knowledge fact",
        "has": "something the subject has that no more specific predicate covers: 'two kids', a collection, a business",
        "owns": "owned object",
        "married_to": "spouse",
        "partner_of": "unmarried partner, fiance(e)",
        "sibling_of": "brother or sister",
        "child_of": "subject is the child of the object (object is a parent)",
        "parent_of": "subject is the parent of the object",
        "grandchild_of": "subject is the grandchild of the object",
        "relative_of": "other family: cousin, aunt, uncle, in-laws",
        "friend_of": "friend",
        "colleague_of": "co-worker",
        "reports_to": "boss or manager",
        "neighbour_of": "neighbour",
        "roommate_of": "roommate or flatmate",
        # contact
        "phone": "phone number",
        "email": "email address",
        "website": "personal website or blog URL",
        "*_handle": "account on a platform, e.g. github_handle",
        # events (episodic; usually type observation)
        "went_to": "place or event the subject went to",
        "goes_to": "place the subject habitually goes to",
        "visited": "place visited",
        "attended": "event attended",
        "met": "person met",
        "bought": "thing bought",
        # activities and events read from verbs (the clause reader's lexicon maps verbs onto these)
        "founded": "organisation, business, group or project the subject started or set up",
        "runs": "organisation, business, event or team the subject runs, manages, leads or coaches",
        "created": "thing the subject made: a painting, a book, a dish, a program, a building",
        "helps": "person, group or cause the subject helps, supports or mentors",
        "teaches": "subject, skill or class the subject teaches",
        "received": "award, prize, degree, gift or offer the subject received or won",
        "fears": "thing the subject is afraid of",
        "practises": "activity the subject practises, trains in or pursues (yoga, painting, running)",
        "reads": "book, show, podcast or channel the subject reads, watches, listens to or follows",
        "lost": "thing or person the subject lost (a job, a wallet, a relative)",
        "takes": "class, course, medication or route the subject takes",
        # intentions and states
        "plans_to": "planned activity (type plan; the due date is on the memory, not the triple)",
        "feels": "emotional state (type emotion; transient)",
        # knowledge
        "*_of": "role relation between two named things, e.g. capital_of, ceo_of",
        # open
        "<verb>": "open family: the verb lemma, with its particle or preposition ('paint', 'look_into', 'make_in'),"
        " when no vocabulary predicate fits (clause reader)",
    }
)
"""Predicate -> meaning. Entries with ``*`` or ``<>`` document open families rather than literal predicates."""

FUNCTIONAL_PREDICATES: frozenset[str] = frozenset(
    {
        "name",
        "age",
        "birthday",
        "birth_year",
        "born_in",
        "lives_in",
        "works_at",
        "job_title",
        "married_to",
        "phone",
        "email",
        "prefers",
    }
)
"""Predicates with one current value per subject: a new object for the same subject is a conflict (or an update).

``prefers`` is listed because a stated preference normally replaces the previous one; it is context-free here, so
"prefers tea" and "prefers window seats" look like a conflict, and governance should arbitrate rather than overwrite.
Use :func:`is_functional`, which also covers the ``favourite_*`` family.
"""

VALUE_PREDICATES: frozenset[str] = frozenset(
    {"plans_to", "feels", "age", "has", "birthday", "birth_year", "nationality", "diet"}
)
"""Predicates whose object is a value (an age, a mood, an activity), not a thing: it is not made an entity."""

FUNCTIONAL_PREFIXES: tuple[str, ...] = ("favourite_",)
"""Predicate families that are functional: one favourite colour at a time."""

PREDICATE_ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "moved_to": "lives_in",
        "lives": "lives_in",
        "live_in": "lives_in",
        "lives_at": "lives_in",
        "resides_in": "lives_in",
        "residence": "lives_in",
        "based_in": "lives_in",
        "home": "lives_in",
        "location": "lives_in",
        "city": "lives_in",
        "address": "lives_in",
        "is_from": "from",
        "comes_from": "from",
        "from_place": "from",
        "hometown": "from",
        "origin": "from",
        "grew_up_in": "from",
        "born_at": "born_in",
        "birthplace": "born_in",
        "place_of_birth": "born_in",
        "birth_date": "birthday",
        "date_of_birth": "birthday",
        "dob": "birthday",
        "birthdate": "birthday",
        "works_for": "works_at",
        "work_at": "works_at",
        "employed_by": "works_at",
        "employed_at": "works_at",
        "employer": "works_at",
        "company": "works_at",
        "job": "job_title",
        "occupation": "job_title",
        "profession": "job_title",
        "title": "job_title",
        "role": "job_title",
        "is_employed_as": "job_title",
        "works_as": "job_title",
        "like": "likes",
        "love": "likes",
        "loves": "likes",
        "enjoys": "likes",
        "enjoy": "likes",
        "is_fan_of": "likes",
        "hate": "dislikes",
        "hates": "dislikes",
        "dislike": "dislikes",
        "prefer": "prefers",
        "preference": "prefers",
        "allergy": "allergic_to",
        "allergic": "allergic_to",
        "is_allergic_to": "allergic_to",
        "allergies": "allergic_to",
        "pet": "has_pet",
        "owns_pet": "has_pet",
        "phone_number": "phone",
        "telephone": "phone",
        "mobile": "phone",
        "email_address": "email",
        "e_mail": "email",
        "spouse": "married_to",
        "wife": "married_to",
        "husband": "married_to",
        "is_married_to": "married_to",
        "partner": "partner_of",
        "dating": "partner_of",
        "sibling": "sibling_of",
        "sister_of": "sibling_of",
        "brother_of": "sibling_of",
        "friend": "friend_of",
        "friends_with": "friend_of",
        "is_friend_of": "friend_of",
        "colleague": "colleague_of",
        "coworker_of": "colleague_of",
        "plan": "plans_to",
        "plans": "plans_to",
        "will": "plans_to",
        "intends_to": "plans_to",
        "going_to": "plans_to",
        "plan_to": "plans_to",
        "feeling": "feels",
        "feel": "feels",
        "emotion": "feels",
        "speaks_language": "speaks",
        "language": "speaks",
        "study": "studies",
        "major": "studies",
        "is": "is_a",
        "is_an": "is_a",
        "instance_of": "is_a",
        "type": "is_a",
        "visit": "visited",
        "attend": "attended",
    }
)
"""Synonyms an LLM (or a user-written triple) tends to produce, mapped to the canonical predicate."""

PREDICATE_TAGS: Mapping[str, str] = MappingProxyType(
    {
        "name": "identity",
        "age": "identity",
        "birthday": "identity",
        "birth_year": "identity",
        "born_in": "identity",
        "nationality": "identity",
        "lives_in": "location",
        "from": "location",
        "located_in": "location",
        "works_at": "work",
        "job_title": "work",
        "studies": "education",
        "studies_at": "education",
        "graduated_from": "education",
        "member_of": "community",
        "volunteers_at": "community",
        "likes": "preference",
        "dislikes": "preference",
        "prefers": "preference",
        "diet": "food",
        "avoids": "food",
        "allergic_to": "health",
        "intolerant_to": "health",
        "speaks": "language",
        "plays": "hobby",
        "uses": "tools",
        "has_pet": "pet",
        "has": "family",
        "owns": "possession",
        "married_to": "relationship",
        "partner_of": "relationship",
        "sibling_of": "family",
        "child_of": "family",
        "parent_of": "family",
        "grandchild_of": "family",
        "relative_of": "family",
        "friend_of": "relationship",
        "colleague_of": "work",
        "reports_to": "work",
        "neighbour_of": "relationship",
        "roommate_of": "relationship",
        "phone": "contact",
        "email": "contact",
        "website": "contact",
        "went_to": "event",
        "goes_to": "routine",
        "visited": "event",
        "attended": "event",
        "met": "event",
        "bought": "event",
        "plans_to": "plan",
        "feels": "emotion",
        "founded": "work",
        "runs": "work",
        "created": "hobby",
        "helps": "community",
        "teaches": "work",
        "received": "event",
        "fears": "health",
        "practises": "hobby",
        "reads": "hobby",
        "lost": "event",
        "takes": "routine",
    }
)

"""Predicate -> topic tag put on memories, so callers can filter by topic without knowing predicates."""


class PredicateSpec(NamedTuple):
    """One vocabulary predicate: what it means, whether it holds one value at a time, and its topic tag."""

    description: str
    functional: bool
    tag: str | None


PREDICATE_SPECS: Mapping[str, PredicateSpec] = MappingProxyType(
    {
        name: PredicateSpec(meaning, name in FUNCTIONAL_PREDICATES, PREDICATE_TAGS.get(name))
        for name, meaning in PREDICATES.items()
        if "*" not in name and "<" not in name
    }
)
"""The literal predicates of the vocabulary in one table: description, functional flag and tag.

Governance reads ``functional`` to decide between superseding (a new value replaces the old one) and adding a
value; the LLM prompt lists the descriptions; :class:`~neusym.extraction.semantic.SemanticPredicateMapper` embeds
them. Families (``favourite_*`` functional, ``*_handle``, ``*_of``, open verb lemmas) are covered by
:func:`is_functional` and :func:`predicate_tag`.
"""

_US_TO_UK = {
    "favorite": "favourite",
    "color": "colour",
    "flavor": "flavour",
    "theater": "theatre",
    "center": "centre",
}
_CAMEL = rx.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NON_WORD = rx.compile(r"[^a-z0-9]+")


def _ascii_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def canonical_predicate(raw: str) -> str | None:
    """Return the canonical snake_case form of ``raw``, or ``None`` if nothing usable is left.

    camelCase and spaces become underscores, accents are folded, US spellings of the favourite family become
    British ("favorite_color" -> "favourite_colour") and known synonyms map to the vocabulary ("works_for" ->
    "works_at"). A predicate that starts with a digit or has no ASCII letters is rejected: it would not be a valid
    relationship name in Cypher and almost always means the model put a value where the predicate belongs.
    """
    if not isinstance(raw, str):
        return None
    return _canonical(raw)


@functools.lru_cache(maxsize=8192)
def _canonical(raw: str) -> str | None:
    """:func:`canonical_predicate` of a string, memoised: a pure function of ``raw`` called ~12 times per memory by
    rule extraction on a few hundred distinct predicates (13% of extraction CPU on LoCoMo + scale texts; the outputs
    are identical, checked on 5,760 texts)."""
    text = _CAMEL.sub("_", _ascii_fold(raw.strip()))
    snake = _NON_WORD.sub("_", text.casefold()).strip("_")
    if not snake or not snake[0].isalpha() or len(snake) > 64:
        return None
    parts = [_US_TO_UK.get(p, p) for p in snake.split("_")]
    if parts[0] in {"fav", "fave", "favourite"} and len(parts) > 1:
        parts[0] = "favourite"
    snake = "_".join(parts)
    return PREDICATE_ALIASES.get(snake, snake)


def is_functional(predicate: str) -> bool:
    """True if a subject can hold only one current value for ``predicate`` (see :data:`FUNCTIONAL_PREDICATES`)."""
    canonical = canonical_predicate(predicate)
    if canonical is None:
        return False
    return canonical in FUNCTIONAL_PREDICATES or canonical.startswith(FUNCTIONAL_PREFIXES)


def predicate_tag(predicate: str) -> str | None:
    """Topic tag for a canonical predicate (``favourite_*`` -> ``preference``, ``*_handle`` -> ``contact``)."""
    tag = PREDICATE_TAGS.get(predicate)
    if tag is not None:
        return tag
    if predicate.startswith("favourite_"):
        return "preference"
    if predicate.endswith("_handle"):
        return "contact"
    return None


TOPIC_PREDICATES: dict[str, tuple[str, ...]] = {
    **{
        w: ("lives_in",)
        for w in (
            "address",
            "home",
            "live",
            "lived",
            "living",
            "moved",
            "move",
            "city",
            "residence",
            "apartment",
            "flat",
            "house",
        )
    },
    **{w: ("phone",) for w in ("phone", "mobile", "cell", "telephone")},
    **{w: ("email",) for w in ("email", "e-mail", "mail")},
    **{w: ("works_at", "job_title") for w in ("job", "work", "employer", "company", "workplace", "career")},
    **{w: ("job_title",) for w in ("occupation", "profession", "title")},
    **{
        w: ("married_to", "partner_of")
        for w in (
            "partner",
            "wife",
            "husband",
            "spouse",
            "married",
            "marriage",
            "relationship",
            "girlfriend",
            "boyfriend",
        )
    },
    **{w: ("allergic_to",) for w in ("allergy", "allergies", "allergic")},
    **{w: ("has_pet",) for w in ("pet", "pets")},
    **{w: ("birthday", "birth_year") for w in ("birthday", "birth", "born")},
    "age": ("age",),
    "name": ("name",),
    "diet": ("diet",),
}
"""Topic words -> predicates: "forget my address" and "where does she live?" must find "I moved to Lisbon",
which never says "address" or "live"."""

_NOT_TOPICS = frozenset(
    {
        "is",
        "type",
        "will",
        "plan",
        "plans",
        "like",
        "love",
        "feel",
        "feeling",
        "have",
        "has",
        "i",
        "me",
        "my",
        "user",
        "what",
        "said",
    }
)


def topic_predicates(topic: str) -> list[str]:
    out: list[str] = []
    for word in rx.findall(r"[a-z][a-z\-]*", topic.lower()):
        if word in _NOT_TOPICS:
            continue
        found = TOPIC_PREDICATES.get(word)
        if found is None:
            canonical = canonical_predicate(word)
            found = (
                (canonical,) if canonical and canonical in PREDICATES and canonical not in _NOT_TOPICS else ()
            )
        out.extend(p for p in found if p not in out)
    return out


def normalise_predicate(raw: str) -> str | None:
    """:func:`canonical_predicate`, then the verb lexicon for what the vocabulary does not know.

    A chat model writes "relocated_to", "is_employed_by", "took_up"; the rules read the same verbs through the
    lexicon, so both paths must land on one predicate (``lives_in``, ``works_at``, ``practises``). Returns the
    canonical form unchanged when no lexicon entry fits (an open predicate, like the clause reader's).
    """
    from neusym.extraction._lexicon import lemma, map_verb  # the lexicon imports this module

    canonical = canonical_predicate(raw)
    if (
        canonical is None
        or canonical in PREDICATES
        or canonical.startswith(("favourite_",))
        or canonical.endswith(("_handle", "_of"))
    ):
        return canonical
    parts = canonical.split("_")
    if parts[0] in {"is", "was", "are", "be", "has", "had", "have", "got", "gets"} and len(parts) > 1:
        parts = parts[1:]  # "is_employed_by" -> "employed_by"
    verb = lemma(parts[0])
    rest = parts[1:]
    for split in range(len(rest), -1, -1):
        particle = "_".join(rest[: split - 1]) if split > 1 else None
        prep = rest[split - 1] if split >= 1 else None
        hit = map_verb(verb, prep, particle) if prep else map_verb(verb, None, particle)
        if hit:
            return hit[0]
    return canonical
