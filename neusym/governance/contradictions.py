"""Contradiction by meaning: a standing constraint (diet, allergy, abstention, fear, "never") against later events.

"I've been vegetarian for ten years" and "the pulled pork sandwich was amazing" share no word and no extracted
triple, yet one breaks the other. Three steps, none of them a phrasing of a particular sentence:

1. **A constraint and its target, by structure** (:func:`constraint_of`): a negated habitual verb ("I don't eat X",
   "Ich trinke keinen X", "No fumo", "Je ne conduis pas"), an allergy, intolerance or fear word with what follows
   it ("allergic to X", "X allergy", "Angst vor X", "miedo a X", "peur de X", "Höhenangst"), avoid/boycott/quit
   verbs, or a diet identity ("vegan", "sober", "celíaca"), in English, German, Spanish and French. Lemma lexicons,
   not sentences.
2. **What it rules out** (:mod:`neusym.governance.constraint_vocab`): the target is expanded to the categories it
   names (sugar -> sweets, cakes, desserts, soda; Fleisch -> meat, which contains pork and poultry; "fly" -> flights,
   planes, airports), or, when it names none, to the category whose embedded description is closest to it.
3. **Whether an event breaks it** (:func:`event_features`, :func:`break_probability`): a few features - the event
   names something the constraint rules out (lexicon, inflection and German compounds), its embedding is close to
   the constraint's categories, it says someone *did* something (an affirmative action, not a question, not a
   negation, not "alcohol-free", not a plan to stay away), and that someone is the constraint's subject, not "my
   friend" - combined by a logistic regression fitted on the governance benchmark's train split with k-fold
   cross-validation (``python -m benchmarks.governance.fit_contradictions`` prints the weights shipped below).

A breaking event gets the ``contradiction`` flag, a ``CONFLICTS_WITH`` edge links the two, the constraint is marked
too, and the decision names the constraint and why. Nothing is superseded: a contradiction is not an update, a
reviewer (or the LLM arbiter, when enabled) decides.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from neusym.extraction._text import words_of
from neusym.governance.constraint_vocab import CATEGORIES, IDENTITIES, KINDS, VERB_CATEGORIES, fold, tokens
from neusym.governance.decisions import Action, Decision, Flag
from neusym.governance.topics import language_of
from neusym.governance.updates import past_framed
from neusym.knowledge.isa import Kind, find_kinds, is_a, names_in, phrases, senses_of, wordnet
from neusym.language import regex as rx
from neusym.record import MemoryRecord, MemoryStatus, Scope, as_epoch
from neusym.symbolic.store import SymbolicStore

__all__ = ["FEATURES", "WEIGHTS", "Constraint", "ContradictionFinder", "break_probability", "constraint_of",
           "event_features"]

Embed = Callable[[list[str]], np.ndarray]


# ---------------------------------------------------------------------------------------------- lexicons of lemmas
def _alt(words: str) -> str:
    return "|".join(sorted((re.escape(fold(w).strip()).replace(r"\ ", r"\s+") for w in words.split("|")),
                           key=len, reverse=True))


_NEG_EN = _alt("don t|do not|doesn t|does not|didn t|never|no longer|can t|cannot|can not|won t|will not|"
               "mustn t|shouldn t|refuse to|refuses to|stopped|quit|gave up|give up|cut out|stay away from|"
               "stays away from|steer clear of|stay off|stays off|avoid|avoids|boycott|boycotts|am boycotting|"
               "m boycotting|is boycotting|swore off|kicked|ditched")
_VERB_EN = _alt("eat|eats|eating|drink|drinks|drinking|smoke|smokes|smoking|vape|vapes|vaping|touch|touches|take|"
                "takes|taking|own|owns|have|has|fly|flies|flying|drive|drives|driving|ride|rides|run|runs|running|"
                "work|works|working|go|goes|going|use|uses|using|gamble|gambles|gambling|bet|bets|betting|swim|"
                "swims|swimming|wear|wears|buy|buys|buying|order|orders|travel|travels|shop|shops|shopping|cook|"
                "cooks|watch|watches|play|plays|do|does|get|gets")
_VERB_LEMMA = {"eats": "eat", "eating": "eat", "drinks": "drink", "drinking": "drink", "smokes": "smoke",
               "smoking": "smoke", "vapes": "vape", "vaping": "vape", "flies": "fly", "flying": "fly",
               "drives": "drive", "driving": "drive", "runs": "run", "running": "run", "gambles": "gamble",
               "gambling": "gamble", "bets": "bet", "betting": "bet", "swims": "swim", "swimming": "swim",
               # de / es / fr first-person forms
               "esse": "eat", "trinke": "drink", "rauche": "smoke", "fliege": "fly", "fahre": "drive",
               "laufe": "run", "schwimme": "swim", "spiele": "gamble", "wette": "bet", "como": "eat",
               "bebo": "drink", "fumo": "smoke", "vuelo": "fly", "conduzco": "drive", "manejo": "drive",
               "corro": "run", "nado": "swim", "apuesto": "bet", "mange": "eat", "bois": "drink", "fume": "smoke",
               "conduis": "drive", "cours": "run", "nage": "swim", "parie": "bet", "vole": "fly", "comer": "eat",
               "beber": "drink", "fumar": "smoke", "volar": "fly", "conducir": "drive", "fumer": "smoke",
               "boire": "drink", "manger": "eat", "conduire": "drive", "voler": "fly", "rauchen": "smoke",
               "trinken": "drink", "essen": "eat", "fliegen": "fly"}
_GENERIC_VERBS = frozenset(["have", "has", "get", "gets", "go", "goes", "do", "does", "take", "takes", "taking",
                            "touch", "touches", "use", "uses", "using", "work", "works", "working", "play", "plays"])
"""Verbs that say nothing without an object that names a category ("I don't have big plans", "never gets old")."""
_NO_OBJECT_START = frozenset(["to", "on", "about", "back", "out", "up", "and", "or", "it", "that", "this", "what",
                              "anything", "as", "so", "with", "my", "your", "yet", "too", "there", "any", "much"])
"""An object that starts so is not the constrained thing ("I'm off to ...", "don't give up on your dreams")."""
_SUBJECTS = frozenset(["i", "we", "he", "she", "they"])
_MEMBERS = frozenset(m for c in CATEGORIES.values() for m in c.members)
_AUX = frozenset(["m", "am", "ve", "have", "has", "is", "s", "re", "are", "d", "really", "just", "also", "still",
                  "strictly", "always", "generally", "now", "totally", "completely", "basically", "usually",
                  "absolutely", "simply", "honestly", "personally", "definitely", "literally", "mostly", "been",
                  "pretty", "much", "try", "tries", "to"])
_CLAUSE_END = r"(?=$|[.,;:!?]|\s+(?:but|and\s+(?:i|he|she|we)|because|since|so\s|as\s|after\s+the|for\s+\w+\s+years|" \
              r"until|unless|while|when|till|aber|weil|bis|pero|porque|hasta|mais|parce|jusqu))"
_X = r"(?P<x>[a-z0-9 .'-]{0,60}?)" + _CLAUSE_END

_PATTERNS: tuple[tuple[str, rx.TextPattern, bool], ...] = (
    # allergies and intolerances: "allergic to X", "X allergy", "allergisch gegen X", "alérgico al X", "allergique aux X"
    ("allergy", rx.compile(r"\b(?:allergic|allergisch|allergique|alergico|alergica|alergicos|alergicas|intolerant|"
                           r"intolerante|intolerantes|sensitive|empfindlich|hypersensible)\s+"
                           r"(?:to|gegen|auf|a|al|a\s+la|a\s+los|a\s+las|aux|au|a\s+l|de)\s+" + _X), False),
    ("allergy", rx.compile(r"\b(?:allergy|allergie|alergia|intolerance|intoleranz|intolerancia)\s+"
                           r"(?:to|gegen|auf|a|al|a\s+la|a\s+los|aux|au|a\s+l)\s+" + _X), False),
    ("allergy", rx.compile(r"\b(?P<x>[a-z-]+(?:\s+[a-z-]+)?)\s+(?:allergy|allergies|intolerance)\b"), False),
    ("allergy", rx.compile(r"\b(?P<x>[a-z]{3,})(?:allergie|unvertraglichkeit|intoleranz)\b"), False),
    ("allergy", rx.compile(r"\b(?:can t|cannot|can not)\s+(?:have|eat|tolerate|digest|drink)\s+" + _X), True),
    # fears
    ("fear", rx.compile(r"\b(?:afraid|scared|terrified|frightened|petrified|fear|fears|phobia|phobic|panic)\s+"
                        r"(?:of|about)\s+" + _X), False),
    ("fear", rx.compile(r"\b(?P<x>[a-z]+(?:\s+[a-z]+)?)\s+(?:freak|freaks|scare|scares|terrify|terrifies|"
                        r"frighten|frightens)\s+me\b"), False),
    ("fear", rx.compile(r"\b(?:angst|panik|furcht)\s+vor\s+" + _X), False),
    ("fear", rx.compile(r"\bfurchte\s+mich\s+vor\s+" + _X), False),
    ("fear", rx.compile(r"\b(?P<x>[a-z]{3,})angst\b"), False),
    ("fear", rx.compile(r"\b(?:miedo|panico|terror|fobia|peur|phobie|panique|frayeur)\s+"
                        r"(?:a|al|a\s+la|a\s+los|a\s+las|de|del|de\s+la|de\s+los|des|du|de\s+l)\s+" + _X), False),
    ("fear", rx.compile(r"\bme\s+(?:da|dan)\s+(?:miedo|panico|terror)\s+" + _X), False),
    ("fear", rx.compile(r"\b(?:temo|crains|redoute)\s+(?:a\s+|les\s+|la\s+|le\s+|l\s+)?" + _X), False),
    ("fear", rx.compile(r"\b(?:j\s+ai|avoir)\s+le\s+(?P<x>vertige)\b"), False),
    ("fear", rx.compile(r"\b(?:tengo|tiene|i\s+have|i\s+get|ich\s+habe)\s+(?P<x>vertigo|vertige)\b"), False),
    # abstention: negated habitual verbs and verbs of avoiding, in four languages
    ("abstention", rx.compile(r"\b(?:" + _NEG_EN + r")\s+(?:(?:ever|really|even|any\s+longer)\s+)?"
                              r"(?P<v>" + _VERB_EN + r")\b\s*" + _X), True),
    ("abstention", rx.compile(r"\b(?:avoid|avoids|avoiding|boycott|boycotts|boycotting|stay\s+away\s+from|"
                              r"stays\s+away\s+from|steer\s+clear\s+of|cut\s+out|gave\s+up|give\s+up|quit|"
                              r"stopped|stay\s+off|swore\s+off)\s+" + _X), True),
    ("abstention", rx.compile(r"\bich\s+(?P<v>esse|trinke|rauche|fliege|fahre|laufe|schwimme|spiele|wette|nehme|"
                              r"arbeite|benutze|kaufe|gehe|habe)\s+(?:(?:schon\s+)?(?:seit\s+\w+\s+)?(?:gar\s+)?"
                              r"(?:kein|keine|keinen|keinerlei|nie|niemals|nicht|nicht\s+mehr|kein\s+\w+\s+mehr))\b"
                              r"\s*" + _X), False),
    ("abstention", rx.compile(r"\b(?:says|said|told\s+me|orders|means|strictly|absolutely)\s+(?:absolutely\s+)?"
                              r"no\s+" + _X), False),
    ("abstention", rx.compile(r"\bno\s+(?P<x>[a-z-]+(?:\s+[a-z-]+)?)\s+(?:for\s+me|at\s+all|whatsoever)\b"), False),
    ("abstention", rx.compile(r"\b(?:i\s+m|i\s+am|i\s+eat|i\s+keep|i\s+stay|i\s+went|i\s+live|on\s+a|"
                              r"follow\s+a|she\s+s|he\s+s|is|been)\s+(?:\w+\s+)?(?P<x>[a-z]+)-free\b"), False),
    ("allergy", rx.compile(r"\b(?:vertrage|vertragt|vertragen)\s+(?:kein|keine|keinen|nicht)\s+" + _X), False),
    ("allergy", rx.compile(r"\b(?:no\s+tolero|no\s+soporto|ne\s+supporte\s+pas|ne\s+tolere\s+pas)\s+"
                           r"(?:el|la|los|las|le|les|l|de|du|des)?\s*" + _X), False),
    ("abstention", rx.compile(r"\b(?:verzichte|verzichten)\s+auf\s+" + _X), False),
    ("abstention", rx.compile(r"\b(?:meide|vermeide)\s+" + _X), False),
    ("abstention", rx.compile(r"\b(?:no|nunca|jamas|ya\s+no)\s+(?:\w+\s+)?(?P<v>como|bebo|fumo|vuelo|tomo|conduzco|"
                              r"manejo|corro|nado|apuesto|juego|uso|compro|pruebo|trabajo|veo)\b\s*" + _X), False),
    ("abstention", rx.compile(r"\b(?:evito|deje\s+de|dejado\s+de|deje\s+el|deje\s+la|deje\s+los|deje\s+las)\s+(?P<v>fumar|beber|comer|volar|conducir)?\s*"
                              + _X), False),
    ("abstention", rx.compile(r"\b(?:ne|n)\s+(?:(?:le|la|les|l|en|y)\s+)?(?P<v>mange|bois|fume|prends|conduis|"
                              r"vole|cours|nage|parie|joue|travaille|utilise|achete|regarde|touche)\s+"
                              r"(?:pas|jamais|plus)\b\s*" + _X), False),
    ("abstention", rx.compile(r"\b(?:j\s+evite|evite|arrete\s+de|arrete\s+le|arrete\s+la|arrete\s+les|arrete\s+l|"
                              r"arrete\s+d)\s+"
                              r"(?P<v>fumer|boire|manger|conduire)?\s*" + _X), False),
)
"""The shape of a constraint; ``x`` is the constrained thing, ``v`` a verb that names it when there is no object."""

_COPULA = frozenset(fold(w) for w in words_of("am m is s are re was were been be become became keep keeps kept stay stays "
                    "went go goes gone bin ist bist sind war soy es estoy eres somos sera suis est sommes "
                    "etais reste strictly strict fully completely mostly now still totally severely very a an "
                    "un una une ein eine"))
_FIRST_PERSON = rx.compile(r"^\s*(?:i|i m|i ve|i d|my|we|our|ich|mein|meine|wir|je|j|moi|mon|ma|mes|nous|yo|soy|mi|"
                           r"mis|nosotros|me)\b")
_THIRD_NAMED = rx.compile(r"\b([A-ZÀ-Ý][a-zà-ÿ]+)\s+(?:is|has|never|doesn t|doesn't|does|can't|can t|won't|ist|hat|"
                          r"es|est|tiene|a|isst|trinkt|no|ne|n')\b")
_NAMED_SUBJECT = rx.compile(r"\s*([A-ZÀ-Ý][\w'-]+)\s+(?:is|has|had|never|doesn't|doesn t|does|can't|cannot|won't|"
                            r"avoids|hates|refuses|ist|hat|isst|trinkt|raucht|fliegt|es|est|no|ne|n'|nunca|jamais|"
                            r"tiene|a|kann|mag)\b")
"""A named third person the constraint is about ("Chen never flies"), not a capitalised noun ("Spiders ...")."""
_KIN = ("son|daughter|brother|sister|wife|husband|partner|boyfriend|girlfriend|mum|mom|mother|dad|father|kid|kids|"
        "child|friend|boss|colleague|neighbour|neighbor|flatmate|roommate|grandma|grandpa|sohn|tochter|bruder|"
        "schwester|frau|mann|freund|freundin|mutter|vater|kind|kollege|kollegin|nachbar|nachbarin|hijo|hija|"
        "hermano|hermana|esposa|esposo|mujer|marido|novio|novia|madre|padre|amigo|amiga|jefe|companero|vecino|"
        "vecina|fils|fille|frere|soeur|femme|mari|copain|copine|mere|pere|ami|amie|collegue|voisin|voisine|"
        "enfants|ninos|kinder|children|parents|padres|guests|others|team|family|friends|people|group|colleagues|"
        "gaste|freunde|invitados|amigos|invites|amis")
_KIN_WORDS = frozenset(_KIN.split("|"))
_NOT_NAMES = frozenset(["no", "the", "a", "an", "so", "oh", "well", "ich", "je", "yo", "soy", "nous", "wir", "we",
                        "you", "he", "she", "they", "it", "this", "that", "there", "meine", "mein", "mon", "ma",
                        "mi", "nunca", "my", "our", "i", "j", "me"])


@dataclass
class Constraint:
    """What a constraint memory rules out.

    ``targets`` are the phrases it names (embedded and compared with later events), ``categories`` the
    categories of :mod:`~neusym.governance.constraint_vocab` they expand to, ``terms`` every word of those
    categories plus the target's own content words (what an event must name to touch it lexically), ``hours`` a
    time bound ("never eat after 8 pm" -> 20), ``weekend`` a "never at weekends". ``kinds`` are the WordNet synsets
    whose every kind it rules out (its categories' synsets, or an English target's own noun: "penicillin" rules out
    amoxicillin), ``kind_files`` the lexicographer files expected of a member (``noun.food`` for a diet).
    """

    kind: str
    targets: list[str]
    subject: str | None = None  # a third person the constraint is about ("My son Leo is allergic ..." -> "leo")
    categories: list[str] = field(default_factory=list)
    terms: frozenset[str] = frozenset()
    hours: int | None = None
    weekend: bool = False
    kinds: tuple[str, ...] = ()
    kind_files: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------------- expansion
def _closure(names: Iterable[str]) -> list[str]:
    out: list[str] = []
    todo = [n for n in names if n in CATEGORIES]
    while todo:
        n = todo.pop()
        if n not in out:
            out.append(n)
            todo.extend(p for p in CATEGORIES[n].parts if p in CATEGORIES)
    return out


_STOP = frozenset(fold(w) for w in words_of(
    "the a an any all some of to in on at for with and or my our your his her their this that these those it "
    "them me you more much many other kind kinds sort type types food foods stuff things thing anything "
    "der die das den dem des ein eine einen kein keine keinen mehr und oder mit von zu im am "
    "el la los las un una unos unas de del al y o con mas nada ningun ninguna "
    "le la les un une des du de d l et ou avec plus rien aucun aucune "
    "eat drink have take use go do get touch ever really even completely due because severe bad mild terrible "
    "seasonal serious so most very"))


def expand(target: str, verb: str | None = None) -> tuple[list[str], set[str]]:
    """The categories a constraint target names and the target's own content words.

    A word that *names* a category ("meat", "Fleisch") rules out the whole category and its parts; a word that is
    only a *member* ("espresso") rules out itself (and the category it names, if any: "pork"). Without an object, a
    verb that names an activity rules it out ("I don't drink" -> alcohol).
    """
    toks = tokens(target)
    cats: list[str] = []
    covered: set[int] = set()
    for k in range(min(3, len(toks)), 0, -1):  # longest first: "fast food" names junk food, not all food
        for i in range(len(toks) - k + 1):
            span = set(range(i, i + k))
            g = " ".join(toks[i:i + k])
            named = [c.name for c in CATEGORIES.values() if g in c.names]
            if named and not span & covered:
                covered |= span
                cats.extend(n for n in named if n not in cats)
    own = {t for t in toks if t not in _STOP and t not in _TIME_WORDS and len(t) > 2 and not t.isdigit()}
    lemma = _VERB_LEMMA.get(verb or "", verb or "")
    if not cats and lemma in VERB_CATEGORIES and not (own - {verb or ""} - _TIME_WORDS):
        cats.extend(VERB_CATEGORIES[lemma])
    if lemma in ("fly", "drive", "smoke", "gamble", "run", "swim") and lemma in VERB_CATEGORIES:
        cats.extend(c for c in VERB_CATEGORIES[lemma] if c not in cats)
    return _closure(cats), own


def _hours(text: str) -> int | None:
    """A time bound "after 8 pm" / "nach 20 Uhr" / "después de las 9" / "après 21 h" -> the hour (24 h)."""
    m = rx.search(r"\b(?:after|past|later\s+than|nach|despues\s+de(?:\s+las)?|apres|passe)\s+(\d{1,2})(?::\d\d)?\s*"
                  r"(pm|p\.m|am|a\.m|uhr|h|heures|o\s+clock)?\b", fold(text))
    if not m:
        return None
    h = int(m.group(1))
    if h < 12 and (m.group(2) or "").startswith("p") or (h <= 11 and not m.group(2) and h >= 6):
        h += 12 if h < 12 else 0
    return h % 24


_TIME_WORDS = frozenset(["pm", "am", "after", "past", "weekends", "weekend", "nights", "night", "uhr", "late",
                         "later", "than", "evening", "evenings", "nach", "despues", "apres", "wochenende",
                         "wochenenden", "semana", "fin", "fines", "ten", "eight", "nine", "midnight"])
_WEEKEND = rx.compile(r"\b(?:weekends?|wochenende|fin(?:es)?\s+de\s+semana|week\s*-?\s*ends?)\b")


_IDENTITY_END = rx.compile(r"$|(?:for|since|now|and|but|because|too|as|again|anymore|though|so|at|already|and|y|und|"
                           r"et|pero|aber|mais|desde|seit|depuis|ever|diet|lifestyle|myself|person|guy|girl|woman|"
                           r"man|kid|here|mostly|these|strictly|all)$")


def _copula_before(toks: Sequence[str], i: int) -> bool:
    """An identity word is said of someone: "I'm (a strict) vegan", "she's vegetarian", "Soy celíaca"."""
    for j in (i - 1, i - 2, i - 3):
        if j < 0:
            return False
        w = toks[j]
        if w == "s":
            return j > 0 and toks[j - 1] in ("he", "she", "who", "that")
        if w in _COPULA and w not in ("a", "an", "un", "una", "une", "ein", "eine", "strict", "strictly", "fully",
                                     "completely", "mostly", "now", "still", "totally", "severely", "very"):
            return True
        if w not in _COPULA:
            return False
    return False


def _has_subject(text: str, low: str, start: int) -> bool:
    """Whether the English constraint verb at ``start`` has a personal subject: a pronoun ("I", "she"), a kin word
    ("my son") or a name written capitalised ("Chen never flies") - not an imperative ("Don't give up") nor a thing
    ("good flooring helps avoid injuries", "it never gets old")."""
    before = tokens(low[:start])
    while before and before[-1] in _AUX:
        before.pop()
    if not before:
        return False
    w = before[-1]
    if w in _SUBJECTS or w in _KIN_WORDS:
        return True
    return bool(rx.search(r"\b" + re.escape(w[:1].upper() + w[1:]) + r"\b", text)) and w not in _NOT_NAMES


def _object_ok(x: str, v: str | None, cats: list[str], own: set[str]) -> bool:
    """Whether ``x`` reads as the constrained thing: not a purpose clause or a figure of speech, short unless it
    names a category, and after a generic verb ("have", "get") only a category counts."""
    toks = tokens(x)
    if cats:
        return True
    if toks and toks[0] in _NO_OBJECT_START:
        return False
    if v and v in _GENERIC_VERBS:
        return bool(lexical_hits(x, _MEMBERS))  # "I don't do roller coasters": a known thing
    return 0 < len(own) <= 3 and len(toks) <= 5 or (not own and bool(v))


_CEASED = rx.compile(r"\b(?:quit|gave\s+up|stopped|cut\s+out|swore\s+off|kicked)\b")
"""A verb of giving something up: what follows has been ruled out since, however long ago it was said."""


_IDENTITY_FIRST = frozenset(k.split()[0] for k in IDENTITIES)
"""Words that open a diet identity ("vegan", "keep" of "keep halal"): the only places :func:`constraint_of` looks
for one."""


def constraint_of(text: str) -> Constraint | None:
    """The constraint a memory states, if any ("I don't eat fish" -> abstention, targets ["eat fish", "fish"])."""
    if len(text) > 240 or "?" in text:
        return None
    # "I quit smoking two years ago" is past-framed yet says what has held since; any other past framing ("I used
    # to be vegan", "as a kid I never ate fish") states no constraint that stands now
    ceased_only = past_framed(text)
    if ceased_only and not _CEASED.search(fold(text)):
        return None
    low = fold(text)
    toks = tokens(text)
    kind: str | None = None
    targets: list[str] = []
    cats: list[str] = []
    own: set[str] = set()
    # diet identities said of someone: "I'm vegan", "Soy celíaca", "I keep halal" (only where a word can open one)
    for i in [] if ceased_only else [i for i, t in enumerate(toks) if t in _IDENTITY_FIRST]:
        tok = toks[i]
        two = " ".join(toks[i:i + 2])
        ident = two if two in IDENTITIES else tok if tok in IDENTITIES else None
        if ident is None or not (i == 0 or _copula_before(toks, i)):
            continue
        if not _IDENTITY_END.match(" ".join(toks[i + len(ident.split()):i + len(ident.split()) + 1])) \
                and not rx.search(re.escape(ident) + r"\s*(?:[.,;:!?)]|$)", low):
            continue  # "a vegan recipe", "Nate's vegan ice cream": an adjective, not an identity
        kind = kind or "diet"
        targets.append(ident)
        cats.extend(_closure(IDENTITIES[ident]))
    for k, pat, english in _PATTERNS:
        for m in pat.finditer(low):
            x = (m.groupdict().get("x") or "").strip(" .,'\"-")
            v = m.groupdict().get("v")
            phrase = " ".join(p for p in (v, x) if p).strip()
            if not phrase or len(phrase) > 80 or english and not _has_subject(text, low, m.start()):
                continue
            c, o = expand(x or phrase, v)
            if not c and not (o - _TIME_WORDS) and not v or not _object_ok(x, v, c, o):
                continue
            if ceased_only and not (c and _CEASED.match(low, m.start())):
                continue  # past-framed: only a category given up counts ("quit my job years ago" is no rule)
            kind = kind or k
            targets.append(phrase)
            cats.extend(n for n in c if n not in cats)
            own |= o
    if kind is None or not targets:
        return None
    terms: set[str] = set(own)
    for n in cats:
        terms.update(CATEGORIES[n].members)
        terms.update(CATEGORIES[n].names)
    kinds, files = _kinds(cats, targets, text)
    return Constraint(kind, list(dict.fromkeys(targets))[:8], _subject(text), list(dict.fromkeys(cats)),
                      frozenset(terms), _hours(text), bool(_WEEKEND.search(low)), kinds, files)


_OWN_GENERAL = 1000
"""A constraint target's own noun rules out its kinds only when it is specific enough ("penicillin", "rodents"; not
"food" or "drink", which name a category when they mean anything)."""


def _kinds(cats: Sequence[str], targets: Sequence[str], text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The WordNet synsets a constraint rules out: its categories' (:data:`KINDS`), or, when its targets name no
    category, the head noun of each English target ("allergic to penicillin", "scared of rodents")."""
    kinds: list[str] = []
    files: list[str] = []
    for n in cats:
        syn, lex = KINDS.get(n, ((), ()))
        kinds.extend(x for x in syn if x not in kinds)
        files.extend(x for x in lex if x not in files)
    if not cats and language_of(text) == "en":
        for t in targets:
            heads = senses_of(t)
            if heads:
                kinds.extend(x for x in heads[-1][1] if x not in kinds and _specific(x))
    return tuple(kinds), tuple(files)


def _specific(name: str) -> bool:
    wn = wordnet()
    return wn.size(wn.synset(name)) <= _OWN_GENERAL


def _subject(text: str) -> str | None:
    low = fold(text)
    if _FIRST_PERSON.match(low):
        names = [n for n in _THIRD_NAMED.findall(text) if n.casefold() not in _NOT_NAMES]
        if names:
            return str(names[0]).casefold()
        kin = rx.match(r"\s*(?:my|our|mein|meine|mon|ma|mi)\s+([a-z]+)\b", low)
        return str(kin.group(1)) if kin and kin.group(1) in _KIN_WORDS else None
    m = _NAMED_SUBJECT.match(text)
    name = fold(m.group(1).split("'")[0]).strip() if m else None
    if name is None or name in _NOT_NAMES or name in _COPULA or any(name in c.names or name in c.members
                                                                   for c in CATEGORIES.values()):
        return None
    return name


# ---------------------------------------------------------------------------------------------- the event side
_NEGATED = rx.compile(r"\b(?:not|no|never|didn t|did not|don t|doesn t|wasn t|won t|couldn t|nothing|none|nicht|"
                      r"kein|keine|keinen|nie|niemals|nunca|jamas|nada|ne|n|pas|jamais|rien|sin|ohne|sans|without|"
                      r"instead\s+of|rather\s+than|statt|anstatt|en\s+vez\s+de|en\s+lugar\s+de|au\s+lieu\s+de)\b")
_KEPT = rx.compile(r"\b(?:[a-z]+-free|free\s+from|sugar\s+free|alcohol\s+free|non-alcoholic|non\s+alcoholic|"
                   r"alkoholfrei\w*|sin\s+alcohol|sin\s+gluten|sans\s+alcool|sans\s+gluten|0\.0|decaf\w*|"
                   r"entkoffeiniert|descafeinado|deca|vegan\w*|vegetal\w*|plant-based|plant\s+based|vegetarian|"
                   r"veggie|vegetarisch\w*|meat-free|meatless|dairy-free|lactose-free|laktosefrei\w*|"
                   r"(?:oat|almond|soy|soya|coconut|rice)\s+milk|hafermilch|sojamilch|mandelmilch|leche\s+de\s+"
                   r"(?:avena|almendra|soja)|lait\s+d\s+(?:avoine|amande)|lait\s+de\s+soja|mocktail\w*|"
                   r"sparkling\s+water|soda\s+water|lime\s+and\s+soda|tonic\s+water|agua\s+con\s+gas|mineral\w*|"
                   r"(?:coke|cola|pepsi)\s+(?:zero|max|light)|diet\s+(?:coke|soda|cola)|substitute|imitation|fake|virgin|"
                   r"stuffed|toy|plush|cuddly|figurine|poster|kuscheltier|stofftier|peluche|juguete|jouet|doudou)\b")
"""An event that says the constraint was kept: the thing without its substance ("alcohol-free", "oat milk"), or
a likeness of it rather than the thing (a stuffed toy dog)."""
_AVOIDED = rx.compile(r"\b(?:avoid\w*|skip\w*|skipp\w*|refus\w*|declin\w*|turn\w*\s+down|pass\w*\s+on|said\s+no|"
                      r"quit|quitting|stop|stopped|give\s+up|gave\s+up|decided\s+against|chose\s+not|opted\s+out|"
                      r"g[ia]ve\s+(?:\w+\s+)?away|rehom\w*|"
                      r"gegen\s+(?:\w+\s+){0,3}entschieden|entschieden\s+gegen|aufgehort|decidimos\s+no|renonce\w*|"
                      r"say\s+no|stay\w*\s+(?:away|on\s+the\s+ground|home|in)|stuck\s+to|stick\s+to|kept\s+\w+\s+away|"
                      r"kept\s+(?:her|his|their|the)\s+\w+\s+in|resist\w*|abgelehnt|verzichtet|vermieden|"
                      r"nein\s+gesagt|evit\w*|rechaz\w*|dije\s+que\s+no|refuse|refuser|evite\w*|decline|"
                      r"gift\w*|as\s+a\s+present|geschenkt|verschenkt|regale|regalo|regalamos|offert|offerte)\b")
_IRREALIS = rx.compile(r"\b(?:will|ll|going\s+to|gonna|want\s+to|wants\s+to|would|might|may|could|should|must|wish|"
                       r"hope|plan\w*|"
                       r"thinking\s+(?:of|about)|if|tomorrow|next\s+week|someday|werde|wird|mochte|will|voy\s+a|"
                       r"quiero|si|manana|vais|je\s+vais|veux|voudrais|demain)\b")
_ABOUT = rx.compile(r"\b(?:article|documentary|book|podcast|film|movie|video|news|lecture|talk|programme|program|"
                    r"series|story|artikel|doku|dokumentation|buch|articulo|documental|libro|reportage|livre|"
                    r"emission)\s+(?:\w+\s+)?(?:about|on|uber|sobre|sur)\b|\b(?:read|heard|talked|learned|learnt|"
                    r"gelesen|gehort|lei|oi|lu|entendu)\s+(?:\w+\s+)?(?:about|that|uber|sobre|sur)\b")
"""Talk about the thing (an article, a documentary), not doing it."""
_FOR_OTHER = rx.compile(r"\b(?:for|fur|para|pour)\s+(?:my|our|mein\w*|unser\w*|mi|mis|nuestr\w*|mon|ma|mes|"
                        r"notre|nos)\s+(?:\w+\s+)?(?:" + _KIN + r")\b")
"""Something made or bought for someone else ("a cake for my daughter's party")."""
_OBSERVER = rx.compile(r"\b(?:watch\w*|saw|seen|see|look\w*\s+at|regarde\w*|vu|mire|vi|visto|sah|gesehen|"
                       r"zugeschaut|beobachtet)\b")
_THIRD = rx.compile(r"\b(?:my|our|his|her|their|mein\w*|unser\w*|mon|ma|mes|notre|nos|mi|mis|su|sus|nuestr\w*)\s+"
                    r"(?:\w+\s+)?(?P<k>" + _KIN + r")\b|\b(?:the|die|der|los|las|les)\s+(?P<g>guests|others|kids|"
                    r"children|team|family|people|gaste|kinder|invitados|ninos|invites|enfants)\b|"
                    r"\b(?P<p>he|she|they|everyone|everybody|er|sie|ils|elles|il|elle|ella|el|ellos|ellas)\b")
_I = rx.compile(r"\b(?:i|we|ich|wir|je|j|nous|yo|nosotros|nosotras)\b")
"""A first-person *subject* (possessives like "my" do not make the speaker the actor: "my husband ordered")."""
_ACTION = rx.compile(
    r"\b(?:had|have\s+had|ate|eaten|drank|drunk|tried|ordered|grabbed|finished|shared|downed|smoked|vaped|took|"
    r"went|did|flew|flown|drove|rode|ran|swam|jumped|climbed|played|posted|watched|worked|spent|got|"
    r"made|cooked|baked|grilled|enjoyed|tasted|sampled|devoured|snacked|picked\s+up|treated|indulged|brought\s+home|"
    r"adopted|petted|held|stroked|booked|landed|boarded|bet|put|placed|won|lost|binged|streamed|stayed\s+up|"
    r"was\s+up|were\s+up|hatte|hatten|habe|haben|hab|bin|sind|gegessen|getrunken|geraucht|geflogen|gefahren|"
    r"gesprungen|geklettert|gespielt|gearbeitet|probiert|bestellt|genommen|gab\s+es|"
    r"comi|comimos|cene|cenamos|almorce|bebi|bebimos|tome|tomamos|me\s+tome|nos\s+tomamos|fume|me\s+fume|vole|"
    r"volamos|conduje|pasee|probe|pedi|pedimos|jugue|aposte|nade|subi|subimos|trabaje|hice|fui|fuimos|"
    r"j\s+ai|on\s+a|nous\s+avons|avons|ai\s+mange|mange|bu|fume|pris|conduit|vole|tenu|nage|couru|joue|"
    r"travaille|commande|goute|atterri|suis\s+alle|viens\s+d)\b")
"""An affirmative action of the past or present ("had", "ate", "tried", "gegessen", "me tomé", "j'ai bu")."""
_PAST_OTHER = rx.compile(r"\b(?:was|were|war|waren|fue|fueron|era|fut|etait)\b|\bge[a-z]{3,}(?:t|en)\b|"
                         r"\b(?:j|on|il|elle|nous|vous|ils|elles|tu)\s+(?:ai|as|a|avons|avez|ont|suis|es|est|sommes|sont)\s+"
                         r"(?:\w+\s+)?[a-z]+(?:e|ee|es|i|u|is|it)\b")
_PAST_ES = rx.compile(r"\b\w{2,}(?:é|í|amos|imos)\b")
"""Spanish first-person preterite ("cené", "bebí", "comimos"); read on the text with its accents."""


def _did(low: str, text: str) -> bool:
    """The sentence says something happened: a listed action verb, an English "-ed" past, "was/were", a German or
    French perfect, a Spanish first-person preterite."""
    return bool(_ACTION.search(low) or _PAST_ED.search(low) or _PAST_OTHER.search(low)
                or _PAST_ES.search(text.casefold()))


_SENTENCES = rx.compile(r"(?<=[.!?])\s+")
_PAST_ED = rx.compile(r"(?:^|[.,;!]\s*|\b(?:i|we|and|then|just|finally|also)\s+)(?!need|used|seed|feed|bed)"
                      r"[a-z]{3,}ed\b")
"""An English past tense said by the speaker ("Devoured a ...", "we grilled ...") beyond the listed verbs."""
_CLAUSES = rx.compile(r"[;:!?]|,\s*|\.\s+|\s+(?:but|while|whereas|although|aber|während|pero|mientras|mais|"
                      r"tandis\s+que)\s+")
_GERMAN = words_of("ich habe hatte bin und der die das nicht mit ein eine einen wir ist sind war auf dem den")
_CLOCK = rx.compile(r"\b(?:at|until|till|around|about|um|bis|a\s+las|hasta\s+las|vers|jusqu\s+a|a)\s+(\d{1,2})"
                    r"(?::\d\d)?\s*(pm|p\.m|am|a\.m|uhr|h|o\s+clock)?\b|\b(\d{1,2})\s*(?:a\.m|am)\b|"
                    r"\b(midnight|mitternacht|medianoche|minuit|madrugada)\b")
_WEEKEND_EVENT = rx.compile(r"\b(?:saturday|sunday|weekend|samstag|sonntag|wochenende|sabado|domingo|"
                            r"fin\s+de\s+semana|samedi|dimanche|week\s*-?\s*end)\b")


_SUFFIXES = ("s", "es", "e", "en", "n", "er", "ern", "x", "os", "as")


def _stems(tok: str, compound: bool) -> Iterable[str]:
    """The forms a lexicon word could take inside ``tok``: itself, without an inflection ("beers", "Hunden",
    "perros", "cacahuètes"), and in a German text the head and modifier of a compound ("Haselnusstorte")."""
    yield tok
    for suf in _SUFFIXES:
        if tok.endswith(suf) and len(tok) - len(suf) >= (3 if suf == "s" else 4):
            yield tok[:-len(suf)]
    if tok.endswith("ies") and len(tok) > 4:
        yield tok[:-3] + "y"
    if compound:
        for k in range(4, len(tok) - 2):
            yield tok[:k]
            yield tok[len(tok) - k:]


@lru_cache(maxsize=512)
def _index(terms: frozenset[str]) -> tuple[frozenset[str], dict[str, list[tuple[str, ...]]]]:
    """Single-word terms, and multi-word terms by their first word (built once per constraint's term set)."""
    multi: dict[str, list[tuple[str, ...]]] = {}
    for t in terms:
        parts = tuple(t.split())
        if len(parts) > 1:
            multi.setdefault(parts[0], []).append(parts)
    return frozenset(t for t in terms if " " not in t), multi


def lexical_hits(text: str, terms: frozenset[str]) -> list[tuple[int, str]]:
    """(token position, term) for each term of ``terms`` the text names (inflection and German compounds), in text
    order; a lookup per word, so a constraint with hundreds of terms costs no more than one with three."""
    toks = tokens(text)
    compound = sum(t in _GERMAN for t in toks) >= 2
    toks += [p for t in toks if "-" in t for p in t.split("-")]  # "65-inch", "Haselnuss-Torte"
    single, multi = _index(terms)
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i, tok in enumerate(toks):
        for parts in multi.get(tok, ()):
            n = len(parts)
            if (i + n <= len(toks) and toks[i + 1:i + n - 1] == list(parts[1:-1])
                    and parts[-1] in _stems(toks[i + n - 1], False)):
                term = " ".join(parts)
                if term not in seen:
                    seen.add(term)
                    out.append((i, term))
        for stem in _stems(tok, compound):
            if stem in single and stem not in seen:
                seen.add(stem)
                out.append((i, stem))
                break
    return out


def _clause_of(text: str, term: str) -> str:
    low = fold(text)
    for clause in _CLAUSES.split(low):
        if lexical_hits(clause, frozenset([term])):
            return clause
    return low


def _late(text: str, hours: int) -> bool:
    for m in _CLOCK.finditer(fold(text)):
        if m.group(4):
            return True
        h = int(m.group(1) or m.group(3))
        suffix = (m.group(2) or ("am" if m.group(3) else "")).replace(".", "")
        if suffix.startswith("a") and h < 6 or h == 0:
            return True  # after midnight
        if suffix.startswith("p") and h < 12:
            h += 12
        elif not suffix and h < 6:
            return True  # "until 3" - the small hours
        elif not suffix and h <= 11 and hours >= 12:
            h += 12
        if h > hours:
            return True
    return False


def _someone_else(clause: str, at: int) -> bool:
    """Whether the thing at ``at`` is someone else's doing: the subject nearest before the verb that governs it is
    a third person ("my husband ordered the steak", "the guests drank wine"), the speaker only watched or read
    about it, or it was for someone else. A clause without a subject (diary style: "Shared a bottle with my
    sister") is the speaker's."""
    verbs = [m.start() for m in _ACTION.finditer(clause) if m.start() < at]
    verb = verbs[-1] if verbs else at
    subjects = [(m.start(), False) for m in _I.finditer(clause) if m.start() < verb]
    subjects += [(m.start(), True) for m in _THIRD.finditer(clause) if m.start() < verb]
    if subjects and max(subjects)[1]:
        return True
    if _THIRD.search(clause[at:] if not verbs else clause) and _OBSERVER.search(clause[:at]):
        return True
    return bool(_ABOUT.search(clause) or _FOR_OTHER.search(clause))


FEATURES = ("lexical", "isa", "category_sim", "target_sim", "action", "negated", "negated_sentence", "kept", "avoided",
            "other_person", "irrealis", "question", "time")
"""The features of (constraint, event) the combiner weighs; see :func:`event_features`."""


def kinds_named(c: Constraint, text: str) -> list[Kind]:
    """The phrases of ``text`` WordNet says are kinds of what ``c`` rules out ("merlot" for alcohol)."""
    if not c.kinds:
        return []
    return find_kinds(text, c.kinds, lexnames=c.kind_files)


_CONNECTORS = frozenset(["con", "de", "di", "du", "da", "del", "au", "aux", "a", "la", "le", "and", "with", "in", "on",
                         "of"])


def _not_names(c: Constraint, text: str, hits: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Lexicon hits that are not part of something else (English): not a name ("two weeks in Turkey" is a place,
    not the bird), and not the head of a longer WordNet noun that is no kind of what is ruled out ("hot dog" is no
    dog, "root beer" no beer, "peanut butter" no butter; "chocolate milk" is milk) unless the word also stands alone
    elsewhere in the text. Only the head: "chicken soup" is no kind of meat to WordNet, yet it has chicken in it."""
    names = names_in(text)
    inside: list[str] = []
    if c.kinds:
        for p in phrases(text):
            parts = p.lemma.split("_")
            if len(parts) > 1 and not _CONNECTORS.intersection(parts) \
                    and is_a(p.lemma, c.kinds, lexnames=c.kind_files) is None:
                inside.append(parts[-1])  # the head of an English compound ("chili con carne" is not head-final)
    words = [w for t in tokens(text) for w in t.split("-")]
    out = []
    for pos, term in hits:
        if term in names:
            continue
        if " " not in term and inside:
            def same(w: str, t: str = term) -> bool:
                return w == t or (w.startswith(t) and len(w) - len(t) <= 2)
            n = sum(map(same, inside))
            if n and n >= sum(map(same, words)):
                continue
        out.append((pos, term))
    return out


def isa_value(kinds: Sequence[Kind]) -> float:
    """1 when a phrase's dominant reading is a kind of what is ruled out, 0.5 for a plausible reading, else 0."""
    return max((1.0 if k.reading.dominant else 0.5 for k in kinds), default=0.0)


def event_features(c: Constraint, text: str, sims: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
    """What an event says about a constraint, as numbers in [0, 1].

    ``sims`` are the event's cosine to the constraint's category descriptions and to its own target phrases (the
    caller has the vectors). ``lexical``: the event names something the constraint rules out; ``isa``: it names
    nothing the lexicon lists, but WordNet says a phrase of it is a kind of what the constraint rules out (1 for the
    word's dominant reading, 0.5 for a plausible one: "java" is first an island); ``action``: it says someone did something; ``negated`` (in the clause
    that names the thing) / ``negated_sentence`` (anywhere), ``kept`` ("alcohol-free", "oat milk"), ``avoided``
    (refused, skipped, stayed away): the thing was not had; ``other_person``: it is someone else's doing, or the
    subject only watched; ``irrealis``: a plan, wish or condition; ``question``; ``time``: a time-bound constraint
    ("after 8 pm", "weekends") and an event that names what it rules out at such a time. A constraint about a named
    third person ("Leo is allergic ...") counts as someone else's unless the event names them.
    """
    hits = lexical_hits(text, c.terms)
    if hits and language_of(text) == "en":
        hits = _not_names(c, text, hits)
    kinds = [] if hits else kinds_named(c, text)
    named = hits[0][1] if hits else (" ".join(tokens(kinds[0].phrase)) if kinds else "")
    low = fold(text)
    if named:  # a long message: read the sentence that names the thing, not the others
        low = next((x for x in _SENTENCES.split(low) if lexical_hits(x, frozenset([named]))), low)
    clause = _clause_of(low, named) if named else low
    head = named.split()[0] if named else ""
    before = clause.split(head)[0] if head and head in clause else clause
    if c.subject:
        other = c.subject not in low
    else:
        other = _someone_else(clause, clause.find(head) if head and head in clause else len(clause))
    late = (c.hours is not None and _late(text, c.hours)) or (c.weekend and bool(_WEEKEND_EVENT.search(low)))
    return {
        "lexical": 1.0 if hits else 0.0,
        "isa": 0.0 if hits else isa_value(kinds),
        "category_sim": float(sims[0]),
        "target_sim": float(sims[1]),
        "action": 1.0 if _did(low, text) else 0.0,
        "negated": 1.0 if _NEGATED.search(before) else 0.0,
        "negated_sentence": 1.0 if _NEGATED.search(low) else 0.0,
        "kept": 1.0 if _KEPT.search(clause) else 0.0,
        "avoided": 1.0 if _AVOIDED.search(low) else 0.0,
        "other_person": 1.0 if other else 0.0,
        "irrealis": 1.0 if _IRREALIS.search(clause) else 0.0,
        "question": 1.0 if "?" in text else 0.0,
        "time": 1.0 if late and (hits or kinds) else 0.0,
    }


WEIGHTS: dict[str, float] = {
    "bias": -4.87, "lexical": 2.63, "isa": 3.42, "category_sim": 2.14, "target_sim": 1.04, "action": 3.46,
    "negated": -0.95, "negated_sentence": -2.27, "kept": -3.63, "avoided": -2.98, "other_person": -3.50,
    "irrealis": -0.18, "question": -0.91, "time": 1.09,
}
"""Logistic-regression weights of :data:`FEATURES`, fitted on the governance benchmark's train split
(``python -m benchmarks.governance.fit_contradictions``, which also reports their k-fold cross-validated accuracy)."""
THRESHOLD = 0.5
"""Probability above which an event is taken to break a constraint."""


def break_probability(features: dict[str, float], weights: dict[str, float] | None = None) -> float:
    w = WEIGHTS if weights is None else weights
    z = w.get("bias", 0.0) + sum(w.get(k, 0.0) * v for k, v in features.items())
    return 1.0 / (1.0 + math.exp(-z))


# ---------------------------------------------------------------------------------------------- the write-path step
class ConstraintVectors:
    """The vectors a constraint is compared with: its categories' descriptions and its own target phrases.

    A target that names no category of the lexicon ("processed food", a brand) lands on the categories whose
    description is closest to it by embedding, when that closeness reaches ``category_threshold``.
    """

    category_threshold = 0.5
    category_margin = 0.05

    def __init__(self, unit: Callable[[list[str]], np.ndarray]) -> None:
        self.unit = unit  # texts -> unit vectors (rows)
        self._descriptions: np.ndarray | None = None

    def of(self, c: Constraint) -> tuple[np.ndarray, np.ndarray]:
        if not c.categories:
            if self._descriptions is None:
                self._descriptions = self.unit([x.description for x in CATEGORIES.values()])
            sims = (self.unit(c.targets) @ self._descriptions.T).max(axis=0)
            order = np.argsort(-sims)
            names = list(CATEGORIES)
            best = names[int(order[0])]
            clear = float(sims[order[0]]) >= self.category_threshold and \
                float(sims[order[0]] - sims[order[1]]) >= self.category_margin
            if clear and not any(lexical_hits(t, _MEMBERS) or _member_kind(t) for t in c.targets):
                # "processed food" names no category but means junk food; a listed thing ("cockroaches") or one
                # WordNet knows as a kind of a category ("pecorino") stays itself: an allergy to one insect does not
                # rule out the whole category
                c.categories = _closure([best])
                c.terms = frozenset(set(c.terms) | {m for n in c.categories for m in CATEGORIES[n].members})
            elif float(sims[order[0]]) >= self.category_threshold:
                cat_v = self.unit([CATEGORIES[best].description])
                return cat_v, self.unit(c.targets)  # compared by embedding only
        cat_v = self.unit([CATEGORIES[n].description for n in c.categories]) if c.categories else _EMPTY
        return cat_v, self.unit(c.targets)


_EMPTY = np.zeros((0, 1), dtype=np.float32)
_ALL_KINDS = tuple(sorted({k for syn, _ in KINDS.values() for k in syn}))


def _member_kind(target: str) -> bool:
    """Whether an English target's head noun is a kind (not the whole) of a category ("pecorino" is a cheese)."""
    heads = senses_of(target)
    if not heads:
        return False
    r = is_a(heads[-1][0], _ALL_KINDS)
    return r is not None and r.depth > 0 and r.dominant


@dataclass
class _Known:
    memory_id: str
    constraint: Constraint
    category_vectors: np.ndarray  # descriptions of its categories (rows), maybe empty
    target_vectors: np.ndarray  # its own target phrases
    speaker: str | None
    at: float


@dataclass
class _Tenant:
    known: list[_Known] = field(default_factory=list)
    loaded_at: float | None = None  # time.monotonic() of the last read from the graph


class ContradictionFinder:
    """Flags events that break a standing constraint of the same tenant (see the module docstring).

    The graph is the source of truth for which constraints stand: the tenant's stored memories (newest
    ``scan_limit``) are re-read at most every ``refresh_seconds``, so a constraint written, forgotten or superseded
    by another process sharing the graph counts here within that bound (and at once after a restart). Between
    reads, constraints written by this process are added as they are written. Target vectors are kept per memory
    id, so a re-read embeds only constraints it has not seen.
    """

    scan_limit = 2000
    refresh_seconds = 60.0

    def __init__(self, store: SymbolicStore, embed: Embed | None, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self.store = store
        self.embed = embed
        self._tenants: dict[str, _Tenant] = {}
        self.vectors = ConstraintVectors(self._unit)

    def _unit(self, texts: list[str]) -> np.ndarray:
        assert self.embed is not None
        v = np.asarray(self.embed(texts), dtype=np.float32)
        out: np.ndarray = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        return out

    def apply(self, decisions: Sequence[Decision], vectors: np.ndarray, scope: Scope) -> None:
        if self.embed is None or not scope.user_id or not self.enabled:
            return
        cached = self._tenants.get(str(scope.user_id))
        if cached is not None:  # an edited memory (an update) no longer states what its old text constrained
            ids = {d.record.id for d in decisions}
            cached.known = [k for k in cached.known if k.memory_id not in ids]
        live = [i for i, d in enumerate(decisions) if d.action in (Action.STORE, Action.STORE_LOW_CONFIDENCE,
                                                                   Action.REVIEW)
                and d.record.status not in (MemoryStatus.QUARANTINED,)]
        if not live:
            return
        tenant = self._tenant(scope)
        unit = np.asarray(vectors, dtype=np.float32)[live]
        unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
        new_known: list[_Known] = []
        for pos, i in enumerate(live):
            d = decisions[i]
            c = constraint_of(d.record.content)
            if c is not None:
                new_known.append(self._know(d.record, c))
                continue
            if tenant.known and "?" not in d.record.content and not past_framed(d.record.content):
                self._check(d, unit[pos], tenant.known)
        tenant.known.extend(new_known)

    def _tenant(self, scope: Scope) -> _Tenant:
        uid = str(scope.user_id)
        t = self._tenants.setdefault(uid, _Tenant())
        now = time.monotonic()
        if t.loaded_at is None or now - t.loaded_at >= self.refresh_seconds:
            t.loaded_at = now
            seen = {k.memory_id: k for k in t.known}
            known: list[_Known] = []
            for r in self.store.scope_memories(Scope(user_id=uid), limit=self.scan_limit, newest_first=True):
                if r.id in seen:
                    known.append(seen[r.id])
                    continue
                c = constraint_of(r.content)
                if c is not None:
                    known.append(self._know(r, c))
            t.known = known
        return t

    def _know(self, rec: MemoryRecord, c: Constraint) -> _Known:
        cat_v, tgt_v = self.vectors.of(c)
        return _Known(rec.id, c, cat_v, tgt_v, rec.source.speaker, as_epoch(rec.valid_from or rec.created_at) or 0.0)

    def score(self, k: _Known, text: str, v: np.ndarray) -> tuple[float, dict[str, float]]:
        """The probability that ``text`` (vector ``v``) breaks the constraint ``k``, and the features behind it."""
        cs = float((k.category_vectors @ v).max()) if k.category_vectors.shape[0] else 0.0
        ts = float((k.target_vectors @ v).max()) if k.target_vectors.shape[0] else 0.0
        f = event_features(k.constraint, text, (cs, ts))
        return break_probability(f), f

    def _check(self, d: Decision, v: np.ndarray, known: Sequence[_Known]) -> None:
        rec = d.record
        best: tuple[float, _Known, dict[str, float]] | None = None
        for k in known:
            if k.memory_id == rec.id or k.memory_id in d.contradicts:
                continue
            if k.speaker and rec.source.speaker and k.speaker != rec.source.speaker:
                continue
            p, f = self.score(k, rec.content, v)
            if p >= THRESHOLD and (best is None or p > best[0]):
                best = (p, k, f)
        if best is None:
            return
        p, k, f = best
        found = self.store.get([k.memory_id], Scope(user_id=rec.scope.user_id))
        if not found or found[0].status.value not in ("active", "pending"):
            return
        old = found[0]
        why = [n for n in ("lexical", "time") if f[n]] or ["meaning"]
        entry: dict[str, object] = {
            "id": old.id, "rule": f"constraint:{k.constraint.kind}", "similarity": round(f["category_sim"], 3),
            "confidence": round(p, 3), "kind": k.constraint.kind, "by": "+".join(why),
            "previous": {"status": old.status.value, "flags": list(old.flags), "valid_to": as_epoch(old.valid_to)}}
        d.contradicts.append(old.id)
        d.add_detail("contradictions", entry)
        d.record = rec.model_copy(update={"flags": list(dict.fromkeys([*rec.flags, Flag.CONTRADICTION.value]))})
        cats = ", ".join(k.constraint.categories[:3]) or "its target"
        d.note(f"may break a standing {k.constraint.kind} constraint (rules out {cats}; matched by "
               f"{' and '.join(why)}, probability {p:.2f}): flagged as a contradiction")
