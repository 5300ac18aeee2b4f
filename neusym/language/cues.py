"""Cues a sentence gives about change, as phrase lists per language (``data/<lang>/<name>.txt``).

Today: *continuation* ("still", "as usual", "immer noch", "todavía", "toujours"): the speaker restates a state that
goes on. A restatement must never supersede (issue #29), whatever a similarity model thinks of the pair ("three
lido mornings a week still" after "I swim at the lido three mornings a week").
"""

from __future__ import annotations

import functools

from neusym.language import lexicon
from neusym.language import regex as rx

__all__ = ["continues", "phrases_in"]

_TOKEN = rx.compile(r"[\w']+")


@functools.cache
def _phrases(name: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(p.lower().split()) for lang in lexicon.languages() for p in lexicon.words(lang, name))


def phrases_in(text: str, name: str) -> list[str]:
    """The phrases of list ``name`` (any language) that ``text`` says, as whole words."""
    wanted = _phrases(name)
    if not wanted:
        return []
    tokens = [t.lower() for t in _TOKEN.findall(text)]
    longest = max(len(p) for p in wanted)
    found = []
    for i in range(len(tokens)):
        for n in range(1, min(longest, len(tokens) - i) + 1):
            if tuple(tokens[i:i + n]) in wanted:
                found.append(" ".join(tokens[i:i + n]))
    return found


def continues(text: str) -> bool:
    """Whether ``text`` says a state goes on unchanged ("still", "as usual", "immer noch", "todavía")."""
    return bool(phrases_in(text, "continuation_cues"))
