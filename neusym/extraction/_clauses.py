"""A shallow clause reader: subject, verb group, object and prepositional phrases, without a tagger.

The rule table (:mod:`neusym.extraction._rules`) knows ~75 ways of stating a personal fact and nothing else, so
"Melanie made a plate in pottery class" gave no fact at all. This reader covers the long tail with English word
order alone: a subject (a name, a pronoun, "my sister", "the support group"), then the verb group (auxiliaries,
negation, adverbs, catenatives such as "started doing"), then a noun-phrase object and up to three prepositional
phrases. Each (verb, preposition, object) is mapped to a predicate through the lexicon of
:mod:`neusym.extraction._lexicon`; verbs the lexicon does not know keep their lemma as an open predicate.

It is deliberately conservative where word order is ambiguous: objects are noun phrases of at most six words that
stop at any function word, pronoun objects are dropped, passives are read only for a few fixed participles, and a
clause the reader cannot parse yields nothing. The optional dependency-parser path
(:mod:`neusym.extraction.parser`) produces the same :class:`Clause` records, so both share the mapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from neusym.extraction._grammar import Ctx, RawTriple
from neusym.extraction._lexicon import (
    AUXILIARIES,
    IRREGULAR,
    LIGHT_VERBS,
    NEGATIVE_FIND,
    NO_E_VERBS,
    POSITIVE_FIND,
    VERB_PREDICATES,
    lemma,
    looks_finite,
    map_verb,
)
from neusym.extraction._text import (
    ABBREV_DOT,
    COMMON_WORDS,
    DEMONYMS,
    MONTHS,
    OCCUPATIONS,
    PETS,
    RELATIONS,
    WEEKDAYS,
    singular,
    words_of,
)
from neusym.extraction.semantic import PredicateMapper
from neusym.extraction.vocabulary import canonical_predicate
from neusym.language import regex as rx

__all__ = ["Clause", "ClauseReader", "clause_triples", "read_clauses", "read_sentence"]


ClauseReader = Callable[[str, Ctx], tuple[list["Clause"], list[str]]]
"""Reads one normalised sentence into clauses and concept noun phrases (:func:`read_sentence`, or a parser's)."""


class _Base(TypedDict):
    negated: bool
    aspect: str


@dataclass(slots=True)
class Clause:
    """One predicate-argument structure: who did what (to what), and the prepositional phrases around it."""

    subject: str
    third_party: bool
    pronoun: bool
    verb: str  # lemma, with a particle joined by "_" ("look_into", "give_up")
    obj: str | None = None
    obj_start: int = -1
    pps: list[tuple[str, str, int]] = field(default_factory=list)  # (preposition, object, start)
    negated: bool = False
    aspect: str = "ongoing"  # ongoing | past_event | habitual_past | ended | future
    complement: str | None = None  # "found X inspiring" -> "inspiring"
    copula: bool = False  # "X is a Y": obj is a class or role
    passive: str | None = None  # participle of "be <participle> <prep>" ("born", "based", "married")
    first: str | None = None  # a conjunct object's first conjunct ("tried X and Y": Y is tried like X)


_PREPS = words_of(
    "in at to from with for on about into near by as through during of onto toward towards "
    "across around after before over under without within among between behind beside like via "
    "despite including throughout upon against beyond due regarding concerning"
)
_PP_KEEP = words_of(
    "in at to from with for on about into near by as through during onto towards toward "
    "across around over under among between behind"
)
_DETS = words_of("a an the some any this that these those another every each no")
_POSS = {"my": "me", "our": "me", "his": "ref", "her": "ref", "their": "ref", "its": "ref", "your": "you"}
_QUANT = words_of(
    "one two three four five six seven eight nine ten several many few couple lot lots "
    "bunch dozen dozens hundreds thousands"
)
_SUBORD = words_of(
    "that which who whom whose where when while because since although though unless if than so "
    "whether once until till whenever wherever and or but nor yet plus then"
)
_ADVERBS = words_of(
    "also still just recently really actually now currently already even finally usually often always sometimes "
    "never ever again together soon later lately originally eventually initially officially mostly mainly "
    "generally regularly frequently occasionally rarely seldom constantly recently newly previously once twice "
    "happily proudly secretly quickly slowly gradually particularly especially truly deeply greatly "
    "successfully personally honestly basically literally simply only first then both all too very so quite "
    "nowadays currently here there back home abroad overseas online together alone hard well late fast "
    "nonstop remotely overtime full-time part-time anymore instead especially anytime anywhere everywhere someday"
)
_TIME_WORDS = (
    words_of(
        "year years month months week weeks day days weekend weekends morning mornings afternoon evening evenings "
        "night nights summer winter spring fall autumn time times while moment moments hour hours minute minutes "
        "today tonight tomorrow yesterday ago decade decades season seasons semester future past present "
        "childhood age beginning end meantime holidays"
    )
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
)
_BAD_OBJ = words_of(
    "it this that them those these him her me us you one something anything everything nothing someone "
    "somebody anyone everyone everybody nobody stuff things thing lot lots way ways much more most all some "
    "none what which who whom whose myself himself herself themselves ourselves yourself itself each other "
    "others place part sense idea fact kind sort type bit here there home oneself time"
)
VERB_LEMMAS = frozenset({k.split("_")[0] for k in VERB_PREDICATES} | set(IRREGULAR.values())) | words_of(
    "stay help become learn see pursue spend find try show feel build share create explore improve reach achieve "
    "express escape relax remember celebrate support enjoy continue get keep make take give be do have go "
    "visit meet buy play work study live travel check pick grab eat drink sleep watch read write finish "
    "prepare save raise bring call ask tell start begin stop protect teach spread inspire encourage focus "
    "cover gather recharge reconnect approach overcome handle deal cope manage push grow heal stay feel "
    "connect contribute pass apply look move change keep choose decide meet follow lead listen think talk "
    "talk understand fix clean open close cook bake dance sing draw paint write sell send show spend win "
    "lose earn pay rest sleep hike walk run swim ride drive fly travel explore discover adopt raise care "
    "provide offer serve volunteer donate organize organise host attend join host complete prove improve"
)
_NOT_VERB = (
    COMMON_WORDS
    - words_of(
        "listen look wait guess think remember note let welcome thank love like need "
        "want have do speaking talking"
    )
) | _DETS
_SAY = words_of(
    "mention say express believe think feel know realize realise acknowledge admit explain hope "
    "wish agree suggest notice tell remind reflect describe recall emphasize emphasise note update "
    "reveal confess announce claim hear wonder imagine talk chat seem share"
)
_MAKE_NOT_CREATE = words_of(
    "order orders friend friends decision decisions progress effort difference sense time money plan plans "
    "memories memory change changes mistake mistakes choice choices connection connections "
    "peace point sure it way impact"
)
_JOB_NOUNS = words_of("job position role internship post gig career")
_JOB_END = words_of("lose quit leave resign")
_OBJ_PRONOUNS = words_of("it them him her me us this that these those everything something")
_HEADLESS = words_of(
    "collection lot lots bunch couple group set piece variety kind type sort number series pair "
    "cup bottle slice bit range selection mix list box bag glass plate"
)
_CATENATIVE_INNER = words_of(
    "start begin continue keep decide try learn manage choose stop quit finish "
    "practice practise consider avoid resume"
)
_CATENATIVE_KEEP = words_of(
    "like love enjoy hate prefer plan want hope intend aim need wish dream expect "
    "look forward go seek strive promise agree offer volunteer"
)
_STOP_ASPECT = words_of("stop quit finish")
_STATES = words_of("work live stay study attend serve volunteer")
_MODALS = words_of("will would shall should can could may might must do does did")
_RECALL = words_of("mention recall remember describe")
_SAY_THING = words_of("mention express describe reveal announce update share know")
_MEDIA = words_of(
    "show movie film series video game match documentary episode anime tv television netflix youtube "
    "channel season stream streamer vlog cartoon sitcom drama play musical performance concert"
)
_LY_NOUNS = words_of(
    "family italy july ally belly fly supply assembly rally jelly bully reply butterfly lily"
)
_GERUND_NOUNS = words_of(
    "clothing building painting evening morning wedding meeting training camping hiking reading writing "
    "counseling counselling gaming swimming cooking dancing parenting fishing feeling feelings setting "
    "beginning ending offering savings belongings surroundings"
)
_OBJ_CONTROL = words_of(
    "cause encourage advise ask tell urge invite remind convince persuade teach allow inspire motivate push "
    "challenge expect want need help get enable force beg recommend suggest warn"
)
_MAKE_ADJ = words_of("better worse easier harder successful happier stronger safer possible")
_TASTED = words_of(
    "dessert recipe dish food restaurant flavor flavour cake pie cookie meal drink coffee tea wine beer "
    "cuisine snack sauce"
)
_ING_ADJ = words_of(
    "willing interesting amazing loving caring outgoing understanding inspiring exciting encouraging "
    "accommodating promising rewarding fulfilling welcoming"
)
_EAGER = words_of("excited keen eager ready open looking thrilled psyched pumped")
_TO_STATE = words_of("lucky fortunate blessed able happy glad proud grateful thankful")
_TALK = words_of("talk chat speak")
_SUB_CLAUSE = words_of(
    "when while after before because since as although though until once where that whenever"
)
_PLAN_VERBS = words_of(
    "plan want hope intend aim expect wish dream go seek strive promise agree need offer volunteer"
)
_PARTICLES = words_of("up out back off down over away around along")
_PASSIVE = {
    "born": ("born_in", "fact"),
    "based": ("lives_in", "fact"),
    "located": ("located_in", "knowledge"),
    "situated": ("located_in", "knowledge"),
    "married": ("married_to", "fact"),
    "engaged": ("partner_of", "fact"),
    "employed": ("works_at", "fact"),
    "promoted": ("job_title", "fact"),
    "enrolled": ("studies_at", "fact"),
    "involved": ("member_of", "fact"),
    "interested": ("likes", "preference"),
    "allergic": ("allergic_to", "fact"),
    "afraid": ("fears", "fact"),
    "scared": ("fears", "fact"),
    "terrified": ("fears", "fact"),
    "passionate": ("likes", "preference"),
    "obsessed": ("likes", "preference"),
    "fond": ("likes", "preference"),
    "into": ("likes", "preference"),
    "addicted": ("likes", "preference"),
    "raised": ("from", "fact"),
    "named": ("name", "fact"),
}
_PASSIVE_PREP = {
    "born": "in",
    "based": "in",
    "located": "in",
    "situated": "in",
    "married": "to",
    "engaged": "to",
    "employed": "by",
    "promoted": "to",
    "enrolled": "in",
    "involved": "in",
    "interested": "in",
    "allergic": "to",
    "afraid": "of",
    "scared": "of",
    "terrified": "of",
    "passionate": "about",
    "obsessed": "with",
    "fond": "of",
    "addicted": "to",
    "raised": "in",
}
_PAST_PARTICIPLE_IRREG = frozenset(w for w, b in IRREGULAR.items() if w.endswith(("n", "t", "d", "ne", "wn")))
_PRONOUN_SUBJ = {"i": "me", "we": "me", "he": "ref", "she": "ref"}
_NEG = words_of("not never")
_FUTURE_AUX = words_of("will shall")
_BE = words_of("am is are was were be been")
_HABIT = rx.compile(r"\bused\s+to\b|\bwould\s+(?:always|often|usually)\b", re.IGNORECASE)
_NAMEY = rx.compile(r"^[A-Z\u00c0-\u00de][\w\u2024'\-&.]*$")
_CLAUSE_START_SKIP = words_of(
    "btw so oh well and but also anyway actually plus ok okay yeah now then however "
    "still honestly basically hey"
)


@dataclass(slots=True)
class _Tok:
    text: str
    low: str
    start: int
    title: bool = False  # a quoted title ('Dune', "The Lean Startup"): one name, whatever its words


_WORD = rx.compile(r"\S+")
_EDGE = ',;:!?()".'


_COLOURS = words_of("black white red blue green yellow orange purple pink brown grey gray gold silver")
_ADJ_SUFFIX = ("ful", "ous", "ive", "al", "ic", "ish", "less", "able", "ible", "ary", "ian")


def _adjective(word: str) -> bool:
    return word in _COLOURS or (len(word) > 4 and word.endswith(_ADJ_SUFFIX))


def _tokens(sentence: str) -> list[_Tok]:
    """Whitespace tokens with edge punctuation split off ("Boston," -> "Boston", ","); inner dots stay."""
    out: list[_Tok] = []
    for m in _WORD.finditer(sentence):
        text, at = m.group(0), m.start()
        while text and text[0] in _EDGE:
            out.append(_Tok(text[0], text[0], at))
            text, at = text[1:], at + 1
        tail: list[_Tok] = []
        while text and text[-1] in _EDGE:
            tail.append(_Tok(text[-1], text[-1], at + len(text) - 1))
            text = text[:-1]
        if text:
            out.append(_Tok(text, text.lower(), at))
        out.extend(reversed(tail))
    return _titles(out, sentence) if "'" in sentence or '"' in sentence else out


def _titles(toks: list[_Tok], sentence: str) -> list[_Tok]:
    """Quoted titles as one token: "reading 'The Name of the Wind' by Patrick Rothfuss", "the song "Brave"".

    A title opens with a quote before a capital letter and closes within eight words; apostrophes inside words
    ("kids' books", "it's") never open one."""
    out: list[_Tok] = []
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        text = tok.text
        double = text == '"'
        if not (double and i + 1 < n and toks[i + 1].text[:1].isupper() or text[:1] == "'" and text[1:2].isupper()):
            out.append(tok)
            i += 1
            continue
        end = -1
        for k in range(i if not double else i + 1, min(n, i + 9)):
            if double and k > i + 1 and toks[k].text == '"' or not double and toks[k].text.endswith("'") and (
                k > i or len(toks[k].text) > 2
            ):
                end = k
                break
        if end < 0:
            out.append(tok)
            i += 1
            continue
        first = toks[i + 1] if double else tok
        last = toks[end - 1] if double else toks[end]
        title = sentence[first.start : last.start + len(last.text)].strip("'\" ,.;:")
        if not title or title.lower() in COMMON_WORDS:
            out.append(tok)
            i += 1
            continue
        out.append(_Tok(title, title.lower(), first.start + (0 if double else 1), title=True))
        i = end + 1
    return out


def _is_name(tok: _Tok) -> bool:
    return tok.title or bool(_NAMEY.match(tok.text)) and tok.low.rstrip(".\u2024") not in COMMON_WORDS and tok.low != "i"


def _is_verbish(tok: _Tok) -> bool:
    low = tok.low
    if not low.isalpha() or low in _PREPS or low in _DETS or low in COMMON_WORDS and low not in IRREGULAR:
        return False
    return looks_finite(low) or low.endswith("ing") or low in IRREGULAR


class _Reader:
    __slots__ = (
        "toks",
        "ctx",
        "n",
        "out",
        "first",
        "third",
        "plural",
        "subject_names",
        "place",
        "recipient",
        "bare",
        "bare_future",
        "owners",
        "title_class",
        "last_subjects",
        "lows",
        "phrases",
    )

    def __init__(self, sentence: str, ctx: Ctx) -> None:
        self.toks = _tokens(sentence)
        self.lows = [t.low for t in self.toks]
        self.phrases: dict[tuple[int, bool, bool, int], tuple[tuple[str, int] | None, int, str | None]] = {}
        self.ctx = ctx
        self.n = len(self.toks)
        self.out: list[Clause] = []
        self.first = True
        self.third = False  # the current subject is third person (verbs must agree)
        self.plural = False
        self.subject_names: list[str] = []
        self.place: tuple[str, int] | None = None  # antecedent of a "where" clause
        self.recipient: tuple[str, int] | None = None  # indirect object of "give X Y"
        self.bare = False  # the last verb was an infinitive or after a modal: "and VERB" may be bare too
        self.bare_future = False  # ... and it was planned ("plans to explore and volunteer")
        self.owners: list[
            str
        ] = []  # named owners of earlier subjects ("Omar's flight"), for a later "he"/"she"
        self.title_class: str | None = None  # class noun before the last quoted title read
        self.last_subjects: list[tuple[str, bool, bool]] = []  # for a later "they"

    def low(self, i: int) -> str:
        return self.lows[i] if 0 <= i < self.n else ""

    # ---------------------------------------------------------------- subject
    def subject(self, i: int) -> tuple[list[tuple[str, bool, bool]], int]:
        """Subjects at ``i`` as (name, third_party, pronoun), and the index after them."""
        while i < self.n and self.low(i) in _CLAUSE_START_SKIP | {","}:
            i += 1
        if i >= self.n:
            return [], i
        low = self.low(i)
        me = self.ctx.me
        if low == "they" and self.plural and self.last_subjects:
            # "Melanie's kids are excited and they are considering X": they are the plural subject before
            return [(name, True, True) for name, _, _ in self.last_subjects], i + 1
        if low in _PRONOUN_SUBJ:
            if _PRONOUN_SUBJ[low] == "me":
                if self.low(i + 1) == "and" and i + 2 < self.n and _is_name(self.toks[i + 2]):
                    return [(me, False, False), (self.toks[i + 2].text, True, False)], i + 3
                return [(me, False, False)], i + 1
            # a subject pronoun continues the sentence's subject (centering); else the last name before it
            who = self.subject_names[0] if self.subject_names else self.ctx.referent_at(self.toks[i].start)
            if who is None and self.owners:
                who = self.owners[0]  # "Omar's flight got cancelled, so he rented a car": he is Omar
            return ([(who, True, True)], i + 1) if who else ([], i)
        if low in _POSS:
            return self._possessed(i)
        if low in {"the", "a", "an"}:
            np, j = self.noun_phrase(i, subject=True)
            return ([(np[0], True, False)], j) if np else ([], i)
        if _is_name(self.toks[i]):
            names, j = self._names(i)
            if not names:
                return [], i
            if i == 0 and len(names) == 1 and names[0].lower().endswith("ing"):
                return [], i  # "Training has been hard": an activity, not a person
            if i == 0 and len(names) == 1 and " " not in names[0] and "'" not in names[0]:
                # a capitalised first word is a name only if known or followed by a finite verb
                known = any(n == names[0] for _, n in self.ctx.names) or names[0].casefold() == me.casefold()
                nxt = self.low(j)
                if not known and not (
                    looks_finite(nxt)
                    or nxt in AUXILIARIES
                    or nxt in IRREGULAR
                    or nxt in _ADVERBS
                    or nxt == "and"
                    and self.low(j + 1) in _POSS
                ):
                    return [], i
            subjects = [(nm, nm.casefold() != me.casefold(), False) for nm in names]
            if self.low(j) == "and" and self.low(j + 1) in _POSS:
                before = list(self.subject_names)
                self.subject_names[:0] = [n for n in names if n.casefold() != me.casefold()][:1]
                more, k = self._possessed(j + 1)  # "Melanie and her kids": her = Melanie's
                self.subject_names[:] = before
                if more:  # "Melanie and her kids finished ...", "Nina and her husband run ..."
                    return subjects + more, k
            return subjects, j
        return [], i

    def _names(self, i: int) -> tuple[list[str], int]:
        names: list[str] = []
        while i < self.n and _is_name(self.toks[i]):
            j = i
            parts: list[str] = []
            while j < self.n and _is_name(self.toks[j]) and len(parts) < 4:
                parts.append(self.toks[j].text)
                j += 1
            if parts and parts[-1].endswith("'s") and j < self.n:
                owner = " ".join(parts)[:-2]
                head = self.low(j)
                if head.isalpha() and head not in COMMON_WORDS:
                    noun = [self.toks[j].text.lower()]
                    k = j + 1
                    if k < self.n and _is_name(self.toks[k]):
                        return [self.toks[k].text], k + 1  # "Ellie's cat Mochi"
                    while (
                        len(noun) < 3
                        and k + 1 < self.n
                        and self.low(k).isalpha()
                        and self.toks[k].text.islower()
                        and self.low(k) not in COMMON_WORDS
                        and self.low(k) not in _ADVERBS
                        and not self.low(k).endswith("ly")
                        and not looks_finite(self.low(k))
                        and self.low(k) not in IRREGULAR
                        and self.low(k) not in _KNOWN_VERBS
                        and not self.low(k).endswith("ing")
                        and noun[0] not in _FAVOURITE
                        and (
                            self.low(k + 1).endswith("ed")
                            or self.low(k + 1) in IRREGULAR
                            or self.low(k + 1) in AUXILIARIES
                            or self.low(k + 1).endswith("s")
                            and lemma(self.low(k + 1)) in _KNOWN_VERBS
                        )
                    ):
                        noun.append(self.low(k))  # "John's basketball team played": the team plays
                        k += 1
                    return [f"{owner}'s {' '.join(noun)}"], k
                return [], i
            names.append(" ".join(parts).replace(ABBREV_DOT, "."))
            i = j
            if self.low(i) == "and" and i + 1 < self.n and _is_name(self.toks[i + 1]):
                i += 1
                continue
            break
        return names, i

    def _owner(self, word: str, pos: int) -> str | None:
        kind = _POSS.get(word)
        if kind == "me":
            return self.ctx.me
        if kind == "ref":
            return self.ctx.referent_at(pos) or (self.subject_names[0] if self.subject_names else None)
        return None

    def _possessed(self, i: int) -> tuple[list[tuple[str, bool, bool]], int]:
        owner = self._owner(self.low(i), self.toks[i].start)
        np, j = self.noun_phrase(i + 1, subject=True)
        if owner is None or not np:
            return [], i
        head = np[0]
        words = head.split()
        named = [w for w in words[1:] if w[:1].isupper()]
        if named and not words[0][:1].isupper():
            return [(" ".join(named), True, False)], j  # "my sister Ana works ...", "our dog Rex hates ..."
        if self.low(j) == "and" and j + 2 < self.n and self.low(j + 1) in {"i", "we"}:
            return [(f"{owner}'s {head}", True, False), (self.ctx.me, False, False)], j + 2
        return [(f"{owner}'s {head}", True, False)], j

    # ---------------------------------------------------------------- noun phrases
    def noun_phrase(
        self, i: int, *, subject: bool = False, stop_adj: bool = False
    ) -> tuple[tuple[str, int] | None, int]:
        """(text, start) of a noun phrase at ``i`` and the index after it, or ``(None, i)``.

        Memoised per reader: the same phrase is looked at by the clause, the apposition and example checks and
        the concept pass. The key holds everything the result depends on (an owner "his" is resolved against the
        subjects read so far, so their count is part of it)."""
        key = (i, subject, stop_adj, len(self.subject_names))
        hit = self.phrases.get(key)
        if hit is None:
            hit = (*self._noun_phrase(i, subject=subject, stop_adj=stop_adj), self.title_class)
            self.phrases[key] = hit
        self.title_class = hit[2]
        return hit[0], hit[1]

    def _noun_phrase(
        self, i: int, *, subject: bool = False, stop_adj: bool = False
    ) -> tuple[tuple[str, int] | None, int]:
        start = i
        owner: str | None = None
        while i < self.n and (
            self.low(i) in _DETS
            or self.low(i) in _QUANT
            or self.low(i) == "of" and i > start
            or self.low(i) in {"all", "both"} and (self.low(i + 1) in _POSS or self.low(i + 1) in _DETS)
        ):
            i += 1  # "all his plans", "both the kids"
        if i < self.n and self.low(i) in _POSS:
            owner = self._owner(self.low(i), self.toks[i].start)
            i += 1
        words: list[_Tok] = []
        self.title_class = None
        while i < self.n and len(words) < 7:
            tok = self.toks[i]
            low = tok.low
            if tok.title:  # a quoted title ends the phrase; a class noun before it is its class
                if words and all(w.text.islower() for w in words):
                    self.title_class = " ".join(w.text for w in words)  # the book "The Lean Startup"
                    words = []
                if not words:
                    words.append(tok)
                    i += 1
                break
            if not (tok.text[0].isalnum() or tok.text[0] in "$\u20ac\u00a3#@"):
                break
            if low in _PREPS and not (
                low == "of"
                and words
                and i + 1 < self.n
                and self.low(i + 1) not in _DETS | _POSS.keys()
                and len(words) <= 3
            ):
                break
            if low in _SUBORD or low in _PRONOUN_SUBJ or low in {"they", "you", "it", "to", "not", "-", "how", "why", "what"}:
                break
            if words and low == "such" and self.low(i + 1) == "as":
                break  # "water sports such as surfing": the examples follow
            if words and low in _PARTICLES and not words[-1].low.endswith("ing") and (
                self.low(i + 1) in _PREPS or self.low(i + 1) in _DETS or not self.low(i + 1).isalpha()
            ):
                break  # "took his turtles out for a walk": a particle, not part of the noun
            if words and (low in _DETS or low in _POSS):
                break
            if low in AUXILIARIES and words:
                break
            if words and (
                low.endswith("ly") and low not in _LY_NOUNS
                or low in _ADVERBS
                and low not in {"home", "back"}
                and not (low == "online" and self._object_follows(i + 1) and self.low(i + 1) not in _DETS)
            ):
                break  # ("her own online clothing store": an adjective there)
            if words and low == "back" and self.low(i + 1) in {"home", "then", "in", "when", "at"}:
                break  # "a community center back home": where, not part of the name
            if words and not subject and low in {"named", "called"}:
                break
            if (
                words
                and words[-1].text.islower()
                and _is_name(tok)
                and i + 1 < self.n
                and _is_verbish(self.toks[i + 1])
                and self.low(i + 1) not in {"named", "called"}
            ):
                break  # "the gear John got": a relative clause starts at the name
            if (
                words
                and low.endswith("ing")
                and not _is_name(tok)
                and (
                    self.low(i + 1) in _DETS
                    or self.low(i + 1) in _POSS
                    or self.low(i + 1) in _OBJ_PRONOUNS
                    or self.low(i + 1) in _PREPS
                    and self.low(i + 1) not in {"of", "and"}
                )
                and low
                not in {
                    "clothing",
                    "building",
                    "painting",
                    "evening",
                    "morning",
                    "wedding",
                    "meeting",
                    "training",
                    "camping",
                    "hiking",
                    "reading",
                    "writing",
                    "counseling",
                    "counselling",
                    "gaming",
                    "swimming",
                    "cooking",
                    "dancing",
                    "parenting",
                    "fishing",
                    "sibling",
                    "ring",
                    "spring",
                    "thing",
                    "king",
                    "nothing",
                }
            ):
                break
            if stop_adj and words and (low in POSITIVE_FIND or low in NEGATIVE_FIND):
                break
            if (
                words
                and words[-1].text[:1].isupper()
                and not words[-1].text.endswith("'s")
                and tok.text.islower()
                and (low in POSITIVE_FIND or low in NEGATIVE_FIND or low in _ADJ_ONLY or _adjective(low))
            ):
                break  # "the song by Sara Bareilles significant": a name takes no adjective after it
            if words and low.endswith("ed") and (self.low(i + 1) in _PREPS or self.low(i + 1) in _DETS):
                break  # "a workshop focused on ...": a participle phrase starts
            if (
                subject
                and words
                and (
                    looks_finite(low)
                    and not _is_name(tok)
                    and low not in PETS
                    or low in IRREGULAR
                    or low in VERB_LEMMAS
                    and (
                        self.low(i + 1) in _PREPS
                        or self.low(i + 1) in _DETS
                        or self.low(i + 1) in _POSS
                        or self.low(i + 1) in _ADVERBS
                    )
                )
            ):
                break
            if not subject and words and low in IRREGULAR and low not in {"read", "set", "cut", "lead", "split"}:
                break
            if (
                subject
                and words
                and low in _KNOWN_VERBS
                and lemma(low) == low
                and (
                    words[-1].low in RELATIONS
                    or words[-1].low.endswith("s")
                    and not words[-1].low.endswith("ss")
                )
            ):
                break  # "her kids enjoy X", "her sister enjoy": a plural subject's verb is a bare form
            if (
                not subject
                and words
                and low in _KNOWN_VERBS
                and lemma(low) == low
                and words[-1].low.endswith("s")
                and (self.low(i + 1) in _DETS or self.low(i + 1) in _POSS)
            ):
                break  # "helps dancers reach their potential": the dancers reach it
            words.append(tok)
            i += 1
            if (
                low == words[-1].low
                and self.low(i) in {"and", "but", "or"}
                and len(words) <= 2
                and (
                    (_adjective(low) or low in _ADJ_ONLY or low in POSITIVE_FIND or low in NEGATIVE_FIND)
                    and (_adjective(self.low(i + 1)) or self.low(i + 1).endswith("ing"))
                    # "a loving and accepting home": -ing adjectives only right after an article
                    or len(words) == 1
                    and self.low(start) in {"a", "an", "the"}
                    and low.endswith("ing")
                    and self.low(i + 1).endswith("ing")
                )
                and self.low(i + 1).isalpha()
                and self.low(i + 2).isalpha()
                and self.low(i + 2) not in _PREPS
                and self.low(i + 2) not in _DETS
            ):
                words.extend(self.toks[i : i + 2])  # "a black and white bowl", "a challenging but fulfilling project"
                i += 2
        if not words:
            return None, start
        text = " ".join(w.text for w in words)
        first = words[0].start
        if " of " in f" {text.lower()} ":
            head, _, rest = text.partition(" of ")
            if head.lower().split()[-1] in _HEADLESS and rest:
                text = rest  # "a collection of kids' books" -> "kids' books"
                first = words[0].start + len(head) + 4
        text = text.replace(ABBREV_DOT, ".")
        low_words = text.lower().split()
        if low_words[-1] in RELATIONS and owner and not subject:
            text = f"{owner}'s {text}"  # "his kids" -> "John's kids": the object is a person of its own
        return (text, first), i

    # ---------------------------------------------------------------- verb group
    def verb_group(self, i: int) -> tuple[dict[str, object] | None, int]:
        aux: list[str] = []
        negated = False
        habitual = False
        future = False
        ended = False
        start = i
        while i < self.n:
            low = self.low(i)
            if (
                low in {"have", "has", "had"}
                and self.low(i + 1) == "to"
                and self.low(i + 2) in _KNOWN_VERBS
                and lemma(self.low(i + 2)) == self.low(i + 2)
            ):
                aux.append("did" if low == "had" else "must")  # "had to say goodbye", "has to finish X"
                future = future or low != "had"
                i += 1
            elif low in AUXILIARIES:
                aux.append(low)
                if low in _FUTURE_AUX:
                    future = True
            elif low in _NEG:
                negated = True
            elif low == "no" and self.low(i + 1) == "longer":
                negated = ended = True
                i += 1
            elif low == "used" and self.low(i + 1) == "to":
                habitual = True
                i += 1

            elif low in {"going", "about"} and self.low(i + 1) == "to" and aux:
                future = True
                i += 1
            elif (
                low in _ADVERBS or low.endswith("ly") and low not in {"fly", "rely", "apply", "reply", "ally"}
            ):
                pass
            else:
                break
            i += 1
        if i >= self.n:
            return None, start
        tok = self.toks[i]
        low = tok.low
        if (
            aux
            and aux[-1] in {"do", "does", "did"}
            and not negated
            and (low in _DETS or low in _POSS or lemma(low) not in _KNOWN_VERBS and low not in IRREGULAR)
            and low.isalpha()
        ):
            aux.pop()  # "does physical therapy", "did a workshop": "do" is the verb here
            i -= 1
            while self.low(i) not in {"do", "does", "did"}:
                i -= 1
            return self._main_verb(i, self.toks[i], self.low(i), aux, negated, habitual, future, ended, start)
        if (
            aux
            and aux[-1] in {"have", "has", "had"}
            and not (
                low.endswith("ed")
                or low in _PAST_PARTICIPLE_IRREG
                or low in {"been", "had", "got", "gotten", "done"}
                or low in _NEG
            )
        ):
            aux.pop()  # "I have two cats": "have" is the verb here
            i -= 1
            while self.low(i) != "have" and self.low(i) not in {"has", "had"}:
                i -= 1
            tok = self.toks[i]
            low = tok.low
            return self._main_verb(i, tok, low, aux, negated, habitual, future, ended, start)
        if (low in _QUANT or low.isdigit() or low in _DETS) and not (aux and aux[-1] in _BE and low in _DETS):
            return None, start  # "is a dancer" goes on to the copula below
        if not low.isalpha() or low in _NOT_VERB and low not in IRREGULAR and low not in {"like", "love"}:
            if aux and aux[-1] in {"am", "is", "are", "was", "were", "be", "been"}:
                return {
                    "copula": True,
                    "aux": aux,
                    "negated": negated,
                    "habitual": habitual,
                    "future": future,
                    "ended": ended,
                }, i
            return None, start
        if _is_name(tok) and not self.first:
            return None, start
        be = bool(aux) and aux[-1] in {"am", "is", "are", "was", "were", "be", "been", "being"}
        if be and low in _PASSIVE:
            return {
                "passive": low,
                "aux": aux,
                "negated": negated,
                "habitual": habitual,
                "future": future,
                "ended": ended,
            }, i + 1
        if be and (low in _ING_ADJ or not low.endswith("ing")) and not (
            low.endswith("ed") or low in _PAST_PARTICIPLE_IRREG
        ):
            return {
                "copula": True,
                "aux": aux,
                "negated": negated,
                "habitual": habitual,
                "future": future,
                "ended": ended,
            }, i
        if be and low.endswith("ed") and self.low(i + 1) in _ADJ_PREPS and self.low(i + 1) != "by":
            # "is focused on X", "was excited about the trip": a participle used as an adjective
            return {
                "copula": True,
                "aux": aux,
                "negated": negated,
                "habitual": habitual,
                "future": future,
                "ended": ended,
            }, i
        if be and not low.endswith("ing"):
            return None, start  # other passives ("was given a chance"): too easy to misread
        if low in {"got", "get", "gets", "getting"} and self.low(i + 1) in _PASSIVE:
            return {
                "passive": self.low(i + 1),
                "aux": aux,
                "negated": negated,
                "habitual": habitual,
                "future": future,
                "ended": ended,
            }, i + 2
        if low in {"got", "get", "gets", "getting"} and self.low(i + 1).endswith("ed"):
            return None, start  # "got promoted", "got noticed": a passive we do not read
        if (
            self.third
            and not aux
            and not self.bare
            and not (looks_finite(low) or low in IRREGULAR or low.endswith("ing"))
            and not (self.plural and lemma(low) == low and low in VERB_LEMMAS)
        ):
            return None, start  # "Strength training improved": not a clause about "Strength"
        return self._main_verb(i, tok, low, aux, negated, habitual, future, ended, start)

    def _main_verb(
        self,
        i: int,
        tok: _Tok,
        low: str,
        aux: list[str],
        negated: bool,
        habitual: bool,
        future: bool,
        ended: bool,
        start: int,
    ) -> tuple[dict[str, object] | None, int]:
        be = bool(aux) and aux[-1] in {"am", "is", "are", "was", "were", "be", "been", "being"}
        verb = lemma(low)
        past = (
            not aux
            and (low.endswith("ed") or low in IRREGULAR and low != verb and not low.endswith(("s", "ing")))
            or bool(aux)
            and aux[0] in {"was", "were", "did", "had"}
        )
        i += 1
        # catenatives: "started doing X", "decided to join X", "stopped eating meat"
        inner_aspect = None
        nxt = self.low(i)
        if (
            verb == "help"
            and lemma(nxt) == nxt
            and (
                nxt in _KNOWN_VERBS
                or nxt.isalpha()
                and (self.low(i + 1) in _DETS or self.low(i + 1) in _POSS)
                and not nxt.endswith("s")
                and nxt not in COMMON_WORDS
                and nxt not in RELATIONS
                and not _is_name(self.toks[i])
            )
            and (self._object_follows(i + 1) or self.low(i + 1) in _PARTICLES)
            and self.low(i + 1) not in _PREPS
        ):
            verb, inner_aspect = self.low(i), "help"  # "helped renovate a community center": renovated it
            i += 1
        elif verb in _CATENATIVE_INNER or verb in _CATENATIVE_KEEP:
            nxt = self.low(i)
            after = self.low(i + 1)
            if (
                nxt == "to"
                and after.isalpha()
                and after not in _DETS
                and not _is_name(self.toks[i + 1])
                and (after in VERB_LEMMAS or verb != "go" and lemma(after) == after)
            ):
                if verb in _CATENATIVE_KEEP and verb not in _PLAN_VERBS:
                    return None, start  # "loves to paint": the likes rule's
                inner_aspect = "plan" if verb in _PLAN_VERBS else verb
                future = future or verb in _PLAN_VERBS
                verb = lemma(self.low(i + 1))
                i += 2
            elif nxt.endswith("ing") and nxt.isalpha() and verb in _CATENATIVE_INNER:
                inner_aspect = verb
                future = future or verb == "consider"  # "is considering adopting a pup": not adopted yet
                verb = lemma(nxt)
                i += 1
        if verb == "look" and self.low(i) == "forward" and self.low(i + 1) == "to" and self._gerund_here(i + 2):
            # "looks forward to attending a conference": the attending is planned
            inner_aspect, future, verb = "plan", True, lemma(self.low(i + 2))
            i += 3
        particle = None
        if (
            self.low(i) in _PARTICLES
            and (map_verb(verb, None, self.low(i)) or self.low(i) in {"up", "out", "back", "off", "down"})
            or self.low(i) in {"into", "after", "on", "for"}
            and (map_verb(verb, None, self.low(i)) or verb == "look" and self.low(i) != "on")
        ):  # "looking into counseling jobs", "looking for investors": what is looked for is the object
            particle = self.low(i)
            i += 1
        if particle and self.low(i) in {"for", "with", "on"} and map_verb(verb, self.low(i), particle):
            pass
        if verb == "be" or verb == "do" and self.low(i) in _NEG:
            return None, start
        if verb == "go" and self.low(i).endswith("ing") and self.low(i).isalpha():
            verb, particle = "practise", None  # "went camping", "goes hiking": the activity is the object
            return {
                "verb": verb,
                "lemma": verb,
                "particle": None,
                "aux": aux,
                "negated": negated,
                "habitual": habitual,
                "future": future,
                "ended": ended,
                "past": past,
                "inner": inner_aspect,
                "progressive": False,
            }, i
        return {
            "verb": f"{verb}_{particle}" if particle else verb,
            "lemma": verb,
            "particle": particle,
            "aux": aux,
            "negated": negated,
            "habitual": habitual,
            "future": future,
            "ended": ended,
            "past": past,
            "inner": inner_aspect,
            "progressive": low.endswith("ing") and be,
        }, i

    # ---------------------------------------------------------------- clause
    def read(self) -> list[Clause]:
        i = self._skip_intro()
        subjects, i = self.subject(i)
        earlier: dict[str, object] = {}
        while subjects and i < self.n:
            self.last_subjects = subjects
            self.subject_names.extend(s for s, tp, _ in subjects if tp and s[:1].isupper() and "'" not in s)
            self.owners.extend(
                s.partition("'s ")[0] for s, _, _ in subjects if "'s " in s and s[:1].isupper()
            )
            self.third = all(tp for _, tp, _ in subjects)
            self.plural = len(subjects) > 1 or subjects[0][0].lower().endswith("s")
            conjunct_bare, conjunct_future = self.bare, self.bare_future
            vg, j = self.verb_group(i)
            self.first = False
            if vg is None:
                resumed = self._resume(i)
                if resumed is None:
                    break
                subjects, i = resumed
                continue
            if conjunct_bare and conjunct_future and not vg.get("aux") and lemma(self.low(i)) == self.low(i):
                vg["future"] = True  # "plans to explore more and volunteer at shelters": both are planned
            if not vg.get("aux") and self.low(i).endswith("ing"):
                for key in ("past", "future", "habitual"):  # "spent the summer working at a camp": then, too
                    vg[key] = vg.get(key) or earlier.get(key)
            earlier = vg
            self.bare = bool(vg.get("inner")) or any(a in _MODALS for a in vg.get("aux", ()))  # type: ignore[attr-defined]
            self.bare_future = bool(vg.get("future"))
            i = self._complements(subjects, vg, j)
            i = self._infinitives(subjects, vg, i)
            skipped = i
            for _ in range(3):  # "... effect of nature, recognizing X": skip phrases nothing attached to
                if self.low(i) not in _PREPS or self.low(i + 1).endswith("ing"):
                    break
                np, k = self.noun_phrase(i + 1)
                if np is None:
                    break
                i = k
            if i == skipped and self._participle(i):
                continue  # "spent the summer working at a camp", "broke his ankle playing soccer"
            nxt = self._next_clause(i)
            if nxt is None:
                break
            new_subjects, i = nxt
            if new_subjects:
                subjects = new_subjects
        return self.out

    def _resume(self, i: int) -> tuple[list[tuple[str, bool, bool]], int] | None:
        """After a clause the reader cannot parse ("Nate's tournament got pushed back, so he tried X"), the next
        clause with a subject of its own: a comma or conjunction, then a subject pronoun or a name and a verb."""
        k = i
        while k < self.n - 2:
            if self.low(k) in {",", ";", "and", "but", "so"} and (
                self.low(k + 1) in {"he", "she", "they", "i", "we"}
                or self.low(k + 1) in {"so", "and", "but"}
                and self.low(k + 2) in {"he", "she", "i", "we"}
            ):
                nxt = self._next_clause(k)
                if nxt and nxt[0]:
                    return nxt
            k += 1
        return None

    def _infinitives(self, subjects: list[tuple[str, bool, bool]], vg: dict[str, object], i: int) -> int:
        """Read "to VERB ..." after a clause as a clause of the same subject: a purpose or a wish, so planned.

        "attended a group to help with her decision", "is lucky to have friends", "wants to visit the Cliffs for
        the views": the infinitive's own object and phrases are facts about the subject, stated as intended.
        """
        if vg.get("copula") and self.low(i) == "to" or vg.get("lemma") in _DITRANSITIVE:
            return (
                i  # "his dream was to play ...", "gives Jon tips to stay confident": not the subject's plan
            )
        for _ in range(3):
            k = i
            if vg.get("copula") and self.low(k).isalpha() and self.low(k + 1) == "to":
                k += 1  # "is excited to start", "is lucky to have"
            elif self.low(k) == "in" and self.low(k + 1) == "order" and self.low(k + 2) == "to":
                k += 2
            if (
                self.low(k) != "to"
                or self.low(k + 1) not in _KNOWN_VERBS
                or lemma(self.low(k + 1)) != self.low(k + 1)
            ):
                return i
            if any(self.low(b) == "for" for b in range(max(0, k - 4), k)) and all(
                self.low(b).isalpha() for b in range(max(0, k - 4), k)
            ):
                return i  # "a website for customers to make orders": the customers make them
            ongoing = vg.get("copula") and self.low(k - 1) in _TO_STATE
            if vg.get("lemma") in _OBJ_CONTROL or vg.get("lemma") in _SAY:
                # "encourages Jon to believe in himself": Jon is the one to believe, not the encourager
                last = self.out[-1] if self.out else None
                if not (last and last.obj and _NAMEY.match(last.obj) and " " not in last.obj):
                    return i
                subjects = [(last.obj, last.obj.casefold() != self.ctx.me.casefold(), False)]
                ongoing = False
            self.bare = True
            inner, j = self.verb_group(k + 1)
            self.bare = False
            if inner is None or inner.get("copula") or inner.get("passive"):
                return i
            if not ongoing:
                inner["future"] = True
            inner["negated"] = False  # "didn't go to X to see Y": the purpose is not denied
            self.bare, self.bare_future = True, bool(inner.get("future"))
            i = self._complements(subjects, inner, j)
            vg = inner
        return i

    def _skip_intro(self) -> int:
        # "Last week, Caroline ..." / "After the race, she ...": an opening adverbial up to the first comma
        first = self.low(0)
        if not (
            first in _PREPS
            or first in _SUBORD
            or first in _ADVERBS
            or first in _TIME_WORDS
            or first in {"last", "this", "next", "yesterday", "today", "recently", "lately", "earlier"}
            or first.endswith("ly")
        ):
            return 0
        for k in range(1, min(self.n, 9)):
            if self.low(k) == ",":
                return k + 1
        return 0

    def _next_clause(self, i: int) -> tuple[list[tuple[str, bool, bool]], int] | None:
        coordinated = False
        while i < self.n and (
            self.low(i) in {",", "and", "but", "then", "also", "so", "later", "yet"}
            or self.low(i) in _ADVERBS
            or self.low(i).endswith("ly")
            and i + 1 < self.n
            and self.low(i + 1) in {",", "and", "but"}
        ):
            coordinated = coordinated or self.low(i) in {",", "and", "but", "then", "so", "yet"}
            i += 1
        if i >= self.n or not coordinated and self.low(i) != "who" and self.low(i) not in _SUB_CLAUSE:
            return None
        low = self.low(i)
        if (
            low == "who"
            and self.out
            and self.out[-1].copula
            and i + 1 < self.n
            and _is_verbish(self.toks[i + 1])
        ):
            last = self.out[-1]  # "Jon is a dancer who runs a studio", "Cindy, a resident, who wrote X"
            return [(last.subject, last.third_party, last.pronoun)], i + 1
        if (
            low in _SUB_CLAUSE
            and i + 1 < self.n
            and (self.low(i + 1) in _PRONOUN_SUBJ or self.low(i + 1) in _POSS or _is_name(self.toks[i + 1]))
        ):
            # "... when he sees X", "... because she loves Y", "a store where she sells Z": a clause of its own
            subjects, j = self.subject(i + 1)
            if (
                subjects
                and j < self.n
                and (
                    _is_verbish(self.toks[j])
                    or self.low(j) in AUXILIARIES
                    or self.low(j) in _ADVERBS
                    or subjects[0][0] == self.ctx.me
                )
            ):
                if low == "where" and self.out and (self.out[-1].pps or self.out[-1].obj):
                    last = self.out[-1]
                    self.place = (
                        (last.pps[-1][1], last.pps[-1][2]) if last.pps else (last.obj or "", last.obj_start)
                    )
                return subjects, j
            return None
        if low in _PRONOUN_SUBJ or low == "they" or (
            _is_name(self.toks[i]) and i + 1 < self.n and _is_verbish(self.toks[i + 1])
        ):
            subjects, j = self.subject(i)
            return (subjects, j) if subjects else None
        if (
            _is_verbish(self.toks[i])
            or low in AUXILIARIES
            or low in {"never", "not", "now"}
            or self.bare and low in _KNOWN_VERBS and lemma(low) == low and self.low(i - 1) == "and"
        ):  # "... to express her feelings and explore her identity": the infinitive goes on
            if self.low(i - 1) == "," and (
                lemma(low) in _ABOUT_THE_THING
                or low.endswith("ed")
                and self.low(i + 1) == "by"
                or low in _NOUN_S
            ):
                return None  # "a necklace from her grandmother, symbolizing love": about the necklace
            return [], i
        return None

    def _complements(self, subjects: list[tuple[str, bool, bool]], vg: dict[str, object], i: int) -> int:
        aspect = "ongoing"
        # "finished reading X", "finished writing her book": done, so true; "finished working at X": over
        stopped = vg.get("inner") in _STOP_ASPECT and (vg.get("inner") != "finish" or vg.get("lemma") in _STATES)
        aux = vg.get("aux")
        if vg.get("future") or vg.get("copula") and isinstance(aux, list) and aux[:1] == ["be"]:
            aspect = "future"  # "to be a leader", "and be a mentor": not yet
        elif vg.get("habitual"):
            aspect = "habitual_past"
        elif vg.get("ended") or stopped:
            aspect = "ended"
        elif vg.get("past") or vg.get("inner") == "finish":
            aspect = "past_event"
        negated = bool(vg.get("negated")) or stopped
        base: _Base = {"negated": negated, "aspect": aspect}
        if vg.get("copula"):
            if (
                self.low(i).isalpha()
                and self.low(i) not in _NOT_VERB
                and self.low(i + 1) in {"and", "or"}
                and self.low(i + 2).isalpha()
                and self.low(i + 2) not in _NOT_VERB
                and self.low(i + 3) in _ADJ_PREPS
            ):
                i += 2  # "is supportive and enthusiastic about sharing X": the second adjective takes the phrase
            adj = self.low(i)
            if (
                adj.isalpha()
                and adj not in _NOT_VERB
                and self.low(i + 1) in _ADJ_PREPS
                and self._gerund_here(i + 2)
            ):
                if adj in _EAGER:
                    base = {"negated": base["negated"], "aspect": "future"}  # "is excited about visiting NYC"
                return self._gerund(subjects, base, i + 2)  # "is focused on building her customer base"
            if (
                adj.isalpha()
                and adj not in _NOT_VERB
                and self.low(i + 1) in _ADJ_PREPS
                and not (self.low(i + 1) == "to" and self.low(i + 2) in _KNOWN_VERBS)
                and self.low(i + 2) not in _OBJ_PRONOUNS
                and not (self.low(i + 2).endswith("ing") and self._gerund_here(i + 2))
            ):
                np, j = self.noun_phrase(i + 2)
                if np:  # "is proud of her kids", "is grateful for the support", "is full of energy"
                    for s, tp, pr in subjects:
                        self.out.append(Clause(s, tp, pr, f"{adj}_{self.low(i + 1)}", np[0], np[1], **base))
                    return j
            if self.low(i) in {"a", "an", "the"} or self.low(i) in _POSS:
                np, j = self.noun_phrase(i)
                if np:
                    for s, tp, pr in subjects:
                        self.out.append(Clause(s, tp, pr, "be", np[0], np[1], copula=True, **base))
                    return self._pps(subjects, "be", j, base, attach=False)
                return j
            j = i
            while j < self.n and j - i < 3 and self.low(j).isalpha() and self.low(j) not in _SUBORD:
                j += 1  # "is lactose intolerant and is trying X": the adjective ends at the coordination
            if j > i and self.low(j) in {",", "and", "but"}:
                return j
            return i
        passive = vg.get("passive")
        if isinstance(passive, str):
            prep = self.low(i)
            if prep == _PASSIVE_PREP.get(passive, prep) and self._gerund_here(i + 1):
                # "is involved in organizing a show", "is interested in trying X": the activity, not a thing
                return self._gerund(subjects, _prospective(base, passive, prep), i + 1)
            if prep == _PASSIVE_PREP.get(passive, prep) and prep in _PREPS | {"into"}:
                np, j = self.noun_phrase(i + 1)
                if (
                    np
                    and self.low(j) in {"named", "called"}
                    and j + 1 < self.n
                    and _is_name(self.toks[j + 1])
                ):
                    names, k = self._names(j + 1)
                    if names:
                        self.out.append(Clause(names[0], True, False, "be", np[0], -1, copula=True))
                        np, j = (names[0], self.toks[j + 1].start), k
                if np:
                    for s, tp, pr in subjects:
                        self.out.append(Clause(s, tp, pr, "be", np[0], np[1], passive=passive, **base))
                    return j
            if passive in {"married", "engaged"} and len(subjects) == 2:
                (a, ta, pa), (b, _, _) = subjects  # "Megan and Josh got married": to each other
                self.out.append(Clause(a, ta, pa, "be", b, -1, passive=passive, **base))
            return i
        verb = str(vg["verb"])
        if vg.get("lemma") in _SAY and not (
            self.low(i) in {"in", "about", "with"} or self.low(i) == "to" and vg.get("lemma") in _TALK
        ):
            k = i + 1 if self.low(i) == "that" else i
            if k < self.n and (self.low(k) in _PRONOUN_SUBJ or _is_name(self.toks[k])) and k > i:
                return k - 1  # "acknowledges that Joanna likes X": read the reported clause on its own
            if (
                vg.get("lemma") in {"think", "dream"}
                and self.low(i) in {"of", "about"}
                and self._gerund_here(i + 1)
            ):
                return self._gerund(subjects, {"negated": base["negated"], "aspect": "future"}, i + 1)
            participle = (
                self.low(i - 1).endswith("ing")
                and not vg.get("aux")
                and not vg.get("gerund")
                and vg.get("lemma") not in {"share", "update", "know"}  # "updating his business plan": a doing
            )
            if vg.get("lemma") in _RECALL and not participle and self._gerund_here(i):
                return self._gerund(subjects, base, i)  # "mentioned volunteering at a shelter": her own doing
            if participle or not (vg.get("lemma") in _SAY_THING and self._says_a_thing(i)):
                return self._skip_to_clause_end(
                    i
                )  # "believes that ...", "mentioned it's ...": reported content
            # "expressed gratitude for the support", "described her trip": the thing said is a fact of its own
        stop_adj = vg.get("lemma") in {"find", "consider", "call", "keep", "think"}
        obj: tuple[str, int] | None = None
        if self.low(i) in _OBJ_PRONOUNS and not self._possessive_her(i):
            i += 1
            if stop_adj:  # "considers it a sanctuary", "finds them a great team": what it is, not an object
                return self._pps(subjects, verb, self._skip_complement(i), base)
        gerund_at = -1
        if i < self.n and self.low(i) not in _PREPS and self.low(i) not in {",", "and", "but", "to"}:
            at = i
            obj, i = self.noun_phrase(i, stop_adj=stop_adj)
            if (
                obj
                and i == at + 1
                and self._gerund_here(at)
                and (
                    self._object_follows(i) or self.low(i) in _PP_KEEP and not self.low(i + 1).endswith("ing")
                )
            ):
                gerund_at = at  # "appreciates cultivating a loving home": what is cultivated is a fact too
        if obj and vg.get("lemma") in _CAUSATIVE and " " in obj[0]:
            parts = obj[0].split(" ")
            after = self.low(i)
            cut = next(
                (
                    k
                    for k in range(1, len(parts))
                    if parts[k] in _KNOWN_VERBS
                    and lemma(parts[k]) == parts[k]
                    and (k < len(parts) - 1 or after in _DETS or after in _POSS or after in _OBJ_PRONOUNS)
                ),
                0,
            )
            if cut:  # "helping her cousin find a place", "help my mom cook dinner": the verb is the object's
                obj = (" ".join(parts[:cut]), obj[1])
        named_class = self.title_class if obj else None
        if obj and self.low(i) in {"named", "called"} and i + 1 < self.n and _is_name(self.toks[i + 1]):
            names, j = self._names(i + 1)
            if names:  # "a pilot named Ben": the value is Ben, a pilot
                named_class, obj, i = obj[0], (names[0], self.toks[i + 1].start), j
        if obj and vg.get("lemma") in _DITRANSITIVE:
            first, _, rest = obj[0].partition(" ")
            if (first[:1].isupper() or singular(first.lower()) in RELATIONS) and rest and rest[:1].islower():
                obj = (rest, obj[1] + len(first) + 1)  # "gives Jon tips", "teach his kids responsibility"
                self.recipient = (first, obj[1] - len(first) - 1)
        complement = None
        if obj and stop_adj:
            complement, i = self._complement(i)  # "finds X inspiring", "finds art to be healing"
        clauses = [
            Clause(
                s, tp, pr, verb, obj[0] if obj else None, obj[1] if obj else -1, complement=complement, **base
            )
            for s, tp, pr in subjects
        ]
        self.out.extend(clauses)
        if self.recipient is not None:
            for c in clauses:
                c.pps.append(("to", self.recipient[0], self.recipient[1]))
            self.recipient = None
        if self.place is not None:
            for c in clauses:  # "a store where she sells pieces": she sells them at the store
                c.pps.append(("at", self.place[0], self.place[1]))
            self.place = None
        if named_class and obj:
            self.out.append(Clause(obj[0], True, False, "be", named_class, -1, copula=True))
        if obj:
            i, name = self._apposition(obj[0], i)
            if name:  # "greets her puppy, Coco": greets Coco
                for s, tp, pr in subjects:
                    self.out.append(Clause(s, tp, pr, verb, name[0], name[1], first=obj[0], **base))
        # a second object: "a dog named Luna and a cat named Oliver" / "peanuts and shellfish"
        while (
            obj
            and self.low(i) in {"and", ","}
            and (self.low(i + 1) in _DETS | _POSS.keys() | _QUANT or self._conjunct(i + 1))
        ):
            more, j = self.noun_phrase(
                i + 2 if self.low(i) == "," and self.low(i + 1) == "and" else i + 1, stop_adj=stop_adj
            )
            if not more:
                break
            more = _owned_like(obj[0], more)
            for s, tp, pr in subjects:
                clauses.append(Clause(s, tp, pr, verb, more[0], more[1], first=obj[0], **base))
                self.out.append(clauses[-1])
            i = j
            if stop_adj and complement is None:
                complement, i = self._complement(i)  # "found the acting and story captivating": both
                for c in clauses:
                    c.complement = complement
        light = vg.get("lemma") in LIGHT_VERBS and singular(obj[0].lower().split()[-1]) not in PETS if obj else True
        if obj and gerund_at < 0 and not light:  # "has a diet including vegetables": not had
            items, i, doing = self._examples(obj[0], i, counted=self._counted(obj[1]))
            for item in items:  # "enjoys outdoor activities such as hiking and board games": each one too
                for s, tp, pr in subjects:
                    self.out.append(Clause(s, tp, pr, verb, item[0], item[1], first=obj[0], **base))
            if doing >= 0:  # "activities such as giving out food at a shelter": the subject's doing
                return self._gerund(subjects, base, doing)
        if gerund_at >= 0:
            return self._gerund(subjects, base, gerund_at)
        return self._pps(subjects, verb, i, base, clauses=clauses)

    def _participle(self, i: int) -> bool:
        """A bare participle right after a clause is the subject's doing ("spent the summer working at a camp"),
        unless a person stands before it ("saw her kids playing", "happiness for Caroline finding ...": theirs)
        or it is a result ("won the match, making him champion")."""
        if not self._gerund_here(i) or i == 0 or not self.toks[i - 1].text.isalnum():
            return False
        before = self.toks[i - 1]
        if before.low in _PREPS or before.low in _SUBORD:
            return False
        if _is_name(before) or before.low in RELATIONS or singular(before.low) in RELATIONS:
            return False
        return not (lemma(self.low(i)) in _CAUSATIVE and self.low(i + 1) in _OBJ_PRONOUNS)

    def _gerund_doer(
        self, subjects: list[tuple[str, bool, bool]], verb: str, prep: str, clauses: list[Clause] | None
    ) -> list[tuple[str, bool, bool]] | None:
        """Who does the gerund after a preposition: the subject ("finds joy in volunteering", "is working on
        opening a studio", "reminisced about volunteering"), or a named object ("congratulated John on winning",
        "thanked Ana for helping"); ``None`` when it is unclear (an object that is not a person, a verb of saying,
        "for" after anything but a person)."""
        lem = verb.partition("_")[0]
        if lem in _SAY:
            return None  # "talked about quitting": what was said, not what was done
        obj = clauses[0].obj if clauses else None
        if obj and _NAMEY.match(obj) and " " not in obj and prep in {"on", "for"}:
            return [(obj, obj.casefold() != self.ctx.me.casefold(), False)]
        if prep in {"in", "by"}:
            return subjects
        if obj or prep not in _GERUND_PREPS:
            return None
        return subjects

    def _apposition(self, target: str, i: int) -> tuple[int, tuple[str, int] | None]:
        """What a name is, said beside it: "Woodhaven, a small town in the Midwest", "'Dune' by Frank Herbert, a
        story about ...", "his dog, Max, ...". Emits the class fact and returns the index after the apposition
        (``i`` when there is none) and the name when the apposition is one (then it is the object too). A name
        followed by more names is a list, not an apposition."""
        if self.low(i) != "," or i + 2 >= self.n:
            return i, None
        if target[:1].isupper() and self.low(i + 1) in {"a", "an", "the"}:
            np, j = self.noun_phrase(i + 1)
            k = j
            for _ in range(2):  # "a small town in the Midwest": the phrases belong to the class noun
                if self.low(k) not in _PREPS or self.low(k + 1).endswith("ing"):
                    break
                more, k2 = self.noun_phrase(k + 1)
                if not more:
                    break
                k = k2
            if np and (k >= self.n or self.low(k) in {",", ".", ";", "who", "which", "that", "and"}):
                self.out.append(Clause(target, True, False, "be", np[0], np[1], copula=True))
                return k, None
            return i, None
        head = target.lower().split()[-1]
        if target[:1].islower() and _is_name(self.toks[i + 1]) and not self.toks[i + 1].title:
            names, j = self._names(i + 1)
            after = self.low(j)
            if (
                len(names) == 1
                and (j >= self.n or after in {".", ";", "who", "which"} or after == "," and self.low(j + 1) != "and")
                and head.isalpha()
                and head not in _GENERIC
            ):
                self.out.append(Clause(names[0], True, False, "be", head, -1, copula=True))  # "his dog, Max"
                return j, (names[0], self.toks[i + 1].start)
        return i, None

    def _examples(
        self, category: str, i: int, *, phrase: bool = False, counted: bool = True
    ) -> tuple[list[tuple[str, int]], int, int]:
        """Examples after a noun phrase ("activities like hiking, picnics and board games", "pets including a cat",
        "movies such as 'Elf'"): (their noun phrases, the index after them, the index of a gerund example or -1).
        People are not examples of a kind here ("a friend like John" says what John is, not what was done)."""
        k = i + 1 if self.low(i) == "," and not phrase else i
        head = category.lower().split()[-1]
        if self.low(k) == "such" and self.low(k + 1) == "as":
            k += 2
        elif self.low(k) == "including" or self.low(k) == "like" and (head != singular(head) or not counted):
            k += 1  # "movies like 'Elf'", "music like Bach" (a kind, its examples), not "a shelter like family"
        else:
            return [], i, -1
        if head in RELATIONS or singular(head) in RELATIONS or head in _PEOPLE:
            return [], i, -1
        if self._gerund_here(k):
            return [], k, k
        found: list[tuple[str, int]] = []
        j = k
        while len(found) < 6:
            np, j = self.noun_phrase(k)
            if not np:
                break
            if self.low(j) in {"named", "called"} and j + 1 < self.n and _is_name(self.toks[j + 1]):
                names, j = self._names(j + 1)  # "pets including a cat named Bailey": Bailey, a cat
                if names:
                    self.out.append(Clause(names[0], True, False, "be", np[0], -1, copula=True))
                    np = (names[0], np[1])
            found.append(np)
            k = j + 2 if self.low(j) == "," and self.low(j + 1) in {"and", "or"} else j + 1
            if self.low(j) not in {"and", ",", "or"} or not (
                self.low(k) in _DETS or self._conjunct(k) or self.low(k).endswith("ing") and self.low(k).isalpha()
            ):
                break  # ("surfing, kayaking and sailing": activities are examples too)
        return found, (j if found else i), -1

    def _complement(self, i: int) -> tuple[str | None, int]:
        """The quality after "find/consider/keep X": "inspiring", "to be healing"; ``(None, i)`` when none."""
        k = i + 2 if self.low(i) == "to" and self.low(i + 1) == "be" else i
        low = self.low(k)
        if low in POSITIVE_FIND or low in NEGATIVE_FIND:
            return low, k + 1
        if low.isalpha() and (_adjective(low) or low in _ADJ_ONLY or low.endswith(("ing", "ed")) and k > i):
            return low, k + 1  # a quality the lexicon does not grade: no fact either way
        return None, i

    def _possessive_her(self, i: int) -> bool:
        """ "her" before a noun is a possessive ("with her brother"), before anything else an object ("with her")."""
        nxt = self.low(i + 1)
        return (
            self.low(i) == "her"
            and nxt.isalpha()
            and nxt not in _PREPS
            and nxt not in _SUBORD
            and nxt != "to"
            and nxt not in POSITIVE_FIND
            and nxt not in NEGATIVE_FIND
        )

    def _counted(self, start: int) -> bool:
        """Does a determiner or possessive stand before the noun phrase starting at character ``start``?"""
        before = [t for t in self.toks if t.start < start]
        return bool(before) and (before[-1].low in _DETS or before[-1].low in _POSS)

    def _skip_complement(self, i: int) -> int:
        """The index after "(both) a sanctuary and a source of comfort" after "considers it"."""
        if self.low(i) == "both":
            i += 1
        np, j = self.noun_phrase(i)
        while np and self.low(j) in {"and", "or"} and self.low(j + 1) in _DETS:
            np, j = self.noun_phrase(j + 1)
        return j

    def _says_a_thing(self, i: int) -> bool:
        """A noun phrase (not a clause) follows a verb of saying: "expresses gratitude", "described the trip"."""
        low = self.low(i)
        if low in {"herself", "himself", "themselves", "myself", "it", "them"}:
            return True  # "shared it with her group": the phrases after it are read
        if low in {"that", "how", "what", "why", "when", "whether", "if"} or low.endswith("ing"):
            return False  # a reported clause or activity ("mentioned reading a series"): not the thing said
        thing = low in _DETS or low in _POSS
        named = _is_name(self.toks[i]) and self.low(i + 1) == "," and self.low(i + 2) in {"a", "an", "the"}
        if not thing and not named and not (
            self._object_follows(i) and not _is_name(self.toks[i]) and not self._gerund_here(i)
        ):
            return False  # "mentioned Cindy, a resident at the shelter": the person mentioned, and what she is
        np, j = self.noun_phrase(i, subject=True)
        # a noun phrase followed by a verb is the subject of a reported clause ("mentioned her dog loves X")
        return bool(np) and not (j < self.n and (_is_verbish(self.toks[j]) or self.low(j) in AUXILIARIES))

    def _gerund_here(self, i: int) -> bool:
        low = self.low(i)
        nxt = self.low(i + 1)
        return (
            low.endswith("ing")
            and (low not in _ING_NOUNS and low not in _GERUND_NOUNS or nxt in _DETS or nxt in _POSS)
            and not _is_name(self.toks[i])
            and lemma(low) in _KNOWN_VERBS
            and lemma(low) not in _STOP_ASPECT
            and lemma(low) != "stop"
        )

    def _object_follows(self, i: int) -> bool:
        low = self.low(i)
        return (
            low in _DETS
            or low in _POSS
            or low in _PARTICLES
            or (
                low.isalpha()
                and low not in COMMON_WORDS
                and low not in _PREPS
                and low not in _SUBORD
                and low not in _ADVERBS
                and not low.endswith("ly")
            )
        )

    def _gerund(self, subjects: list[tuple[str, bool, bool]], base: _Base, i: int) -> int:
        """The clause of a gerund ("finds joy in painting landscapes", "loves cooking Thai food"): same subject,
        same time; its object and phrases are read as for any verb."""
        verb = lemma(self.low(i))
        i += 1
        if self.low(i) in _PARTICLES and (
            map_verb(verb, None, self.low(i)) or self.low(i) in {"up", "out", "off"}
        ):
            verb = f"{verb}_{self.low(i)}"
            i += 1
        vg: dict[str, object] = {
            "verb": verb,
            "lemma": verb.partition("_")[0],
            "negated": base["negated"],
            "future": base["aspect"] == "future",
            "habitual": base["aspect"] == "habitual_past",
            "ended": base["aspect"] == "ended",
            "past": base["aspect"] == "past_event",
            "gerund": True,
        }
        return self._complements(subjects, vg, i)

    def concepts(self, limit: int = 4) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        i = 0
        for name in self.subject_names:
            if name.lower() not in seen and name.casefold() != self.ctx.me.casefold():
                seen.add(name.lower())
                out.append(name)
        while i < self.n and len(out) < limit:
            low = self.low(i)
            if low == "to" and self.low(i + 1) in VERB_LEMMAS:
                i += 2  # "to stay confident": an infinitive, not a place
                continue
            if low in _DETS or low in _POSS or low in _PP_KEEP or low == "of":
                # at a clause start the phrase is a subject and ends at its verb ("my knee hurts after ...")
                np, j = self.noun_phrase(i + 1, subject=i == 0 or self.low(i - 1) in {",", "and", "but", ";"})
                if np:
                    text = np[0]
                    if text.lower().endswith(" of"):
                        text = text[:-3]
                    words = text.lower().split()
                    if (
                        words[-1] not in _GENERIC
                        and not all(w in _BAD_OBJ or w in COMMON_WORDS for w in words)
                        and words[0] not in RELATIONS
                        and words[0] not in _FAVOURITE
                        and not any(ch.isdigit() for ch in text)  # "item 3", "train 35": values, not things
                        and not any(w[:1].isupper() for w in text.split()[1:])
                        and not _is_time(text, np[1], self.ctx)
                        and words[-1] not in _ADJ_ONLY
                        and words[-1] not in POSITIVE_FIND
                        and len(words) <= 4
                        and not words[0].endswith("ing")
                        and text.lower() not in seen
                    ):
                        seen.add(text.lower())
                        out.append(text)
                    i = max(j, i + 1)
                    continue
            i += 1
        return out

    def _conjunct(self, i: int) -> bool:
        """Does a bare noun phrase start at ``i`` (after "and" or a comma), rather than a new verb phrase?

        "finds peace and refreshment", "with family and friends", "the love and support she received" are one
        verb with two things; "loves X and finds it ...", "and provide support" are a second verb. A word the
        lexicon knows as a verb counts as one when an object follows it (a determiner, a possessive, a pronoun).
        """
        if self.low(i - 1) == "," and self.low(i) == "and":
            i += 1
        if i >= self.n:
            return False
        tok = self.toks[i]
        low = tok.low
        if tok.title:
            return True
        if (
            not low.isalpha()
            or low in COMMON_WORDS
            or low in _PREPS
            or low in _SUBORD
            or low in _ADVERBS
            or low.endswith("ly")
            and low not in _LY_NOUNS
            or low in _TIME_WORDS
            or looks_finite(low)
            and not low.endswith("s")
            or low in IRREGULAR
            or low.endswith("s")
            and lemma(low) != low
            and lemma(low) in _KNOWN_VERBS
            and low not in _NOUN_S
            or low.endswith("ing")
            and low not in _ING_NOUNS
            and not _is_name(tok)
        ):
            return False
        nxt = self.low(i + 1)
        if _is_name(tok) and (_is_verbish(self.toks[i + 1]) if i + 1 < self.n else False):
            return False  # "..., and Jon runs a studio": a new clause
        takes_object = (
            nxt in _DETS
            or nxt in _POSS
            or nxt in _OBJ_PRONOUNS
            or nxt in _PARTICLES
            or nxt in _PP_KEEP
            or nxt.isalpha()
            and nxt not in COMMON_WORDS
            and nxt not in _PREPS
            and nxt not in _SUBORD
        )
        # a bare verb form cannot continue a third-person-singular subject's finite clause ("finds calm and focus
        # in yoga"): it is a noun there, unless the clause was an infinitive or after a modal
        agrees = self.bare or not (self.third and not self.plural)
        verb_here = (
            low in _KNOWN_VERBS and agrees or low.endswith("s") and nxt in _OBJ_PRONOUNS | _POSS.keys()
        )
        return not (takes_object and verb_here)

    def _skip_to_clause_end(self, i: int) -> int:
        return self.n  # reported content ("believes that X, Y and Z") is not the subject's own doing

    def _pps(
        self,
        subjects: list[tuple[str, bool, bool]],
        verb: str,
        i: int,
        base: _Base,
        *,
        attach: bool = True,
        clauses: list[Clause] | None = None,
    ) -> int:
        count = 0
        while i < self.n and count < 3:
            low = self.low(i)
            if low in {"named", "called"} and i + 1 < self.n and _is_name(self.toks[i + 1]):
                i += 2
                while i < self.n and _is_name(self.toks[i]):
                    i += 1
                continue
            if low not in _PP_KEEP:
                break
            if (
                low == "to"
                and self.low(i + 1) in _KNOWN_VERBS
                and self.low(i + 1) not in {"school", "work", "church", "class"}
            ):
                break  # "to support those ...": a purpose clause, not a place
            if (
                self.low(i + 1).endswith("ing")
                and self.low(i + 1) not in _ING_NOUNS
                or self.low(i + 1) in _OBJ_PRONOUNS
                and not self._possessive_her(i + 1)
            ):
                if self._gerund_here(i + 1):
                    doer = self._gerund_doer(subjects, verb, low, clauses)
                    if doer:  # "finds joy in volunteering at X", "is working on opening a studio"
                        return self._gerund(doer, _prospective(base, verb, low), i + 1)
                break  # "for helping kids": a clause, not a thing (and often someone else's doing)
            np, j = self.noun_phrase(i + 1)
            if not np:
                break
            found = [np]
            while self.low(j) in {"and", ","} and self._conjunct(j + 1):
                k = j + 2 if self.low(j) == "," and self.low(j + 1) == "and" else j + 1
                more, k = self.noun_phrase(k)
                if not more:
                    break
                found.append(more)  # "with family and friends": both are company
                j = k
            items, j, doing = self._examples(found[-1][0], j, phrase=True, counted=self._counted(found[-1][1]))
            found += items  # "in inspiring places like the trails she visits"
            if attach and clauses:
                for c in clauses:
                    c.pps.extend((low, x[0], x[1]) for x in found)
            elif attach:
                for s, tp, pr in subjects:
                    self.out.append(Clause(s, tp, pr, verb, None, -1, pps=[(low, np[0], np[1])], **base))
            if doing >= 0:  # "took part in activities such as giving out food": the subject's doing
                return self._gerund(subjects, base, doing)
            owner = clauses[0].obj if low == "by" and clauses and clauses[0].obj else found[-1][0]
            i, name = self._apposition(owner, j)  # "'Dune' by Frank Herbert, a story about ...": Dune's class
            if name and attach and clauses:
                for c in clauses:  # "said goodbye to his dog, Max": to Max
                    c.pps.append((low, name[0], name[1]))
            count += 1
        return i


def read_clauses(sentence: str, ctx: Ctx) -> list[Clause]:
    """Clauses of one normalised sentence (see the module docstring); ``[]`` when none can be read."""
    return read_sentence(sentence, ctx)[0]


def read_sentence(sentence: str, ctx: Ctx) -> tuple[list[Clause], list[str]]:
    """Clauses and concept noun phrases ("pottery class", "homeless shelter") of one normalised sentence.

    Concepts are the noun phrases after a determiner, a possessive or a preposition that are not generic
    ("time", "life", "way"): entities of their own in the graph, so two memories about the same shelter meet on
    one node even when no triple links them.
    """
    if len(sentence) > 600:
        return [], []
    reader = _Reader(sentence, ctx)
    return reader.read(), reader.concepts()


# ------------------------------------------------------------------------------------------- clauses -> triples
_CHANGE_VERBS = words_of(
    "move relocate switch join start begin become adopt marry found launch open enroll enrol "
    "settle sign take get land accept"
)
_GENERIC = words_of(
    "time times way ways thing things lot lots life lives people person moment moments day days part parts kind "
    "sort type bit end rest number world idea ideas sense place places point fact facts experience experiences "
    "importance power others one ones journey feelings feeling emotions emotion reason reasons aspect aspects "
    "side process stuff something anything everything nothing someone anyone everyone others self oneself "
    "himself herself themselves ability chance opportunity opportunities conversation chat talk discussion "
    "future past present meaning value values goal goals dream dreams hope plan plans "
    "difference impact track ahead potential"
)
_DITRANSITIVE = words_of("give gift send show offer buy teach bring tell lend get make hand pass owe promise")
_FAVOURITE = words_of("favourite favorite fave fav")
_RUN_THINGS = words_of(
    "business company store shop studio bakery cafe restaurant bar team club charity nonprofit organisation "
    "organization blog channel podcast newsletter website workshop workshops class classes program programme farm "
    "vineyard firm agency clinic practice group groups campaign project projects department lab school event "
    "events drive fundraiser foundation startup salon gym daycare hotel"
)
_TRIP_NOUNS = words_of("trip trips vacation holiday journey visit tour getaway roadtrip road-trip")
_ADJ_PREPS = words_of("of for about with to in on at by")
_ING_NOUNS = words_of(
    "clothing building evening morning wedding meeting sibling ring spring thing king nothing "
    "something anything everything"
)
_ADJ_ONLY = words_of(
    "important necessary possible able proud happy sure glad lucky grateful thankful excited "
    "ready free new old good bad great better best hard easy black white red blue green alive aware awake "
    "significant special safe warm loving"
)
_VAGUE_ADJ = words_of(
    "positive negative greater great big bigger huge true real whole good better best lasting meaningful "
    "significant"
)
_OCC_SUFFIX = ("ist", "ician", "ologist", "eer", "grapher", "ator", "er", "or", "ant", "ent")


_KNOWN_VERBS = (
    VERB_LEMMAS
    | _SAY
    | NO_E_VERBS
    | words_of(
        "showcase discuss figure reset recharge express promote advise cheer combine surprise rate remain "
        "invest respect praise value admire recommend reference symbolize symbolise capture inspire motivate "
        "increase prevent tackle reduce gain boost avoid lower improve develop overcome earn collect "
        "reach achieve relax unwind destress de-stress bond spread raise honor honour experience "
        "experiment fund greet expand mentor cultivate nurture advocate"
    )
)
_KNOWN_VERBS = _KNOWN_VERBS | _PLAN_VERBS | _CATENATIVE_INNER | _CATENATIVE_KEEP
_NOUN_S = words_of("friends kids parents talents works plays news series species means clothes")
_ABOUT_THE_THING = words_of(
    "symbolize symbolise represent showcase feature include indicate depict capture mean reflect show "
    "contain involve portray describe cause result"
)
_NOT_A_CLASS = words_of(
    "member part fan lover supporter kind type sort bit lot piece way source reminder example sign symbol "
    "testament reflection result mix combination matter reason"
)
_LIFE_STAGES = words_of("boy girl kid child teen teenager baby toddler")
_PEOPLE = words_of(
    "people person persons someone somebody figure figures mentor mentors folks guy guys individuals man men "
    "woman women artist artists player players"
)
_HOLD_ATTITUDE = words_of("express show have feel share voice convey find develop discover gain extend offer")
_ATTITUDES: dict[str, tuple[str, frozenset[str]]] = {
    **{w: ("grateful", words_of("for to")) for w in ("gratitude", "thanks", "thankfulness")},
    **{w: ("likes", words_of("for in of")) for w in ("love", "passion", "fondness", "admiration", "enthusiasm")},
    **{w: ("likes", words_of("for of")) for w in ("appreciation", "affection", "liking")},
    "interest": ("likes", words_of("in")),
    "support": ("helps", words_of("for")),
    "pride": ("proud", words_of("in of")),
    "excitement": ("excited", words_of("about for over")),
    "concern": ("concerned", words_of("about for over")),
    "worry": ("worried", words_of("about over")),
    "sadness": ("sad", words_of("about over")),
    "curiosity": ("curious", words_of("about")),
    "fear": ("fears", words_of("of")),
    "respect": ("respects", words_of("for")),
}
_ABSTRACT_OF = words_of("importance role lack state power value meaning nature significance impact idea")
_PP_IDIOMS = words_of(
    "hurry touch mind common general particular advance person public private detail total return addition "
    "charge control need tears awe shape line"
)
_ABSTRACT_BUILT = words_of(
    "bond relationship connection trust confidence career family brand reputation base community network habit "
    "skill resilience friendship strength momentum audience following presence life future"
)
_CONTESTS = words_of(
    "game match tournament competition contest race championship election battle title league cup final"
)
_HAD_EVENTS = words_of(
    "blast fun dinner lunch breakfast brunch meal chat talk conversation discussion time day night evening "
    "weekend moment moments experience picnic barbecue bbq party"
)
_HOMES = words_of("apartment flat house home room studio place condo loft cottage villa")
_STATE_VERBS = words_of("find consider stay remain get feel seem keep become look sound")
_CAUSATIVE = words_of("make let help have watch see")
_BARE_ONLY = words_of("happen work come go")


def _owned_like(first: str, more: tuple[str, int]) -> tuple[str, int]:
    """A bare conjunct shares the first object's owner: "Tim's support and encouragement" -> Tim's encouragement."""
    owner, sep, _ = first.partition("'s ")
    if sep and owner[:1].isupper() and "'" not in more[0] and more[0][:1].islower():
        return f"{owner}'s {more[0]}", more[1]
    return more


_GERUND_PREPS = words_of("in by on about of into to")
_PROSPECTIVE = words_of(
    "work think dream plan look aim prepare interested excited eager keen count consider save"
)


def _prospective(base: _Base, head: str, prep: str) -> _Base:
    """The time of a gerund after a preposition: not yet done after a head that looks ahead ("is working on
    opening a studio", "is thinking of moving", "is interested in trying X"), else the head's own time."""
    if head.partition("_")[0] in _PROSPECTIVE and prep in {"on", "of", "about", "in", "towards", "toward"}:
        return {"negated": base["negated"], "aspect": "future"}
    return base


_OUTINGS = words_of("hike walk cruise date adventure retreat run ride picnic outing excursion expedition camping")
_NOT_PLACED = frozenset({"teaches", "created", "helps", "likes", "dislikes"})
_PLACE_PREPS = words_of("at in on near during to into around")
_COMPANY = words_of(
    "friend friends family team teammates classmates colleagues coworkers group kids children people crew "
    "neighbors neighbours roommates mentee mentees students"
)


def _companion(who: str) -> bool:
    """A person or a group of people ("her kids", "Maria", "his teammates"): "with" them is company."""
    words = who.split()
    if not words:
        return False
    last = words[-1].lower()
    return (
        last in _COMPANY
        or singular(last) in RELATIONS
        or last in RELATIONS
        or len(words) <= 2
        and all(_NAMEY.match(w) for w in words)
        and not who.isupper()
    )


def _is_time(obj: str, start: int, ctx: Ctx) -> bool:
    words = obj.lower().split()
    if not words or words[-1] in _TIME_WORDS or words[0] in _TIME_WORDS and len(words) <= 2:
        return True
    # a phrase that is mostly a date ("last Friday", "March 3") is a time; "a 2015 Honda Civic" is a thing
    return any(
        (d.start <= start < d.end or start <= d.start < start + len(obj))
        and 2 * (min(d.end, start + len(obj)) - max(d.start, start)) >= len(obj)
        for d in ctx.dates
    )


def _clean(obj: str | None, start: int, ctx: Ctx) -> str | None:
    if not obj:
        return None
    for d in ctx.dates:
        if start < d.start < start + len(obj):
            obj = obj[: d.start - start].strip()
    obj = obj.strip(" ,.;:'\"")
    if obj.lower().endswith(" of"):
        obj = obj[:-3]  # "talents of", "a pair of": the phrase was cut before its head
    if obj.endswith("'s"):
        obj = obj[:-2]
    words = obj.split()
    if not words or len(words) > 6:
        return None
    if len(words) == 1 and (words[0].lower() in _BAD_OBJ or words[0].lower() in _GENERIC):
        return None
    if len(words) == 2 and words[1].lower() in _GENERIC and words[0].lower() in _VAGUE_ADJ:
        return None  # "a positive impact", "her true self": a vague value, not a thing
    low = [w.lower() for w in words]
    if "of" in low[1:3] and not _ABSTRACT_OF.isdisjoint(low[: low.index("of", 1)]):
        return None  # "the importance of education", "the crucial role of X": about X, not X
    if all(w.lower() in COMMON_WORDS or w.lower() in _BAD_OBJ for w in words):
        return None
    if _is_time(obj, start, ctx):
        return None
    if len(words) == 1 and (
        words[0].lower() in POSITIVE_FIND
        or words[0].lower() in NEGATIVE_FIND
        or words[0].lower() in _ADJ_ONLY
    ):
        return None
    return obj


def _occupation(what: str) -> bool:
    head = what.lower().split()[-1]
    return head in OCCUPATIONS or (
        head.endswith(("ist", "ician", "ologist", "eer", "grapher")) and len(head) > 5
    )


def clause_triples(clauses: list[Clause], ctx: Ctx, mapper: PredicateMapper | None = None) -> list[RawTriple]:
    """Map clauses to triples through the verb lexicon; unknown verbs go to ``mapper`` (embedding similarity)
    when one is given, else keep their lemma as an open predicate."""
    out: list[RawTriple] = []

    def open_predicate(verb: str, prep: str | None) -> tuple[str, str, str]:
        phrase = f"{verb}_{prep}" if prep else verb
        if mapper is not None:
            found = mapper.map(phrase.replace("_", " "))
            if found:
                return found, "fact", "semantic"
        return phrase, "fact", "clause"

    def emit(
        c: Clause,
        pred: str | None,
        obj: str | None,
        kind: str,
        weight: float,
        start: int,
        source: str = "clause",
    ) -> None:
        value = _clean(obj, start, ctx)
        if not pred or not value:
            return
        if pred == "has" and " " not in value and value.islower() and value.endswith(("ed", "ing")):
            return  # "keep him motivated", "keep grinding": not a possession
        if value.lower() in _PP_IDIOMS:
            return  # "in a hurry", "in common", "in person": a manner, not a thing
        if pred == "practises" and value.lower().split()[-1] in _GENERIC:
            return  # "pursue his business dreams": not an activity
        if pred == "has" and value.lower().split()[-1] in _HAD_EVENTS:
            return  # "had a blast", "having dinner with friends": an occasion, not a possession
        if (
            c.verb in _STATE_VERBS
            and " " not in value
            and value.islower()
            and (_adjective(value) or value.endswith("ed") or value in IRREGULAR)
        ):
            return  # "finds it gorgeous", "stays positive": a quality, not a thing (the aspect rules say feel)
        if (pred == "helps" or c.verb in _CAUSATIVE) and (
            value.lower() in _KNOWN_VERBS or value.lower() in _BARE_ONLY
        ):
            return  # "to help make a difference", "make it happen": the verb after is no object
        canon = canonical_predicate(pred)
        if not canon:
            return
        if canon == "lives_in" and c.subject[:1].islower() and "'" not in c.subject and c.subject != ctx.me:
            canon, kind = "located_in", "knowledge"  # "the office moved to the fourth floor": a thing's place
        if canon == "went_to" and c.aspect in {"ongoing", "habitual_past"}:
            canon, kind = "goes_to", "routine"  # "the kids go to X" is a routine, "went to X" an event
        aspect = c.aspect
        if aspect == "past_event" and kind == "fact" and c.verb.split("_")[0] in _CHANGE_VERBS:
            aspect = "ongoing"  # "moved to Austin", "joined a club": the resulting state holds now
        past = aspect in {"ended", "habitual_past"}
        polarity = not c.negated
        out.append(
            RawTriple(
                c.subject,
                canon,
                value,
                polarity,
                weight,
                kind,
                c.third_party,
                past,
                c.pronoun,
                aspect=aspect,
                source=source,
                verb=c.verb,
                span_start=start,
            )
        )

    for c in clauses:
        if c.copula:
            what = c.obj or ""
            if c.subject == ctx.me and not _occupation(what) or what.lower().split()[-1] in RELATIONS:
                continue  # "Sarah is my sister": the relation rules say it better
            owner, _, thing = c.subject.partition("'s ")
            if thing.lower() in _FAVOURITE and owner[:1].isupper():
                # "Maria's favorite is the banana split sundae": what Maria likes
                fan = Clause(owner, c.third_party, c.pronoun, "like", aspect=c.aspect, negated=c.negated)
                emit(fan, "likes", what, "preference", 0.8, c.obj_start)
                continue
            kind_of = what.lower().partition(" of ")[0].split()
            if not _NOT_A_CLASS.isdisjoint(kind_of) or (
                not _occupation(what) and (c.aspect == "future" or kind_of[-1] in _LIFE_STAGES)
            ):
                continue  # "a member of X", "a fan of X" (the rules read those), "to be a leader", "was a boy"
            if _occupation(what):
                emit(c, "job_title", what, "fact", 0.85, c.obj_start)
            elif c.third_party:
                emit(c, "is_a", what, "knowledge", 0.7, c.obj_start)
            for prep, pobj, pstart in c.pps:
                if prep in {"at", "for", "with"} and _occupation(what):
                    emit(c, "works_at", pobj, "fact", 0.8, pstart)
            continue
        if c.passive:
            pred, kind = _PASSIVE[c.passive]
            if c.passive == "named":
                continue
            emit(c, pred, c.obj, kind, 0.85, c.obj_start)
            continue
        verb = c.verb
        lem, _, particle = verb.partition("_")
        hit = map_verb(lem, None, particle or None)
        head = (c.obj or "").lower().split()[-1:] or [""]
        sense = (c.first or c.obj or "").lower().split()[-1:] or [""]  # a conjunct keeps the first's verb sense
        if lem in {"know", "learn"} and head[0] in DEMONYMS:
            hit = ("speaks", "fact") if lem == "know" else hit  # "knows a bit of German": a language
        if lem == "make" and head[0] in _MAKE_NOT_CREATE:
            hit = None  # "made friends", "made a decision": not a creation
        if (
            lem == "make"
            and c.obj
            and " " in c.obj
            and (_adjective(head[0]) or head[0] in _ADJ_ONLY | _MAKE_ADJ)
        ):
            continue  # "make his business successful", "make education better": a change of state, no object
        if lem == "try" and hit and ("'s" in (c.first or c.obj or "") or singular(sense[0]) in _TASTED):
            hit = None  # "try Nate's desserts", "tried a new recipe": tasting, not taking up a practice
        if not c.obj and lem == "go" and c.pps and c.pps[0][0] == "on":
            trip = c.pps[0][1].lower().split()[-1]
            if trip in _TRIP_NOUNS or trip in _OUTINGS:  # "went on a road trip with her family"
                emit(c, "went_on", c.pps[0][1], "event", 0.8, c.pps[0][2])
        if c.obj and lem in {"take", "bring"} and _companion(c.obj) and not c.negated:
            for prep, pobj, pstart in c.pps[:1]:
                if prep == "to":  # "took her kids to a pottery workshop": she went there too
                    emit(c, "went_to", pobj, "event", 0.75, pstart)
        if c.obj and head[0] in _TRIP_NOUNS and lem in LIGHT_VERBS | {"plan", "book", "go"}:
            for prep, pobj, pstart in c.pps:
                if prep in {"to", "in"}:  # "took a trip to Chicago"
                    emit(c, "visited", pobj, "event", 0.85, pstart)
            continue
        if c.obj and lem == "have" and head[0] in _HAD_EVENTS and not c.negated:
            for prep, pobj, pstart in c.pps[:2]:
                if prep in {"at", "in"} and pobj.lower().split()[-1] not in _GENERIC:
                    # "had a great time at the pride event", "had a blast at a concert": they were there
                    emit(c, "went_to", pobj, "event", 0.75, pstart)
                elif prep == "with" and _companion(pobj):
                    emit(c, "met", pobj, "event", 0.75, pstart)  # "had a picnic with his wife and kids"
            continue
        attitude = _ATTITUDES.get(head[0]) if c.obj and lem in _HOLD_ATTITUDE else None
        if attitude and c.pps and c.pps[0][0] in attitude[1]:
            # "expressed gratitude for Gina's support", "showed interest in X", "has a passion for Y": the
            # attitude towards the phrase's object is the fact (the thing expressed stays a fact of its own)
            prep, pobj, pstart = c.pps[0]
            feeling = attitude[0]
            named = feeling in {"likes", "helps", "fears", "respects"}
            emit(c, feeling if named else f"{feeling}_{prep}", pobj, "preference", 0.75, pstart)
        if c.obj and head[0] in _JOB_NOUNS:
            org = next(((p, o, st) for p, o, st in c.pps if p in {"at", "with", "for"}), None)
            if org:  # "started a new job at X", "lost her job at X", "quit my job at the bank"
                quit_ = lem in _JOB_END
                c2 = Clause(
                    c.subject,
                    c.third_party,
                    c.pronoun,
                    c.verb,
                    negated=c.negated or quit_,
                    aspect="ended" if quit_ else ("ongoing" if c.aspect == "past_event" else c.aspect),
                )
                emit(c2, "works_at", org[1], "fact", 0.85, org[2])
                continue
        if c.obj:
            if c.complement:
                if c.complement in POSITIVE_FIND:
                    emit(c, "likes", c.obj, "preference", 0.8, c.obj_start)
                elif c.complement in NEGATIVE_FIND:
                    emit(c, f"finds_{c.complement}", c.obj, "preference", 0.7, c.obj_start)
            elif hit:
                pred, kind = hit
                if pred == "visited" and lem in {"explore", "tour"} and not c.obj[:1].isupper():
                    pred, kind = (
                        lem,
                        "fact",
                    )  # "explores themes of loss", "exploring opportunities": not a trip
                if pred == "has" and (singular(c.obj.lower().split()[-1]) in PETS or singular(sense[0]) in PETS):
                    pred = "has_pet"
                elif lem == "win" and singular(sense[0]) in _CONTESTS:
                    pred, kind = "win", "event"  # "won the tournament": a victory, not a prize received
                elif lem == "raise" and head[0] not in RELATIONS and singular(head[0]) not in RELATIONS:
                    pred, kind = "raise", "fact"  # "raised donations", "raised $500": not a child
                elif lem == "watch" and singular(head[0]) not in _MEDIA:
                    pred, kind = (
                        "watch",
                        "event" if c.aspect == "past_event" else "fact",
                    )  # "the meteor shower"
                if pred == "created" and lem in {"build", "develop"} and singular(head[0]) in _ABSTRACT_BUILT:
                    pred, kind = lem, "fact"  # "building a stronger bond", "develop her skills": not a made thing
                if lem == "run" and head[0] not in _RUN_THINGS:
                    pred, kind = "practises", "preference"  # "runs 10 km", "ran a marathon": the sport
                emit(c, pred, c.obj, kind, 0.85, c.obj_start)
            elif (
                lem not in LIGHT_VERBS
                or particle
                or lem in {"make", "take", "keep", "find", "give", "get", "see", "try"}
            ):
                pred, _, source = open_predicate(verb, None)
                emit(
                    c, pred, c.obj, "event" if c.aspect == "past_event" else "fact", 0.7, c.obj_start, source
                )
        words = (c.obj or "").split()
        activity = words[0].lower() if words else ""
        if lem == "practise" and activity.endswith("ing") and len(words) == 1:
            verb = lem = lemma(activity)  # "went camping with her family in the mountains": camp_with, camp_in
            hit = None
        elif activity.endswith("ing") and activity not in _ING_NOUNS:
            continue
        if c.obj and lem in LIGHT_VERBS and _clean(c.obj, c.obj_start, ctx) is None:
            continue  # "making a positive impact in his community": the phrase belongs to the vague object
        if lem in _SAY_THING and lem in _SAY and lem != "share":
            continue  # "expressed pride in the courage to transition": the phrases belong to the thing said  # "loves traveling to new places": the places belong to the travelling, not the loving
        for k, (prep, pobj, pstart) in enumerate(c.pps):
            if prep == "by":
                if c.obj and c.obj[:1].isupper() and pobj[:1].isupper() and k == 0:
                    author = Clause(pobj, True, False, "write", aspect="ongoing")
                    emit(author, "author_of", c.obj, "knowledge", 0.8, c.obj_start)  # 'Dune' by Frank Herbert
                break
            company = prep == "with" and _companion(_clean(pobj, pstart, ctx) or "")
            if (
                k > 0
                and prep not in {"to", "from"}
                and not (k == 1 and c.pps[0][0] == "from")
                and prep != c.pps[k - 1][0]  # "with family and friends": a conjunct, same attachment
                and not company  # "went to the beach in June with her kids": whom with is the verb's
                and not (c.pps[k - 1][0] == "with" and _companion(c.pps[k - 1][1]) and prep in _PLACE_PREPS)
                or k > 0
                and prep in {"from", "of"}
                and c.pps[k - 1][0] == "with"
                and _companion(c.pps[k - 1][1])  # "with friends from church": the friends are from there
            ):
                break  # "a novel about his childhood in Glasgow": a later phrase belongs to the noun before it
            phit = VERB_PREDICATES.get(f"{verb}_{prep}") or (
                None if c.obj or k or prep in {"for", "with", "about"} or hit and hit[0] in _NOT_PLACED else hit
            )  # "made something for Joanna": not a thing made; "teaching at a school": the school is not taught
            if phit and phit[0] == "lives_in" and c.obj and singular(head[0]) not in _HOMES:
                phit = None  # "rented a car in Porto": the car is rented there, nobody lives there
            person = _clean(pobj, pstart, ctx) or ""
            if phit and prep == "with" and " " not in person and _NAMEY.match(person) and not person.isupper():
                phit = None  # "volunteered with Maria": a companion, not the organisation
            if phit and phit != hit or phit and not c.obj:
                pred, kind = phit
                emit(c, pred, pobj, kind, 0.85, pstart)
            elif lem == "switch" and prep == "from":
                continue  # the corrections pass retracts the old value
            elif (
                lem in LIGHT_VERBS
                and lem not in {"find", "make"}
                and not (prep == "to" and pobj[:1].isupper())
            ):
                continue  # "had a discussion about X": the light verb says nothing about X
            elif prep in {"in", "at", "to", "from", "with", "for", "on", "about", "into", "near", "as"}:
                pred, _, source = open_predicate(verb, prep)
                emit(c, pred, pobj, "event" if c.aspect == "past_event" else "fact", 0.65, pstart, source)
    return out
