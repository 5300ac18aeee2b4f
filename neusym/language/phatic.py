"""Small talk: is a conversation turn only a greeting, thanks, an acknowledgement or filler?

"hi", "Hello Ana!", "ok thanks", "lol", "sounds good" carry nothing to remember; stored, they fill the memory and
come back as "relevant memories". A turn is small talk when every word of it belongs to a small-talk phrase of one
of the word lists (``data/<lang>/phatic.txt``: English, German, Spanish, French), apart from up to two names it
addresses ("Ana" in "Hello Ana!") and the words that only go with small talk ("there", "so", "very"), and at least
one phrase is a real greeting, thanks, acknowledgement, farewell, filler or laughter. One word outside the lists
("ok thanks, I'm vegan") and the turn is not small talk. The reader is deliberately literal: a list phrase, a
stretched spelling of one ("heyyy", "sooo"), laughter ("hahaha") or a capitalised name; anything else keeps the turn.

Lists are plain data: one phrase per line under a ``[section]``, so a language is added by adding a file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["LANGUAGES", "SmallTalk", "is_small_talk", "small_talk"]

DATA = Path(__file__).resolve().parent / "data"
LANGUAGES = ("en", "de", "es", "fr")

_SUPPORT = frozenset({"address", "intensifier"})  # may accompany small talk, never make it
_SYLLABLES = "laughter-syllable"
_MAX_WORDS = 16  # longer turns say something
_MAX_NAMES = 2
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'", "\u00b4": "'"})


@dataclass(frozen=True)
class SmallTalk:
    """Why a turn is small talk: its first kind of phrase (``greeting``, ``thanks`` ...) and every phrase read."""

    kind: str
    phrases: tuple[str, ...]


@dataclass(frozen=True)
class _Lists:
    phrases: dict[tuple[str, ...], str]  # phrase (words) -> section
    syllables: frozenset[str]
    vocabulary: frozenset[str]
    longest: int


def _fold(word: str) -> str:
    """Lower case, no accents: "Días" and "dias" are one word to a reader of small talk."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    """Words as written (apostrophes kept inside a word, hyphens split); punctuation and emoji are separators."""
    out: list[str] = []
    cur: list[str] = []
    for ch in unicodedata.normalize("NFKC", text).translate(_APOSTROPHES):
        if ch.isalnum() or (ch == "'" and cur):
            cur.append(ch)
            continue
        if cur:
            out.append("".join(cur).rstrip("'"))
            cur = []
    if cur:
        out.append("".join(cur).rstrip("'"))
    return [w for w in out if w]


@cache
def _lists(languages: tuple[str, ...]) -> _Lists:
    phrases: dict[tuple[str, ...], str] = {}
    syllables: set[str] = set()
    for lang in languages:
        section = ""
        for raw in (DATA / lang / "phatic.txt").read_text(encoding="utf-8").splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                continue
            words = tuple(_fold(w) for w in _words(line))
            if not words:
                continue
            if section == _SYLLABLES:
                syllables.update(words)
            else:
                phrases.setdefault(words, section)  # the first language's section wins for a shared phrase
    vocabulary = frozenset(w for p in phrases for w in p)
    return _Lists(phrases, frozenset(syllables), vocabulary, max((len(p) for p in phrases), default=1))


def _squeeze(word: str, keep: int) -> str:
    """Runs of one letter longer than ``keep`` cut to ``keep`` ("heyyy" -> "hey" with keep=1)."""
    out: list[str] = []
    for ch in word:
        if len(out) >= keep and all(c == ch for c in out[-keep:]):
            continue
        out.append(ch)
    return "".join(out)


def _canonical(word: str, lists: _Lists) -> str:
    if word in lists.vocabulary:
        return word
    for keep in (2, 1):  # "coool" -> "cool", "heyyy" -> "hey"
        squeezed = _squeeze(word, keep)
        if squeezed in lists.vocabulary:
            return squeezed
    return word


def _laughter(word: str, syllables: frozenset[str]) -> bool:
    """"hahaha", "hehe", "jajaja": two or more of one laughter syllable (a trailing letter allowed: "hahah")."""
    for s in syllables:
        n = len(s)
        if len(word) >= 2 * n:
            body = word if len(word) % n == 0 else word[: len(word) - len(word) % n]
            if body == s * (len(body) // n) and word.startswith(body) and s.startswith(word[len(body):]):
                return True
    return False


def _name(word: str) -> bool:
    """A name the turn addresses: capitalised, not shouted (``ANA`` could be anything), never "I"."""
    return word[0].isupper() and (len(word) == 1 or not word.isupper()) and word not in ("I", "I'm")


def small_talk(text: str, languages: Iterable[str] | None = None) -> SmallTalk | None:
    """The small talk ``text`` is made of, or ``None`` when it says anything else (see the module docstring)."""
    lists = _lists(tuple(languages) if languages is not None else LANGUAGES)
    written = _words(text)
    if len(written) > _MAX_WORDS:
        return None
    if not written:  # only punctuation or emoji ("👍", "...")
        return SmallTalk("filler", ())
    folded = [_canonical(_fold(w), lists) for w in written]
    found: list[tuple[str, str]] = []
    names = 0
    i = 0
    while i < len(folded):
        for n in range(min(lists.longest, len(folded) - i), 0, -1):
            section = lists.phrases.get(tuple(folded[i:i + n]))
            if section is not None:
                found.append((section, " ".join(folded[i:i + n])))
                i += n
                break
        else:
            if _laughter(folded[i], lists.syllables):
                found.append(("laughter", folded[i]))
            elif _name(written[i]) and names < _MAX_NAMES:
                names += 1
            else:
                return None
            i += 1
    core = [section for section, _ in found if section not in _SUPPORT]
    if not core:
        return None
    return SmallTalk(core[0], tuple(p for _, p in found))


def is_small_talk(text: str, languages: Iterable[str] | None = None) -> bool:
    return small_talk(text, languages) is not None
