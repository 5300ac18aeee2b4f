"""Words that say a value changed, ended or was corrected, in English, German, Spanish and French: lemmas, not
phrasings.

Update detection (:mod:`neusym.governance.update_model`) reads three kinds of cue from a memory's words:

* **change**: the value is new or different now ("now", "new", "switched", "moved", "joined", "jetzt",
  "ahora", "désormais" ...);
* **ending**: a value stopped being true ("left", "quit", "sold", "passed away", "no longer", "nicht mehr",
  "ya no", "ne ... plus" ...); an ending word near a value the older memory states ends *that* value;
* **correction**: the earlier statement was wrong ("actually", "I meant", "typo", "eigentlich", "en realidad",
  "en fait") and "not X" naming the wrong value.

Each entry is a lemma or a stem (``*`` = any ending), matched against lower-cased words, so "switch*" covers
"switched", "switching", "switches" and "cambi*" covers "cambié", "cambiado", "cambiamos". Multi-word entries match
word sequences ("gave up", "passed away", "ya no"). The lists are about how languages mark change, not about any
attribute: the attribute comes from embedding similarity to slot descriptions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from neusym.language import regex as rx

__all__ = ["ADDITIVE", "CHANGE", "CORRECTION", "ENDING", "FUNCTION_WORDS", "NEGATION", "ROLE_NOUNS", "Lexicon", "cue_positions",
           "words", "wordset"]

_WORD = rx.compile(r"[\w@][\w@.'\-/]*\w|\w", re.UNICODE)


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` names ``name`` as a whole word ("Ana" is not named in "Hana talked ..."); callers fold case."""
    return rx.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None


def words(text: str) -> list[str]:
    """Lower-cased word tokens (apostrophes kept inside words: "don't"; elisions split: "j'ai" -> "j'", "ai")."""
    return list(_toks(text))


def _split(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for w in _WORD.findall(text.casefold()):
        # French elision: "j'ai" -> "j'", "ai"; an English possessive or "is": "dad's" -> "dad"
        if "'" in w and not w.startswith("'"):
            head, _, tail = w.partition("'")
            if head in ("j", "l", "d", "c", "n", "s", "m", "t", "qu"):
                out.extend([head + "'", tail])
                continue
            if tail == "s":  # "dad's", "it's": the word itself
                out.append(head)
                continue
        out.append(w.strip(".'-/"))
    return tuple(w for w in out if w)


class Lexicon:
    """A set of single-word lemmas/stems and multi-word sequences, matched on :func:`words` output.

    All entries are one compiled pattern over the space-joined words, so a text is read once, in C, not once per
    word and phrase; results are memoised per token sequence (the write path asks about the same texts for every
    pair they are in)."""

    def __init__(self, entries: Iterable[str]) -> None:
        alternatives = sorted({" ".join(_part(p) for p in e.split()) for e in entries}, key=len, reverse=True)
        # at the start of a word (the text's start or after a space), a whole entry followed by a word's end
        self._re = rx.compile(r"(?<![^ ])(?=(?:" + "|".join(alternatives) + r")(?: |$))")

    @functools.lru_cache(maxsize=8192)  # noqa: B019 - lexicons are module constants, never collected
    def positions(self, toks: tuple[str, ...]) -> tuple[int, ...]:
        """Indexes of the words that carry a cue (the first word of a matching phrase)."""
        if not toks:
            return ()
        text = " ".join(toks)
        starts: dict[int, int] = {}
        at = 0
        for i, w in enumerate(toks):
            starts[at] = i
            at += len(w) + 1
        return tuple(starts[m.start()] for m in self._re.finditer(text))


def _part(word: str) -> str:
    """One word of an entry as a pattern over space-joined words: ``_`` is any word, ``x*`` any word starting
    with ``x``."""
    if word == "_":
        return r"\S+"
    if word.endswith("*"):
        return re.escape(word[:-1]) + r"\S*"
    return re.escape(word)


def wordset(block: str) -> frozenset[str]:
    """The whitespace-separated words of a block (long word lists read better as text)."""
    return frozenset(block.split())


def _entries(block: str) -> list[str]:
    """``a|b|c`` entries of a lexicon block (line breaks are only layout)."""
    return [e.strip() for e in block.replace("\n", "").split("|") if e.strip()]


CHANGE = Lexicon(_entries("""
now|nowadays|anymore|instead|newly|new|lately|recently|meanwhile|
switch*|chang*|mov*|relocat*|start*|join*|becam*|become|promot*|upgrad*|swap*|trad*|replac*|hired|transfer*|
any more|no longer|these days|from now on|as of|
jetzt|nun|inzwischen|mittlerweile|neu|neue|neuer|neues|neuen|gewechselt|wechsel*|umgezogen|gezogen|angefangen|
begonnen|geworden|befördert|ersetzt|nicht mehr|
ahora|nuevo|nueva|nuevos|nuevas|cambi*|mud*|empec*|empez*|comenc*|ya no|hoy en día|últimamente|
maintenant|désormais|nouveau|nouvel|nouvelle|nouveaux|dorénavant|déménag*|commenc*|devenu|devenue|
passé|passée|embauch*|ne _ plus|n' _ plus
"""))
"""The value is new or different now."""

ENDING = Lexicon(_entries("""
left|leave|leaving|quit*|stopp*|stop|gave up|give up|giving up|dropp*|sold|sell*|gone|passed away|died|
retir*|cut out|ended|broke up|break up|split up|split|separat*|divorc*|closed|cancel*|anymore|any more|
no longer|instead of|switched from|moved from|moved out|traded|behind me|not _ anymore|ran off|
nicht mehr|kein* _ mehr|weg|verlassen|verkauft|gekündigt|getrennt|aufgehört|geschieden|gestorben|
ya no|dej*|se fue|vendí|vendimos|cerr*|termin*|separ*|divorci*|murió|falleció|
ne _ plus|n' _ plus|quitté|vendu|parti|partie|fini|arrêté|séparés|séparé|divorcé*|décédé*|mort
"""))
"""A value stopped being true."""

CORRECTION = Lexicon(_entries("""
actually|correction|misspoke|typo|autocorrect|i meant|i mean|mixed up|sorry|rather than|
eigentlich|korrektur|tippfehler|verwechselt|ich meinte|
en realidad|corrijo|quise decir|me equivoqué|perdón|
en fait|pardon|je voulais dire|je me suis trompé|plutôt
"""))
"""The earlier statement was wrong (a correction, not a change over time)."""

ADDITIVE = Lexicon(_entries("""
also|too|as well|another|second|additionally|in addition|both|
auch|noch|ebenfalls|zusätzlich|außerdem|
también|además|otro|otra|
aussi|également|encore|autre|en plus
"""))
"""A value added beside the others ("I'm also learning Japanese", "jetzt lerne ich auch Klavier"): not a
replacement."""

NEGATION = frozenset(["not", "no", "nicht", "nein", "kein", "keine", "pas", "non", "ni"])
"""Words that, opening a clause before a value ("not piano, ukulele", "nicht den Astra"), name the wrong value."""

ROLE_NOUNS = wordset("""
wife husband partner girlfriend boyfriend fiance fiancé fiancée spouse son daughter kid kids child children mum mom
mother parents grandparents in-laws family
dad father brother sister aunt uncle cousin nephew niece grandma grandmother grandpa grandfather boss manager
landlord landlady doctor dentist teacher neighbour neighbor friend flatmate roommate colleague coworker
frau mann freundin freund sohn tochter mutter mama vater papa eltern bruder schwester tante onkel chef chefin vermieter
arzt ärztin nachbar nachbarin kollege kollegin
esposa esposo mujer marido novia novio hijo hija madre mamá padre papá padres hermano hermana tía tío jefe jefa casero
médico médica vecino vecina compañero compañera
femme mari copine copain fils fille mère maman père papa frère sœur soeur tante oncle chef cheffe patron patronne
propriétaire médecin voisin voisine collègue
""")
"""Roles a later name can refer to: "my wife works at the council" then "Sofia left the council"."""


@functools.lru_cache(maxsize=16384)
def _toks(text: str) -> tuple[str, ...]:
    return _split(text)


def cue_positions(text: str, lexicon: Lexicon) -> tuple[int, ...]:
    """Word indexes of ``text`` (as :func:`words` splits it) where a cue of ``lexicon`` starts."""
    return lexicon.positions(_toks(text))

FUNCTION_WORDS = wordset("""
ich du er sie es wir ihr mich mir dich dir uns euch mein meine meinen meinem meiner dein deine sein seine ihre unser
unsere der die das den dem des ein eine einen einem einer und oder aber nicht ist sind war bin bist habe hat haben
hatte zu im in am an auf bei mit von für aus nach vor über als auch noch schon so wie was wer wo da dass es man
yo tú él ella nosotros mi mis tu tus su sus nuestro nuestra el la los las un una unos unas y o pero no es son soy
eres era fue he ha han tengo tiene de del en a al con por para que como lo le les me te se ya muy más
je tu il elle nous vous ils elles mon ma mes ton ta tes son sa ses notre nos le la les un une des du de et ou mais
ne pas est sont suis es était ai as a avons ont en à au aux avec pour par sur dans que qui ce cet cette ça c' j' l'
d' n' s' m' qu' y très plus aussi
""")
"""Function words of German, Spanish and French (English ones come from the lexical index's stopwords)."""
