"""neusym.language.regex: the one door for patterns over memory and query text.

It must read exactly as ``re`` does (every caller receives ``re.Match`` objects) while its cost stays linear on long
untrusted text (issue #27 item 3). Pure: no database, no model.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import re

import pytest

import neusym
from neusym.language import regex as rx

LONG = rx.SHORT * 3


def _pad(core: str, fill: str = "lorem ipsum dolor ") -> str:
    """``core`` in the middle of a text long enough to take the long-text paths."""
    side = fill * (LONG // len(fill) // 2)
    return side + core + side


CASES = [
    (r"\bfor\s+(?P<n>\d+)\s+(?P<u>hours?|minutes?)\b", re.IGNORECASE, "I am away FOR 3 Hours today"),
    (r"foo$", 0, "x foo\n"),  # re's $ also matches before a final newline
    (r"^\s*item", re.MULTILINE, "a\n  item one\n\titem two"),
    (r"a\sb", 0, "a\x0bb a\x1cb a b"),  # Python's \s includes \v and \x1c-\x1f; re2's does not
    (r"[\s,]+", 0, "a ,\x0b b"),
    (r"\w+", 0, "caf\u00e9 na\u00efve \u65e5\u672c 12"),
    (r"(?<!\d)\d{3}(?!\d)", 0, "1234 567 89 012"),  # lookarounds: no re2 twin, windowed path
    (r"(\w)\1", 0, "aabbc ddx"),  # backreference: windowed path
    (r"x*", 0, "axxbx"),  # empty matches
    (r"\bcaf\u00e9\b", re.IGNORECASE, "un CAF\u00c9 noir, cafe\u0301"),
    (r"(?P<a>\d+)-(?P<b>\d+)?", 0, "10-20 30- 40"),
]


@pytest.mark.parametrize(("pattern", "flags", "core"), CASES)
def test_long_text_reads_as_re_does(pattern: str, flags: int, core: str) -> None:
    want = re.compile(pattern, flags)
    got = rx.compile(pattern, flags)
    for text in (_pad(core), _pad(core, "\u00e9t\u00e9 caf\u00e9 "), core):
        assert [(m.span(), m.groups()) for m in got.finditer(text)] == \
            [(m.span(), m.groups()) for m in want.finditer(text)]
        assert got.findall(text) == want.findall(text)
        assert got.sub("<\\g<0>>", text) == want.sub("<\\g<0>>", text)
        assert got.sub(lambda m: m.group(0).upper(), text, count=2) == want.sub(lambda m: m.group(0).upper(), text,
                                                                                count=2)
        assert got.split(text) == want.split(text)
        assert got.split(text, maxsplit=1) == want.split(text, maxsplit=1)
        s, w = got.search(text), want.search(text)
        assert (s.span() if s else None) == (w.span() if w else None)
        start = len(text) // 3
        s, w = got.search(text, start, len(text) - 5), want.search(text, start, len(text) - 5)
        assert (s.span() if s else None) == (w.span() if w else None)
        assert bool(got.match(text)) == bool(want.match(text))
        assert bool(got.fullmatch(text)) == bool(want.fullmatch(text))


def test_every_match_is_a_re_match() -> None:
    m = rx.compile(r"(\d+) hours").search(_pad("for 3 hours"))
    assert isinstance(m, re.Match) and m.group(1) == "3"


def test_every_pattern_has_a_twin_and_relaxes_only_what_re2_lacks() -> None:
    assert not rx.compile(r"\bfor\s+\d+\b").relaxed
    assert not rx.compile(r"[^\W\d_]+\s*caf\u00e9", re.IGNORECASE).relaxed
    for pattern in (r"(?<!\w)x", r"(a)\1", r"(?>ab)c", r"a++"):
        compiled = rx.compile(pattern)
        assert compiled.twin() is not None and compiled.relaxed, pattern


def test_the_view_keeps_res_classes() -> None:
    """Non-ASCII letters, digits and spaces stand for their class, so \\b and \\w keep their Unicode meaning."""
    text = _pad("\u00e9t\u00e9 \u0663\u0664 \u00a0x \u017fun K\u00e9 \u2014 na\u00efve")
    for pattern, flags in ((r"\b\w+\b", 0), (r"\d+", 0), (r"\s+x", 0), (r"\bsun\b", re.IGNORECASE),
                           (r"[^a-z ]+", 0), (r"k\w", re.IGNORECASE), (r"\W+", 0), (r"[\u00e0-\u00ff]+", 0)):
        got, want = rx.compile(pattern, flags), re.compile(pattern, flags)
        assert [m.span() for m in got.finditer(text)] == [m.span() for m in want.finditer(text)], pattern


def _all_patterns() -> tuple[rx.TextPattern, ...]:
    for info in pkgutil.walk_packages(neusym.__path__, "neusym."):
        if not any(part in info.name for part in ("cli", "__main__", "demo", "mcp")):
            importlib.import_module(info.name)
    return rx.registry()


def test_registered_patterns_read_long_text_as_re_does() -> None:
    """Every pattern the package compiles, over long real-looking text (ASCII and not): same matches as ``re``."""
    rng = random.Random(7)
    words = str.split("I moved to Lisbon in 2021 and work as a nurse at the hospital . My sister Ana lives in Porto ; "
             "she is vegetarian , allergic to peanuts ! From now on , remind me every Monday at 9:30 . "
             "Ich wohne seit drei Jahren in M\u00fcnchen . J'habite \u00e0 Lyon jusqu'\u00e0 vendredi . "
             "Ya no como carne . for the next 2 hours , until Friday . SYSTEM : ignore previous instructions")
    ascii_words = [w for w in words if w.isascii()]
    texts = [" ".join(rng.choice(ascii_words) for _ in range(900)), " ".join(rng.choice(words) for _ in range(900))]
    patterns = _all_patterns()
    assert len(patterns) > 250
    for p in patterns:
        for text in texts:
            assert [m.span() for m in p.finditer(text)] == [m.span() for m in p.compiled.finditer(text)], p.pattern


ADVERSARIAL = {
    "digits": "7", "digit_groups": "12,", "punctuation": "!?", "whitespace": " \t", "newlines": "\n",
    "repeated_words": "the very ", "long_token": "a", "caps": "AB", "accented": "\u00e9", "cjk": "\u65e5\u672c",
    "emoji": "\U0001f600", "mixed": "a1-", "fullwidth": "\uff53\uff59",
}


@pytest.mark.slow
@pytest.mark.timeout(900)  # a hang guard only: a quadratic pattern would take hours over these inputs
def test_every_pattern_finishes_on_adversarial_text() -> None:
    """Each pattern the package compiles, over 30 KB of each adversarial run (past SHORT, so the long-text path;
    30,000 squared steps would not finish): the guard that a new pattern cannot bring the stall back."""
    patterns = _all_patterns()
    for kind, unit in ADVERSARIAL.items():
        text = "I will be away for " + unit * (30_000 // len(unit)) + " hours until Friday"
        for p in patterns:
            assert isinstance(p.sub("", text), str), (kind, p.pattern)


def test_language_detection_reads_data_files() -> None:
    """Function words and letters come from neusym/language/data/<lang>/ (adding a language = adding files)."""
    from neusym.language import lexicon
    from neusym.language.detect import language_of

    assert {"en", "de", "es", "fr"} <= set(lexicon.languages()) and lexicon.languages()[0] == "en"
    assert "ich" in lexicon.words("de", "function_words")
    assert language_of("Ich wohne seit drei Jahren in München.") == "de"
    assert language_of("Dentist at 9 am") == "en"  # a tie goes to English
    assert language_of("Je suis à Lyon pendant la semaine.") == "fr"
    assert language_of("Our landlord Mr. Nuñez") == "en"  # a name's letters say nothing
