"""Verb lemmas and the verb -> predicate lexicon: how "moved to", "relocated to" and "lives in" meet on ``lives_in``.

A regex per phrasing does not generalise; a lexicon of lemmas does. Every clause the extractor finds (from the
shallow clause reader or from a dependency parser) is reduced to ``(verb lemma, preposition, object)`` and mapped
here, so every path produces the same predicates. A verb the lexicon does not know keeps its lemma as an *open*
predicate ("paint", "look_into"): still a real S-P-O fact that links the subject to the object in the graph, and
optionally mapped onto the vocabulary by embedding similarity (:mod:`neusym.extraction.semantic`).

The lemmatiser is a suffix stripper with an irregular-verb table: no dictionary, no model, a few microseconds.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

from neusym.extraction._text import words_of
from neusym.language import regex as rx

__all__ = [
    "AUXILIARIES",
    "IRREGULAR",
    "LIGHT_VERBS",
    "NEGATIVE_FIND",
    "POSITIVE_FIND",
    "VERB_PREDICATES",
    "PREP_PREDICATES",
    "lemma",
    "looks_finite",
    "map_verb",
]

_IRREGULAR_TABLE = """
be: am is are was were been being 's
have: has had having
do: does did done doing
go: goes went gone going
make: made making  take: took taken  get: got gotten  give: gave given  find: found  buy: bought
begin: began begun  teach: taught  write: wrote written  see: saw seen  meet: met  feel: felt  keep: kept
leave: left  lose: lost  run: ran  sell: sold  tell: told  think: thought  bring: brought  build: built
win: won  hold: held  spend: spent  drive: drove driven  fly: flew flown  grow: grew grown  draw: drew drawn
break: broke broken  choose: chose chosen  come: came  become: became  say: said  pay: paid  send: sent
sing: sang sung  swim: swam swum  eat: ate eaten  fall: fell fallen  forget: forgot forgotten  hang: hung
lend: lent  lead: led  learn: learnt  mean: meant  ride: rode ridden  rise: rose risen  shoot: shot
sleep: slept  speak: spoke spoken  stand: stood  steal: stole stolen  throw: threw thrown
understand: understood  wear: wore worn  wake: woke woken  catch: caught  fight: fought  seek: sought
deal: dealt  feed: fed  flee: fled  know: knew known  hear: heard  sit: sat  shake: shook shaken  bite: bit bitten
hide: hid hidden  dig: dug  stick: stuck  bend: bent  light: lit  spin: spun  tear: tore torn  freeze: froze frozen
forgive: forgave forgiven  overcome: overcame  undertake: undertook undertaken  lie: lay lain  bear: bore born
blow: blew blown  hit: hit  put: put  quit: quit  set: set  cut: cut  let: let  cost: cost  shut: shut  read: read
hurt: hurt  spread: spread  upset: upset  bet: bet  split: split  withdraw: withdrew withdrawn
"""


def _irregular() -> dict[str, str]:
    out: dict[str, str] = {}
    for chunk in rx.findall(r"(\w+):\s*((?:[\w']+\s*)+?)(?=\s+\w+:|\s*$)", _IRREGULAR_TABLE.strip()):
        base, forms = chunk
        for form in forms.split():
            out.setdefault(form, base)
    return out


IRREGULAR: Mapping[str, str] = MappingProxyType(_irregular())
"""Irregular inflected form -> lemma ("went" -> "go")."""

_VOWELS = set("aeiouy")
_KEEP_DOUBLE = ("ll", "ss", "ff", "zz")
_DOUBLE_BASE = frozenset({"add", "err", "ebb", "egg", "purr", "buzz", "fizz"})
_E_ENDINGS = (
    "v",
    "c",
    "iz",
    "ys",
    "dg",
    "u",
    "ur",
    "ar",
    "or",
    "at",
    "it",
    "ut",
    "ag",
    "os",
    "ns",
    "rs",
    "ang",
    "eng",
    "bl",
    "pl",
    "tl",
    "dl",
    "gl",
    "kl",
    "fl",
    "zl",
    "ens",
    "ous",
    "uas",
    "aus",
    "rg",
    "eas",
    "ert",
    "ect",
)
_NO_E = words_of(
    "abort accept act adapt adjust admit adopt affect alert allow answer arrest assert assist attempt "
    "attract bag ballot bang bar bark basket beat belong benefit bid blanket blur blurt boast bolt book "
    "boost borrow bow bowl bracket brag bring budget cancel carpet cater cement chant chat cheat chop "
    "coast collect color colour comfort comment commit compost concert connect consist consult contact "
    "convert cook correct corrupt cost count credit crop cut defeat dent desert detect develop digest "
    "direct dirt discuss disrupt distort distract doubt drag drop dust eat edit effort enter envelop "
    "erupt escort exempt exert exhibit exist expect export extract exult fail faint ferment fit flag "
    "flirt flout flow focus follow forbid forget frequent gallop gather glow glut grant grow gut halt "
    "hang happen harvest head heat hint hit honor honour hook host hunt hurt import inherit input insert "
    "insist inspect insult interact interpret interrupt invent invest jacket jut kid knit know label "
    "labor lag lament lead level limit list listen load long look mail mark market melt mention mint "
    "model mop mount nag nail neglect nut object occur offer omit open order output paint park part pat "
    "pedal permit persist pilot pivot plant plead pocket point pop post prefer present prevent print "
    "profit protect protest pursuit put quit react read recruit refer reflect regret reject rent repeat "
    "report request resist respect rest result rid ring roast robot rocket row rust rut sail salt scar "
    "scout seat select shirt shop shout show shut sing sit skid skirt snag snow sort split spring sprint "
    "sprout spurt squint star start stir stop strut submit subtract suffer suggest suit support swap "
    "swing tag target tempt test throw ticket tilt tint toast torment total transport trap travel treat "
    "trust twist vault vent visit visitor vomit vow wag wait want water wonder work worry wrap "
    "perfect project suspect elect infect inject deflect dissect"
)


NO_E_VERBS = _NO_E
"""Verbs whose stem keeps no silent e: also a list of common verbs for telling a verb from a noun."""


def _add_e(stem: str) -> str:
    """Restore the silent e that -ed/-ing removed ("lov" -> "love", "creat" -> "create", "visit" stays)."""
    if stem in _NO_E or len(stem) < 2:
        return stem
    if len(stem) == 2 and stem[0] in _VOWELS:
        return stem + "e"  # us-ing -> use
    if rx.search(r"[^aeiou](?:ot|et|ad|ud)$|(?<!a)(?<!o)id$|[^s]is$|[^aeiou]ir$", stem) and stem not in _NO_E:
        return stem + "e"  # promote, complete, persuade, include, decide (not avoid, raid)
    if stem.endswith(_E_ENDINGS) and not stem.endswith(("ss", "ll", "ck")):
        return stem + "e"
    groups = rx.findall(r"[aeiou]+", stem)
    if (
        len(groups) == 1
        and len(stem) >= 3
        and stem[-1] not in _VOWELS | set("wxh")
        and stem[-2] in "aeiou"
        and stem[-3] not in _VOWELS
        and not stem.endswith(("en", "er", "on", "om"))
    ):
        return stem + "e"  # hop-ed -> hope, bak-ed -> bake, hik-ing -> hike (one syllable, C-V-C)
    return stem


_ODD_FORMS = {
    "focuses": "focus",
    "focused": "focus",
    "focusing": "focus",
    "welcoming": "welcome",
    "welcomed": "welcome",
    "mentoring": "mentor",
    "mentored": "mentor",
    "monitoring": "monitor",
    "monitored": "monitor",
    "overcoming": "overcome",
    "showcasing": "showcase",
    "showcased": "showcase",
    "showcases": "showcase",
}
_BASE_ING = words_of("bring sing ring string swing spring cling fling sting wring sling")


@functools.lru_cache(maxsize=8192)
def lemma(word: str) -> str:
    """Base form of an English verb form ("studies" -> "study", "moved" -> "move", "planning" -> "plan")."""
    w = word.lower()
    if w in IRREGULAR:
        return IRREGULAR[w]
    if len(w) <= 3 or w in _BASE_ING:
        return w
    if w in _ODD_FORMS:
        return _ODD_FORMS[w]
    if w.endswith("ied") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    for suffix in ("ing", "ed"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            stem = w[: -len(suffix)]
            if suffix == "ed" and w.endswith("eed") and len(w) <= 5:
                return w  # need, feed, seed
            if stem in _DOUBLE_BASE:
                return stem
            if (
                len(stem) >= 3
                and stem[-1] == stem[-2]
                and stem[-1] not in _VOWELS
                and not stem.endswith(_KEEP_DOUBLE)
            ):
                return stem[:-1]  # planned -> plan, shopping -> shop
            if suffix == "ed" and stem.endswith("e"):
                return stem  # agreed -> agree
            if suffix == "ing" and stem.endswith(("y", "e")):
                return stem  # studying, seeing
            return _add_e(stem)
    if w.endswith(("ches", "shes", "sses", "xes", "zzes", "oes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


AUXILIARIES = frozenset(
    [
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "will",
        "would",
        "shall",
        "should",
        "can",
        "could",
        "may",
        "might",
        "must",
    ]
)

_FINITE_IRREGULAR = frozenset(w for w, b in IRREGULAR.items() if b not in {"be", "have", "do"})


def looks_finite(word: str) -> bool:
    """True for a word that reads as a finite or past verb form in running text ("found", "enjoys", "taught")."""
    w = word.lower()
    return w in _FINITE_IRREGULAR or (
        len(w) > 3 and (w.endswith("ed") or (w.endswith("s") and not w.endswith(("ss", "us", "is"))))
    )


# verb lemma (+ particle/preposition) -> (predicate, kind). Kind feeds the memory type (see rules._KIND_TYPE).
_VERBS: dict[str, tuple[str, str]] = {}


def _add(pred: str, kind: str, keys: str) -> None:
    for key in keys.split():
        _VERBS[key] = (pred, kind)


_add(
    "lives_in",
    "fact",
    "live_in live_at live_near reside_in move_to relocate_to settle_in move_into rent_in base_in",
)
_add("from", "fact", "come_from grow_up_in hail_from")
_add("works_at", "fact", "work_at work_for employ_at employ_by intern_at join_as hire_by hire_at")
_add("job_title", "fact", "work_as serve_as employ_as hire_as promote_to")
_add("studies", "fact", "study major_in learn study_for")
_add("studies_at", "fact", "study_at enrol_at enroll_at enroll_in enrol_in")
_add("graduated_from", "fact", "graduate_from finish_at")
_add("member_of", "fact", "join belong_to sign_up_for join_in")
_add("volunteers_at", "fact", "volunteer_at volunteer_for volunteer_with volunteer_in")
_add(
    "likes",
    "preference",
    "like love enjoy adore appreciate value admire cherish treasure fancy relish savor savour",
)
_add("dislikes", "preference", "hate dislike detest despise loathe resent fear")
_add("prefers", "preference", "prefer favour favor")
_add("plays", "preference", "play")
_add("speaks", "fact", "speak")
_add("uses", "fact", "use switch_to rely_on drive wear")
_add("owns", "fact", "own possess")
_add("bought", "event", "buy purchase order")
_add("attended", "event", "attend participate_in take_part_in compete_in go_to_event")
_add(
    "visited",
    "event",
    "visit tour explore travel_to fly_to drive_to return_to stay_in stay_at vacation_in camp_in "
    "hike_in holiday_in trip_to",
)
_add("went_to", "event", "go_to head_to")
_add(
    "met",
    "event",
    "meet meet_with meet_up_with run_into bump_into hang_out_with catch_up_with reconnect_with "
    "spend_time_with",
)
_add("married_to", "fact", "marry")
_add("partner_of", "fact", "date engage_to")
_add("founded", "fact", "found start launch establish set_up open co_found cofound")
_add("runs", "fact", "run manage lead operate direct head own_and_run coach organize organise host chair")
_add(
    "created",
    "event",
    "make create paint write build design draw compose bake cook knit sew craft record film "
    "photograph sculpt publish produce carve code develop invent brew plant",
)
_add("teaches", "fact", "teach lecture instruct")
_add(
    "helps",
    "fact",
    "help support mentor tutor encourage assist care_for look_after inspire motivate guide "
    "comfort volunteer donate_to raise_money_for advise counsel train babysit",
)
_add("received", "event", "receive win earn get_award award gain obtain land")
_add("has", "fact", "have keep raise adopt foster collect")
_add("feels", "emotion", "feel")
_add("reads", "preference", "read listen_to watch follow subscribe_to stream")
_add("practises", "preference", "practise practice train_for do pursue take_up try")
_add("avoids", "fact", "avoid quit give_up cut_out stop abstain_from")
_add("allergic_to", "fact", "react_to")
_add("lost", "event", "lose")
_add("takes", "fact", "take take_class_in sign_up")

VERB_PREDICATES: Mapping[str, tuple[str, str]] = MappingProxyType(_VERBS)
"""``lemma`` or ``lemma_preposition`` -> (canonical predicate, kind)."""

PREP_PREDICATES: Mapping[str, str] = MappingProxyType(
    {
        "in": "in",
        "at": "at",
        "to": "to",
        "from": "from",
        "with": "with",
        "for": "for",
        "on": "on",
        "about": "about",
        "into": "into",
        "near": "near",
        "by": "by",
        "as": "as",
        "through": "through",
        "during": "during",
    }
)
"""Prepositions kept on an open verb predicate ("make" + "in" -> ``make_in``)."""

LIGHT_VERBS = frozenset(
    {
        "be",
        "have",
        "do",
        "get",
        "make",
        "take",
        "go",
        "give",
        "keep",
        "find",
        "say",
        "tell",
        "think",
        "know",
        "want",
        "need",
        "try",
        "seem",
        "let",
        "put",
        "see",
        "look",
        "become",
    }
)
"""Verbs whose bare object says little on its own; an open predicate for them keeps the preposition."""

POSITIVE_FIND = frozenset(
    [
        "inspiring",
        "relaxing",
        "rewarding",
        "fulfilling",
        "fun",
        "enjoyable",
        "therapeutic",
        "calming",
        "peaceful",
        "helpful",
        "useful",
        "meaningful",
        "interesting",
        "fascinating",
        "exciting",
        "amazing",
        "great",
        "wonderful",
        "beautiful",
        "empowering",
        "uplifting",
        "soothing",
        "motivating",
        "refreshing",
        "satisfying",
        "cathartic",
        "freeing",
        "healing",
        "comforting",
        "special",
        "valuable",
        "important",
        "liberating",
        "energizing",
        "invigorating",
        "joyful",
        "delightful",
        "fantastic",
        "awesome",
        "cool",
        "nice",
        "lovely",
        "unique",
        "magical",
        "cute",
        "adorable",
        "hilarious",
        "funny",
        "impressive",
        "incredible",
        "memorable",
        "calm",
        "fulfilled",
        "essential",
    ]
)
NEGATIVE_FIND = frozenset(
    [
        "scary",
        "hard",
        "difficult",
        "stressful",
        "challenging",
        "boring",
        "tough",
        "frustrating",
        "exhausting",
        "overwhelming",
        "tiring",
        "draining",
        "painful",
        "annoying",
        "confusing",
        "intimidating",
        "nerve-wracking",
        "daunting",
        "tedious",
    ]
)


def map_verb(verb_lemma: str, prep: str | None = None, particle: str | None = None) -> tuple[str, str] | None:
    """(predicate, kind) for a verb lemma with its particle/preposition, or ``None`` when the lexicon has none.

    Tries the most specific key first: ``look_after`` before ``look``; ``work_at`` before ``work``.
    """
    base = f"{verb_lemma}_{particle}" if particle else verb_lemma
    if prep:
        hit = _VERBS.get(f"{base}_{prep}")
        if hit:
            return hit
    hit = _VERBS.get(base)
    if hit:
        return hit
    if particle:
        return None  # "give up" is not "give"
    return None
