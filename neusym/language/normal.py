"""The form of a text that screening and prompt rendering read: what a model would see, not how it was spelled.

An attacker can spell our frame delimiter or a role label with characters that *look* like ASCII to a model but
not to an ASCII-only rule: fullwidth forms (``＜／ｎｅｕｓｙｍ＿ｍｅｍｏｒｉｅｓ＞``, ``ｓｙｓｔｅｍ：``), ligatures and
compatibility forms (NFKC folds all of these), invisible characters between the letters (zero-width spaces and
joiners, soft hyphens, bidi controls, Unicode tag characters), and Cyrillic or Greek letters inside an otherwise
Latin word (``sуstem`` with a Cyrillic ``у``). :func:`visible_form` undoes all three, so one rule written in ASCII
holds for every spelling. A word written wholly in another script keeps its letters: "система" is Russian, not an
attack.
"""

from __future__ import annotations

import unicodedata

__all__ = ["INVISIBLE", "visible_form"]

# characters that render as nothing (or only reorder text) yet reach a model: soft hyphen, Arabic letter mark,
# Mongolian vowel separator, zero-width space/joiners, LRM/RLM, bidi embeddings/overrides/isolates, word joiner and
# invisible operators, BOM, interlinear annotation marks, Unicode tag characters
INVISIBLE = frozenset(
    [0x00AD, 0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x206A), 0xFEFF,
     *range(0xFFF9, 0xFFFC), *range(0xE0000, 0xE0080)])
_DROP = dict.fromkeys(INVISIBLE)

# Cyrillic and Greek letters that are drawn like a Latin letter (Unicode's confusables, the unambiguous ones)
_LOOKALIKE = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "һ": "h", "ԛ": "q", "ԝ": "w", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "Ѕ": "S", "І": "I", "Ј": "J", "Ү": "Y",
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u", "χ": "x", "ε": "e",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X",
})
_LOOKALIKE_CHARS = frozenset(chr(c) for c in _LOOKALIKE)


def _is_latin(ch: str) -> bool:
    return ch.isascii() and ch.isalpha() or "LATIN" in unicodedata.name(ch, "")


def _fold_mixed_words(text: str) -> str:
    """Look-alike letters mapped to Latin inside words that also hold a Latin letter (the spoofing signature)."""
    out: list[str] = []
    word: list[str] = []

    def flush() -> None:
        token = "".join(word)
        if any(c in _LOOKALIKE_CHARS for c in token) and any(_is_latin(c) for c in token):
            token = token.translate(_LOOKALIKE)
        out.append(token)
        word.clear()

    for ch in text:
        if ch.isalpha():
            word.append(ch)
        else:
            if word:
                flush()
            out.append(ch)
    if word:
        flush()
    return "".join(out)


def visible_form(text: str) -> str:
    """``text`` as it reads: invisible characters dropped, NFKC-normalised, look-alike letters in mixed words folded.

    Linear in the text. ASCII text comes back unchanged (and without any per-character work).
    """
    if text.isascii():
        return text
    shown = unicodedata.normalize("NFKC", text.translate(_DROP))
    if shown.isascii() or not any(c in _LOOKALIKE_CHARS for c in shown):
        return shown
    return _fold_mixed_words(shown)
