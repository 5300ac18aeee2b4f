"""Which language a text is in, from its function words and letters (data files per language).

A rough guess: English wins a tie ("Dentist at 9 am": "am" is German too), and a name's letters say nothing about
the sentence ("Our landlord Mr. Nuñez", "a studio in Neukölln"): MiniLM's similarity is trusted for English text
only, so English text must not be taken for another language.
"""

from __future__ import annotations

import functools

from neusym.language import lexicon
from neusym.language import regex as rx

__all__ = ["language_of"]

_WORD = rx.compile(r"[\w'’-]+")


@functools.cache
def _tables() -> tuple[dict[str, frozenset[str]], dict[str, str]]:
    langs = lexicon.languages()
    function = {lang: lexicon.words(lang, "function_words") for lang in langs}
    letters = {lang: chars for lang in langs if (chars := lexicon.text(lang, "letters"))}
    return function, letters


def language_of(text: str) -> str:
    """The language code of ``text`` among those with data files ("en" when nothing says otherwise)."""
    function, letters = _tables()
    scores = dict.fromkeys(function, 0)
    for token in _WORD.findall(text):
        low = token.lower()
        for lang, words in function.items():
            if low in words:
                scores[lang] += 1
        if token[:1].islower():
            for lang, chars in letters.items():
                if any(c in chars for c in low):
                    scores[lang] += 1
    others = [lang for lang in function if lang != "en"]
    if not others:
        return "en"
    best = max(others, key=lambda lang: scores[lang])
    return best if scores[best] > scores.get("en", 0) else "en"
