"""Is-a knowledge from WordNet 3.0 nouns: "a sirloin is a kind of meat", "a dalmatian is a dog", "an oncologist is a
doctor".

Hand lexicons of category members (``constraint_vocab``, ``topics``) cover the words their authors thought of; a
user says "merlot", "scampi", "glider", "stepdaughter", "tinnitus". WordNet's noun hierarchy (82k synsets, 118k
lemmas) knows those, so a category named by a few *synsets* (``meat.n.01``, ``aircraft.n.01``, ``ill_health.n.01``)
reaches every kind of it.

Three things make it safe to read free text with:

* **Lemmatisation** (:meth:`WordNet.lemmas`): WordNet's morphy - the irregular plurals of ``noun.exc`` ("geese"),
  then the detachment rules ("-ies" -> "-y", "-ches" -> "-ch", "-men" -> "-man", "-s"), each candidate kept only if
  it is a lemma; several words are one lemma when WordNet has it ("ice cream", "root beer", "hay fever").
* **A polysemy guard** (:meth:`WordNet.reading`): a word's senses come in WordNet's order, most frequent first, with
  the tag counts of the sense-tagged corpora. A match through a sense is *dominant* when that sense carries most of the
  word's weight, *plausible* when it carries a fair share, or when it belongs to the lexicographer file the caller
  expects and the word's other senses are what that file's sense stands for (``noun.food`` for a diet: "lamb" is
  first a young sheep, but in "we had lamb" it is the meat), and is not taken otherwise ("port" the wine is a rare
  reading). Callers weigh the two differently.
* **A part-of-speech guard**: a word far more often a verb or an adjective than a noun ("fly", "run", "smoke",
  "therapeutic") is not read as a noun on its own.

Everything is a dict/array lookup on a table loaded once, lazily (``data/wordnet_isa.npz``, ~1.5 MB, no pickle; built
by ``scripts/build_wordnet_isa.py`` from the WordNet 3.0 files, licence in ``data/WORDNET_LICENSE``), and memoised
per word. English only: WordNet has no other language here.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from neusym.language import regex as rx

__all__ = ["DATA", "Kind", "Phrase", "Reading", "WordNet", "categories", "can_name", "find_kinds", "is_a", "lexname", "names_in", "phrases", "senses_of", "wordnet"]

DATA = Path(__file__).resolve().parent / "data" / "wordnet_isa.npz"
"""The table (see the module docstring); ``WORDNET_LICENSE`` beside it."""

# morphy's detachment rules for nouns and verbs (WordNet's own, in its order)
_NOUN_RULES = (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
               ("ies", "y"))
_VERB_RULES = (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", ""))

DOMINANT = 0.5
"""Share of a word's sense weight the matching reading needs to be dominant."""
PLAUSIBLE = 0.2
"""Share it needs to count at all ("port" the wine: 0.15; "java" the coffee: 0.31, plausible, not dominant)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _strings(blob: np.ndarray) -> list[str]:
    return bytes(blob).decode("utf-8").split("\n") if len(blob) else []


class WordNet:
    """The noun hierarchy as arrays; every query is memoised per word or synset."""

    def __init__(self, path: Path = DATA) -> None:
        with np.load(path, allow_pickle=False) as z:
            self.meta: dict[str, object] = json.loads(bytes(z["meta"]).decode())
            self._lexnames = _strings(z["lexnames"])
            self._lemmas = _strings(z["lemmas"])
            self._sense_ptr = z["sense_ptr"]
            self._senses = z["senses"]
            self._sense_count = z["sense_count"].astype(np.int32)
            self._synset_lexname = z["synset_lexname"]
            self._synset_head = z["synset_head"]
            self._synset_head_sense = z["synset_head_sense"]
            self._hyper_ptr = z["hyper_ptr"]
            self._hypers = z["hypers"]
            self._size = z["synset_size"]
            self._exc: dict[str, list[str]] = {}
            for line in _strings(z["noun_exc"]):
                form, base = line.split("\t")
                self._exc.setdefault(form, []).append(base)
            self._verb_exc: dict[str, list[str]] = {}
            for line in _strings(z["verb_exc"]):
                form, base = line.split("\t")
                self._verb_exc.setdefault(form, []).append(base)
            self._verbs = dict(zip(_strings(z["verbs"]), z["verb_count"].astype(int).tolist(), strict=True))
            self._modifiers: dict[str, int] = dict(zip(_strings(z["modifiers"]), z["modifier_count"].astype(int).tolist(),
                                       strict=True))
        self._index = {lemma: i for i, lemma in enumerate(self._lemmas)}
        # first words of multi-word lemmas ("ice" of "ice_cream"): a phrase starting otherwise is no lemma
        self.first_words = frozenset(lemma.split("_", 1)[0] for lemma in self._lemmas if "_" in lemma)
        self._ancestors: dict[int, dict[int, int]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------------- words and senses
    def has(self, lemma: str) -> bool:
        return lemma in self._index

    def lemmas(self, word: str) -> list[str]:
        """The noun lemmas ``word`` can be a form of (morphy): itself, its irregular base, its detached forms."""
        w = word.lower().replace(" ", "_")
        out: list[str] = []
        if w in self._index:
            out.append(w)
        for base in self._exc.get(w, ()):
            if base in self._index and base not in out:
                out.append(base)
        head, _, last = w.rpartition("_")  # "root beers": inflect the last word of a phrase
        for suffix, repl in _NOUN_RULES:
            if last.endswith(suffix) and len(last) > len(suffix) + 1:
                base = (head + "_" if head else "") + last[: len(last) - len(suffix)] + repl
                if base in self._index and base not in out:
                    out.append(base)
        if last.endswith("ss") and out and out[0] != w:  # "glass" is not the plural of "glas"
            out = [x for x in out if x == w]
        return out

    def senses(self, lemma: str) -> list[tuple[int, int]]:
        """(synset, tag count) of ``lemma``'s senses in WordNet's order (most frequent first)."""
        i = self._index.get(lemma)
        if i is None:
            return []
        a, b = int(self._sense_ptr[i]), int(self._sense_ptr[i + 1])
        return list(zip(self._senses[a:b].tolist(), self._sense_count[a:b].tolist(), strict=True))

    def verb_weight(self, word: str) -> int:
        """How often ``word`` (any inflection) was tagged as a verb: the part-of-speech guard's evidence."""
        w = word.lower()
        bases = [w, *self._verb_exc.get(w, ())]
        bases += [w[: len(w) - len(s)] + r for s, r in _VERB_RULES if w.endswith(s) and len(w) > len(s) + 1]
        return max((self._verbs.get(b, 0) for b in bases), default=0)

    def modifier_weight(self, word: str) -> int:
        """How often ``word`` itself was tagged as an adjective or adverb ("therapeutic", "sweet", "fast")."""
        return int(self._modifiers.get(word.lower(), 0))

    def noun_weight(self, word: str) -> int:
        return sum(c for lemma in self.lemmas(word) for _, c in self.senses(lemma))

    # --------------------------------------------------------------------------------------------------- synsets
    def name(self, synset: int) -> str:
        """The conventional name: first lemma, part of speech, sense number ("meat.n.01")."""
        return f"{self._lemmas[int(self._synset_head[synset])]}.n.{int(self._synset_head_sense[synset]):02d}"

    def synset(self, name: str) -> int:
        """The synset called ``name`` ("meat.n.01": the first sense of the lemma "meat"); KeyError if unknown."""
        lemma, pos, number = name.rsplit(".", 2)
        senses = self.senses(lemma) if pos == "n" else []
        k = int(number) - 1
        if not 0 <= k < len(senses):
            raise KeyError(name)
        return senses[k][0]

    def lexname(self, synset: int) -> str:
        return self._lexnames[int(self._synset_lexname[synset])]

    def size(self, synset: int) -> int:
        """How many synsets lie below ``synset``: 0 for "merlot", tens of thousands for "entity"."""
        return int(self._size[synset])

    def hypernyms(self, synset: int) -> list[int]:
        a, b = int(self._hyper_ptr[synset]), int(self._hyper_ptr[synset + 1])
        return [int(h) for h in self._hypers[a:b]]

    def ancestors(self, synset: int) -> dict[int, int]:
        """Every hypernym (and instance hypernym) of ``synset`` with its smallest depth; itself at depth 0."""
        got = self._ancestors.get(synset)
        if got is not None:
            return got
        out = {synset: 0}
        frontier = [synset]
        depth = 0
        while frontier:
            depth += 1
            nxt = []
            for s in frontier:
                for h in self.hypernyms(s):
                    if h not in out:
                        out[h] = depth
                        nxt.append(h)
            frontier = nxt
        self._ancestors[synset] = out
        return out

    # ---------------------------------------------------------------------------------------------------- reading
    def reading(self, word: str, targets: frozenset[int], lexnames: frozenset[str] = frozenset()) -> Reading | None:
        """Whether ``word`` names a kind of one of ``targets`` (synset ids), and how surely (see :class:`Reading`).

        A sense's weight is its tag count plus a prior that falls with its rank (WordNet orders senses by
        frequency, and most senses were never tagged); the shares are over every sense of every lemma the word can
        be a form of ("shingles" the illness and "shingle" the roof tile).
        """
        return _reading(self, word, targets, lexnames)


@dataclass(frozen=True)
class Reading:
    """How a word reaches a target synset: the sense, the target, the hypernym steps, and how surely.

    ``share`` is the matching senses' part of the word's sense weight; ``dominant`` means ``share`` >= :data:`DOMINANT`
    ("chicken" is first the meat; "pheasant" first the bird, its meat only plausible); ``unambiguous`` that every
    sense of the word reaches a target ("tinnitus"), whatever the counts.
    """

    lemma: str
    synset: str
    target: str
    depth: int
    share: float
    lexname: str

    @property
    def dominant(self) -> bool:
        return self.share >= DOMINANT

    @property
    def unambiguous(self) -> bool:
        return self.share >= 0.999


_KIN: dict[str, frozenset[str]] = {"noun.food": frozenset({"noun.animal", "noun.plant"})}
"""Lexicographer files whose senses a word's food sense stands for ("lamb", "pheasant", "merlot", "chestnut": first an
animal or a plant, eaten or drunk as the food of the same name)."""


def _weights(senses: Sequence[tuple[int, int]]) -> list[float]:
    return [c + 1.0 / (rank + 1) for rank, (_, c) in enumerate(senses)]


def _reading(wn: WordNet, word: str, targets: frozenset[int], lexnames: frozenset[str],
             names: dict[int, str] | None = None) -> Reading | None:
    rows: list[tuple[str, int, float, str, tuple[int, int] | None]] = []  # lemma, synset, weight, lexname, hit
    for lemma in wn.lemmas(word):
        senses = wn.senses(lemma)
        for (syn, _), w in zip(senses, _weights(senses), strict=True):
            anc = wn.ancestors(syn)
            hits = [(anc[t], t) for t in targets if t in anc]
            rows.append((lemma, syn, w, wn.lexname(syn), min(hits) if hits else None))
    matches = [r for r in rows if r[4] is not None]
    if not matches:
        return None
    total = sum(r[2] for r in rows)
    share = sum(r[2] for r in matches) / total
    expected = [r for r in matches if r[3] in lexnames]
    support = share
    if expected:  # the senses the expected file's sense stands for make it plausible, not dominant
        group = set(lexnames).union(*(_KIN.get(x, frozenset()) for x in lexnames))
        support = sum(r[2] for r in rows if r[4] is not None or r[3] in group) / total
    pick = expected or matches
    if support < PLAUSIBLE:
        return None
    names = names or {}
    lemma, syn, _, lex, hit = max(pick, key=lambda r: (r[2], -(r[4] or (0, 0))[0]))
    assert hit is not None
    return Reading(lemma, wn.name(syn), names.get(hit[1]) or wn.name(hit[1]), hit[0], share, lex)


_INSTANCE: WordNet | None = None
_LOAD = threading.Lock()


def wordnet() -> WordNet:
    """The table, loaded on first use and shared (thread-safe)."""
    global _INSTANCE
    if _INSTANCE is None:
        with _LOAD:
            if _INSTANCE is None:
                _INSTANCE = WordNet()
    return _INSTANCE


@lru_cache(maxsize=256)
def synset_ids(names: tuple[str, ...]) -> frozenset[int]:
    """The synset ids of ``names`` ("meat.n.01", ...); an unknown name is an error (a typo in a category table)."""
    wn = wordnet()
    return frozenset(wn.synset(n) for n in names)


@lru_cache(maxsize=256)
def _named(names: tuple[str, ...]) -> dict[int, str]:
    wn = wordnet()
    return {wn.synset(n): n for n in names}


@lru_cache(maxsize=65536)
def _cached_reading(word: str, names: tuple[str, ...], lexnames: frozenset[str]) -> Reading | None:
    named = _named(names)
    return _reading(wordnet(), word, frozenset(named), lexnames, named)


def is_a(word: str, kinds: Iterable[str], *, lexnames: Iterable[str] = ()) -> Reading | None:
    """Whether ``word`` (a word or phrase, any inflection) names a kind of one of the synsets ``kinds`` ("meat.n.01")
    under the polysemy guard; None when not, or when only a rare sense does."""
    return _cached_reading(word.strip().lower().replace(" ", "_"), tuple(sorted(kinds)), frozenset(lexnames))


def lexname(word: str) -> str | None:
    """The lexicographer file of ``word``'s first sense ("noun.food" for "steak"), None for an unknown word."""
    wn = wordnet()
    for lemma in wn.lemmas(word.strip().lower().replace(" ", "_")):
        senses = wn.senses(lemma)
        if senses:
            return wn.lexname(senses[0][0])
    return None


def categories(word: str, *, senses: int = 1) -> list[str]:
    """The hypernyms of ``word``'s first ``senses`` senses, nearest first ("merlot" -> red_wine.n.01, wine.n.01,
    alcohol.n.01, beverage.n.01, ...)."""
    wn = wordnet()
    depth: dict[int, int] = {}
    for lemma in wn.lemmas(word.strip().lower().replace(" ", "_"))[:1]:
        for syn, _ in wn.senses(lemma)[:senses]:
            for s, d in wn.ancestors(syn).items():
                if d and d < depth.get(s, 10**6):
                    depth[s] = d
    return [wn.name(s) for s in sorted(depth, key=lambda s: (depth[s], s))]


# ------------------------------------------------------------------------------------------------- reading text
@dataclass(frozen=True)
class Kind:
    """A phrase of a text that names a kind of a target: "pulled pork" (tokens 3-4) is a kind of pork.n.01."""

    phrase: str
    start: int
    end: int
    reading: Reading

    @property
    def why(self) -> str:
        r = self.reading
        target = r.target.split(".")[0].replace("_", " ")
        return f"{self.phrase!r} is a kind of {target}" if r.depth else f"{self.phrase!r} names {target}"


_WORD = rx.compile(r"[A-Za-z][A-Za-z'-]*")
_SKIP = _words("""a an the and or but of to in on at for with from by as is are was were be been being am i you he
she it we they me him her us them my your his its our their this that these those there here not no so very too also
just really what which who whom whose when where why how all any some each every more most other such only own same
than then now up down out off over under again once do does did done have has had having will would shall should can
could may might must one two three four five six seven eight nine ten first last next new old good great big little
lot lots bit way thing things stuff time day days week weeks year years today tonight yesterday tomorrow morning
evening night afternoon weekend yeah yes ok okay oh hi hey well like get got go went gone going make made take took
see saw say said back still even ever never always much many""")
"""Function words and everyday words too general to name a kind of anything ("time", "day", "thing")."""


def names_in(text: str) -> set[str]:
    """The lower-cased words ``text`` capitalises in mid-sentence that can be names ("in Turkey" -> {"turkey"})."""
    return {w.lower() for w, capital in tokens(text) if capital and can_name(w.lower())}


_SENTENCE_END = frozenset('.!?:;"(\n')


def tokens(text: str) -> list[tuple[str, bool]]:
    """The words of ``text`` with whether each is capitalised in mid-sentence (a name: "Turkey", "Python")."""
    out: list[tuple[str, bool]] = []
    last = 0
    start = True  # at the start of a sentence
    for m in _WORD.finditer(text):
        gap = text[last:m.start()].strip(" \t")
        if gap:
            start = gap[-1] in _SENTENCE_END
        w = m.group(0).strip("'-")
        out.append((w, w[:1].isupper() and not start and w != "I"))
        start = False
        last = m.end()
    return out


@dataclass(frozen=True)
class Phrase:
    """A noun phrase of a text WordNet knows: token span, lemma, words as written, and the two guards' verdicts."""

    start: int
    end: int
    lemma: str  # words joined by "_", lower case
    text: str  # as written
    capital: bool  # capitalised in mid-sentence
    name: bool  # ... and WordNet knows it as a place, a person or a group
    verb: bool  # a single word far more often a verb or an adjective


@lru_cache(maxsize=4096)
def phrases(text: str, max_words: int = 3) -> tuple[Phrase, ...]:
    """The noun phrases WordNet knows in ``text``, longest first, not overlapping: the same for every category a text
    is compared with, so computed once per text."""
    toks = tokens(text)
    low = [w.lower() for w, _ in toks]
    first = wordnet().first_words
    out: list[Phrase] = []
    taken = [False] * len(toks)
    for n in range(min(max_words, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if n > 1 and low[i] not in first or low[i] in _SKIP or low[i + n - 1] in _SKIP \
                    or (n == 1 and len(low[i]) < 3) or any(taken[i:i + n]):
                continue
            phrase = "_".join(low[i:i + n])
            if not _known(phrase):
                continue
            taken[i:i + n] = [True] * n
            capital = any(toks[j][1] for j in range(i, i + n))
            noun_slot = i > 0 and low[i - 1] in _DETERMINERS  # "a cold", "the fly": a noun whatever it mostly is
            out.append(Phrase(i, i + n, phrase, " ".join(w for w, _ in toks[i:i + n]), capital,
                              capital and can_name(phrase), n == 1 and not noun_slot and _verb_like_word(phrase)))
    out.sort(key=lambda p: p.start)
    return tuple(out)


def find_kinds(text: str, kinds: Iterable[str], *, lexnames: Iterable[str] = (), max_words: int = 3) -> list[Kind]:
    """Every phrase of ``text`` (up to ``max_words`` words) that names a kind of one of ``kinds``, in text order.

    Longest lemma first, and a phrase WordNet knows takes its words whether or not it matches ("hot dog" is no dog,
    "rice cake" no rice). A capitalised word in mid-sentence is a name ("two weeks in Turkey", "his Python project",
    "her puppy Coco") unless every sense of it is of the lexicographer files expected ("a glass of Merlot" for a
    diet); a single word far more often a verb or an adjective than a noun ("fly", "therapeutic") is not read as a
    noun, except after a determiner ("a cold")."""
    names_t = tuple(sorted(kinds))
    lex = frozenset(lexnames)
    out: list[Kind] = []
    for p in phrases(text, max_words):
        if p.name or p.verb or (p.capital and not _common_noun(p.lemma, lex)):
            continue
        r = _cached_reading(p.lemma, names_t, lex)
        if r is not None:
            out.append(Kind(p.text, p.start, p.end, r))
    return out


GENERAL = 3000
"""A synset with more kinds below it than this is too general to stand for what a text names ("thing", "food",
"person", "activity"): :func:`senses_of` leaves it out."""


def senses_of(text: str, *, min_share: float = 0.3, max_words: int = 3,
              general: int = GENERAL) -> list[tuple[str, tuple[str, ...]]]:
    """The nouns ``text`` names and their likely senses: each WordNet phrase (longest first, as in
    :func:`find_kinds`) with the senses that carry at least ``min_share`` of its weight (always its first), leaving
    out senses with more than ``general`` kinds below them (too general to mean anything, :data:`GENERAL`).
    "tree nuts" -> [("tree", ("tree.n.01",)), ("nuts", ("nut.n.01",))]."""
    wn = wordnet()
    out: list[tuple[str, tuple[str, ...]]] = []
    for p in phrases(text, max_words):
        if p.verb:
            continue
        rows = [(s, w) for lemma in wn.lemmas(p.lemma)[:1]
                for (s, _), w in zip(wn.senses(lemma), _weights(wn.senses(lemma)), strict=True)]
        total = sum(w for _, w in rows) or 1.0
        keep = tuple(wn.name(s) for k, (s, w) in enumerate(rows)
                     if (k == 0 or w / total >= min_share) and wn.size(s) <= general)
        if keep:
            out.append((p.text, keep))
    return out


@lru_cache(maxsize=65536)
def _known(phrase: str) -> bool:
    return bool(wordnet().lemmas(phrase))


_NAMES_OF = frozenset({"noun.location", "noun.person", "noun.group"})


_DETERMINERS = _words("a an the my your his her our their this that these those some any another every each no")


@lru_cache(maxsize=16384)
def _common_noun(phrase: str, lexnames: frozenset[str]) -> bool:
    """Whether every sense of a capitalised ``phrase`` is of the expected files (or what they stand for): then the
    capital is a brand or style ("Merlot", "Chardonnay"), not a person's or a pet's name."""
    if not lexnames:
        return False
    group = set(lexnames).union(*(_KIN.get(x, frozenset()) for x in lexnames))
    wn = wordnet()
    return all(wn.lexname(s) in group for lemma in wn.lemmas(phrase) for s, _ in wn.senses(lemma))


@lru_cache(maxsize=16384)
def can_name(phrase: str) -> bool:
    """Whether ``phrase``, capitalised, can be a name: one of its senses is a place, a person or a group ("Turkey",
    "Python", "Java", "Bath"; not "Merlot")."""
    wn = wordnet()
    return any(wn.lexname(s) in _NAMES_OF for lemma in wn.lemmas(phrase) for s, _ in wn.senses(lemma))


@lru_cache(maxsize=65536)
def _verb_like_word(word: str) -> bool:
    """A single word far more often a verb ("fly") or an adjective ("therapeutic") than a noun."""
    wn = wordnet()
    noun = 4 * max(1, wn.noun_weight(word))
    return wn.verb_weight(word) > noun or wn.modifier_weight(word) > noun
