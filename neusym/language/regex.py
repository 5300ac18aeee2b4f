"""Patterns over untrusted text, with a cost that grows linearly with the text.

Memories and queries are untrusted and may be up to 1 MB. Python's ``re`` backtracks: a pattern such as
``\\d+(?:[.,]\\d+)?\\s*(?:hours|...)`` searched over a 4,000-digit run tries every start and, from each, every length
of the run: quadratic (an ``add`` took 24-38 s). Every pattern that reads stored or query text is compiled here, as a
:class:`TextPattern` that picks an engine per call:

- **Short text** (≤ :data:`SHORT` characters, nearly every memory and query): Python's ``re``. It is the fastest
  engine on short strings (the ``google-re2`` wrapper costs several times more per call, see
  ``benchmarks/adversarial_inputs.py``) and its worst case on ``SHORT`` characters is bounded.
- **Long text**: ``google-re2`` (automata, linear in the text) *locates* candidate starts and ``re`` matches anchored
  at each candidate to produce the ``re.Match`` every caller reads, so results are ``re``'s own. The re2 *twin* is
  generated from ``re``'s parse tree and accepts a superset of what the pattern accepts, over an ASCII *view* of the
  text of the same length: every non-ASCII character stands for its class (a word character, a space, anything
  else; the four letters that case-match ASCII letters stay letters), so ``\\b``, ``\\w``, ``\\s`` and ``\\d`` keep
  ``re``'s Unicode meaning; lookarounds and backreferences, which re2 lacks, are relaxed (a superset again). On
  ASCII text a pattern without those constructs has an exact twin. A candidate ``re`` rejects costs a new search;
  after :data:`_REJECTS` of them in one search the rest is read by windows (below), which bounds the cost again.
- **Windows** (no re2 installed, or too many rejected candidates): ``re`` over overlapping windows of ``SHORT``
  characters, each hit confirmed by an anchored match over the whole text. The cost is (text / stride) windows of
  bounded cost. Exact for matches shorter than :data:`OVERLAP` characters.

The module-level helpers (:func:`search`, :func:`sub`, ...) mirror ``re``'s with a compiled-pattern cache.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["OVERLAP", "SHORT", "TextPattern", "compile", "findall", "finditer", "fullmatch", "match", "registry",
           "search", "split", "sub"]

SHORT = 1024
OVERLAP = 512
_STRIDE = SHORT - OVERLAP
_END = sys.maxsize

# re's parser (private, stable across 3.11-3.13): used to see whether a pattern has a construct re2 cannot take
try:
    _c: Any = importlib.import_module("re._constants")
    _parser: Any = importlib.import_module("re._parser")
except ImportError:  # pragma: no cover - Python < 3.11
    _c = importlib.import_module("sre_constants")
    _parser = importlib.import_module("sre_parse")

_EXACT_BREAKERS = {"ASSERT", "ASSERT_NOT", "GROUPREF", "GROUPREF_EXISTS", "ATOMIC_GROUP", "POSSESSIVE_REPEAT"}
_REJECTS = 32

# the ASCII view: a non-ASCII character becomes one ASCII character of its class under re's Unicode rules
_WORD_MARK, _SPACE_MARK, _OTHER_MARK = ord("_"), 0x1C, 0x7F
_CASE_TWINS = {0x0130: ord("i"), 0x0131: ord("i"), 0x017F: ord("s"), 0x212A: ord("k")}  # case-match ASCII letters
_MARKS = frozenset({_WORD_MARK, _SPACE_MARK, _OTHER_MARK, *_CASE_TWINS.values()})
_ASCII = frozenset(range(128))
_DIGIT = frozenset(range(0x30, 0x3A))
_SPACE = frozenset([*range(0x09, 0x0E), *range(0x1C, 0x20), 0x20])  # str.isspace() on ASCII (re2's \s is smaller)
_WORDS = frozenset([*_DIGIT, *range(0x41, 0x5B), *range(0x61, 0x7B), 0x5F])


class _ViewMap(dict[int, int]):
    """str.translate table: ASCII to itself, any other code point to the mark of its class (filled on demand)."""

    def __missing__(self, code: int) -> int:
        ch = chr(code)
        mark = _CASE_TWINS.get(code) or (_SPACE_MARK if ch.isspace() else
                                         _WORD_MARK if ch.isalnum() or ch == "_" else _OTHER_MARK)
        self[code] = mark
        return mark


_VIEW = _ViewMap({c: c for c in range(128)})


_COVERS = {"WORD": {_WORD_MARK}, "NOT_WORD": {_SPACE_MARK, _OTHER_MARK}, "SPACE": {_SPACE_MARK},
           "NOT_SPACE": {_WORD_MARK, _OTHER_MARK}, "DIGIT": set(), "NOT_DIGIT": {_SPACE_MARK, _OTHER_MARK},
           "LINEBREAK": set(), "NOT_LINEBREAK": {_WORD_MARK, _SPACE_MARK, _OTHER_MARK}}
"""Marks whose every non-ASCII character a class escape matches (a negated class may then leave that mark out)."""


def _category(name: str) -> tuple[frozenset[int], frozenset[int], set[int]]:
    """(ASCII members, marks of non-ASCII characters it may match, marks it matches wholly) of a class escape."""
    table = {"DIGIT": (_DIGIT, {_WORD_MARK}), "WORD": (_WORDS, {_WORD_MARK, *_CASE_TWINS.values()}),
             "SPACE": (_SPACE, {_SPACE_MARK}), "LINEBREAK": (frozenset({10}), set())}
    key = name.removeprefix("CATEGORY_").removeprefix("UNI_").removeprefix("LOC_")
    if key.startswith("NOT_"):
        members, _marks = table[key[4:]]
        return _ASCII - members, frozenset(_MARKS), _COVERS[key]
    members, marks = table[key]
    return members, frozenset(marks), _COVERS[key]


def _class(items: list[tuple[Any, Any]]) -> str:
    """An ``IN`` node as an explicit class over the view's ASCII alphabet, never narrower than ``re``'s."""
    members: set[int] = set()
    marks: set[int] = set()
    covered: set[int] = set()
    negate = False
    for op, av in items:
        kind = str(op)
        if kind == "NEGATE":
            negate = True
        elif kind == "LITERAL":
            if av < 128:
                members.add(av)
            else:
                marks.add(_VIEW[av])
        elif kind == "RANGE":
            lo, hi = av
            members.update(range(lo, min(hi, 127) + 1))
            if hi >= 128:
                marks.update(_MARKS)
        elif kind == "CATEGORY":
            m, k, c = _category(str(av))
            members.update(m)
            marks.update(k)
            covered.update(c)
        else:  # pragma: no cover - the parser emits nothing else inside a class
            return "(?s:.)"
    if not negate:
        return _emit_set(members | marks)
    # a negated class matches any non-ASCII character it does not name: keep every mark it does not wholly cover,
    # and the ASCII letters that stand for their case twins (re's [^a-z] matches "ſ", which the view spells "s")
    keep = {_WORD_MARK, _SPACE_MARK, _OTHER_MARK} - covered
    return _emit_set((set(_ASCII) - members) | keep | set(_CASE_TWINS.values()))


def _emit_set(codes: set[int]) -> str:
    if not codes:
        return r"[^\x00-\x{10FFFF}]"
    runs: list[str] = []
    ordered = sorted(codes)
    start = prev = ordered[0]
    for c in [*ordered[1:], -2]:
        if c != prev + 1:
            runs.append(f"\\x{start:02x}" if start == prev else f"\\x{start:02x}-\\x{prev:02x}")
            start = c
        prev = c
    return "[" + "".join(runs) + "]"


def _literal(code: int) -> str:
    if code >= 128:
        code = _VIEW[code]
    return chr(code) if chr(code).isalnum() and code < 128 else f"\\x{code:02x}"


def _emit(tree: Any, flags: int, exact: list[bool]) -> str:
    out: list[str] = []
    for op, av in tree:
        kind = str(op)
        if kind == "LITERAL":
            out.append(_literal(av))
        elif kind == "NOT_LITERAL":
            out.append(_class([("NEGATE", None), ("LITERAL", av)]))
        elif kind == "ANY":
            out.append("(?s:.)" if flags & re.DOTALL else ".")
        elif kind == "IN":
            out.append(_class([(str(o), a) for o, a in av]))
        elif kind == "BRANCH":
            out.append("(?:" + "|".join(_emit(b, flags, exact) for b in av[1]) + ")")
        elif kind == "SUBPATTERN":
            _group, add, drop, sub = av
            inner = (flags | add) & ~drop
            mods = "".join(f for f, bit in (("i", re.I), ("s", re.S)) if add & bit)
            off = "".join(f for f, bit in (("i", re.I), ("s", re.S)) if drop & bit)
            out.append(f"(?{mods}{'-' + off if off else ''}:" + _emit(sub, inner, exact) + ")")
        elif kind in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            exact[0] = exact[0] and kind != "POSSESSIVE_REPEAT"
            lo = min(lo, 1000)
            top = "" if hi == _c.MAXREPEAT or hi > 1000 else str(hi)
            out.append("(?:" + _emit(sub, flags, exact) + ")" + f"{{{lo},{top}}}")
        elif kind == "AT":
            at = str(av)
            if at == "AT_BEGINNING":
                out.append("(?m:^)" if flags & re.MULTILINE else r"\A")
            elif at == "AT_BEGINNING_STRING":
                out.append(r"\A")
            elif at == "AT_END":
                out.append("(?m:$)")  # re's $ also holds before a final newline: the multiline $ is a superset
                exact[0] = exact[0] and bool(flags & re.MULTILINE)
            elif at == "AT_END_STRING":
                out.append(r"\z")
            elif at in ("AT_BOUNDARY", "AT_NON_BOUNDARY"):
                if flags & re.ASCII:
                    exact[0] = False  # the view marks non-ASCII letters as word characters; re.ASCII does not
                else:
                    out.append(r"\b" if at == "AT_BOUNDARY" else r"\B")
            else:
                exact[0] = False
        elif kind in ("ASSERT", "ASSERT_NOT"):
            exact[0] = False  # relaxed: re checks it on each candidate
        elif kind == "GROUPREF":
            exact[0] = False
            out.append("(?s:.*)")
        elif kind == "GROUPREF_EXISTS":
            exact[0] = False
            _g, yes, no = av
            out.append("(?:" + _emit(yes, flags, exact) + "|" + (_emit(no, flags, exact) if no else "") + ")")
        elif kind == "ATOMIC_GROUP":
            exact[0] = False
            out.append("(?:" + _emit(av, flags, exact) + ")")
        else:
            raise ValueError(kind)
    return "".join(out)


def _twin_source(pattern: str, flags: int) -> tuple[str, bool] | None:
    """(re2 pattern over the ASCII view accepting a superset of ``pattern``'s matches, exact on ASCII text?)."""
    try:
        tree = _parser.parse(pattern, flags)
        flags = tree.state.flags
        exact = [True]
        body = _emit(tree, flags, exact)
    except Exception:  # noqa: BLE001 - a construct the generator does not know: the windowed path bounds the cost
        return None
    return ("(?i)" if flags & re.IGNORECASE else "") + body, exact[0]


_REGISTRY: weakref.WeakSet[TextPattern] = weakref.WeakSet()


def registry() -> tuple[TextPattern, ...]:
    """Every pattern compiled so far and still in use (the adversarial benchmark and the hang guard run them all);
    weak, so patterns built per call (a name's pattern) leave with their caller."""
    return tuple(sorted(_REGISTRY, key=lambda p: (p.pattern, p.flags)))


class TextPattern:
    """A compiled pattern over untrusted text: ``re.Pattern``'s reading methods, linear on long text."""

    __slots__ = ("__weakref__", "_exact", "_re", "_twin", "_twin_ready", "flags", "groupindex", "groups", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._re = re.compile(pattern, flags)
        self.pattern: str = pattern
        self.flags: int = self._re.flags
        self.groups: int = self._re.groups
        self.groupindex = self._re.groupindex
        self._twin: Any = None
        self._exact = False
        self._twin_ready = False  # re2 is imported and the twin compiled only when a long text needs it

    def __repr__(self) -> str:
        return f"TextPattern({self.pattern!r})"

    @property
    def compiled(self) -> re.Pattern[str]:
        """The ``re`` pattern itself (its parse, or a run over text known to be short)."""
        return self._re

    def twin(self) -> Any:
        """The re2 twin over the ASCII view (None when re2 is not installed or refuses the generated pattern)."""
        if not self._twin_ready:
            self._twin_ready = True
            made = _twin_source(self.pattern, self.flags)
            if made is not None:
                self._twin = _re2_compile(made[0])
                self._exact = made[1]
        return self._twin

    @property
    def relaxed(self) -> bool:
        """Whether the twin had to relax a construct re2 lacks (lookaround, backreference, atomic group): its
        candidates are then more often rejected by ``re``."""
        self.twin()
        return not self._exact

    # --- locating matches -------------------------------------------------------------------------------------
    def search(self, text: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        end = min(endpos, len(text))
        if end - pos <= SHORT:
            return self._re.search(text, pos, end)
        return self._long_search(text, pos, end)

    def match(self, text: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        end = min(endpos, len(text))
        if end - pos > SHORT and (twin := self.twin()) is not None and twin.match(_view(text, end), pos) is None:
            return None  # the twin accepts a superset: no twin match, no match
        return self._re.match(text, pos, end)

    def fullmatch(self, text: str, pos: int = 0, endpos: int = _END) -> re.Match[str] | None:
        end = min(endpos, len(text))
        if end - pos > SHORT and (twin := self.twin()) is not None and twin.fullmatch(_view(text, end), pos) is None:
            return None
        return self._re.fullmatch(text, pos, end)

    def search_linear(self, text: str) -> re.Match[str] | None:
        """``search`` on the long-text path whatever the length (benchmarks and tests compare the engines)."""
        return self._long_search(text, 0, len(text))

    def _long_search(self, text: str, pos: int, end: int) -> re.Match[str] | None:
        twin = self.twin()
        if twin is None:
            return self._window_search(text, pos, end)
        view = _view(text, end)
        start = pos
        for _ in range(_REJECTS):
            found = twin.search(view, start)
            if found is None:
                return None
            m = self._re.match(text, found.start(), end)
            if m is not None:
                return m
            start = found.start() + 1  # a relaxed lookaround or a look-alike in the view: keep looking
            if start > end:
                return None
        return self._window_search(text, start, end)

    def _window_search(self, text: str, pos: int, end: int) -> re.Match[str] | None:
        a = pos
        while a <= end:
            b = min(a + SHORT, end)
            m = self._re.search(text, a, b)
            if m is None:
                if b == end:
                    return None
                a += _STRIDE
                continue
            if b == end:
                return m
            if m.start() >= a + _STRIDE:
                a += _STRIDE
                continue
            full = self._re.match(text, m.start(), end)  # the window may have cut the match (or faked a $ / \b)
            if full is not None:
                return full
            a = m.start() + 1
        return None

    def finditer(self, text: str, pos: int = 0, endpos: int = _END) -> Iterator[re.Match[str]]:
        end = min(endpos, len(text))
        if end - pos <= SHORT:
            return self._re.finditer(text, pos, end)
        return self._long_iter(text, pos, end)

    def _long_iter(self, text: str, pos: int, end: int) -> Iterator[re.Match[str]]:
        at = pos
        while at <= end:
            m = self._long_search(text, at, end)
            if m is None:
                return
            yield m
            at = m.end() + 1 if m.end() == m.start() else m.end()

    # --- built on finditer ------------------------------------------------------------------------------------
    def findall(self, text: str, pos: int = 0, endpos: int = _END) -> list[Any]:
        end = min(endpos, len(text))
        if end - pos <= SHORT:
            return self._re.findall(text, pos, end)
        if self.groups == 0:
            return [m.group(0) for m in self._long_iter(text, pos, end)]
        if self.groups == 1:
            return [m.group(1) or "" for m in self._long_iter(text, pos, end)]
        return [tuple(g or "" for g in m.groups()) for m in self._long_iter(text, pos, end)]

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.subn(repl, text, count)[0]

    def subn(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> tuple[str, int]:
        if len(text) <= SHORT:
            return self._re.subn(repl, text, count)
        out: list[str] = []
        last = done = 0
        for m in self._long_iter(text, 0, len(text)):
            if count and done >= count:
                break
            out.append(text[last:m.start()])
            out.append(repl(m) if callable(repl) else m.expand(repl))
            last = m.end()
            done += 1
        out.append(text[last:])
        return "".join(out), done

    def split(self, text: str, maxsplit: int = 0) -> list[str | Any]:
        if len(text) <= SHORT:
            return self._re.split(text, maxsplit)
        out: list[str | Any] = []
        last = 0
        for done, m in enumerate(self._long_iter(text, 0, len(text))):
            if maxsplit and done >= maxsplit:
                break
            out.append(text[last:m.start()])
            out.extend(m.groups())
            last = m.end()
        out.append(text[last:])
        return out


@functools.cache
def _re2() -> Any:
    try:
        return importlib.import_module("re2")
    except ImportError:  # optional at run time: without it every long text takes the windowed path
        return None


_VIEWS: list[tuple[str, bytes]] = []


def _view(text: str, end: int) -> bytes:
    """The text's ASCII view as bytes (same offsets; re2 then never converts positions, which its wrapper does by
    rescanning the text on every call). The last few views are kept: one text meets hundreds of patterns."""
    view = next((v for held, v in _VIEWS if held is text), None)
    if view is None:
        view = (text if text.isascii() else text.translate(_VIEW)).encode("ascii")
        _VIEWS.insert(0, (text, view))
        del _VIEWS[4:]
    return view if end == len(text) else view[:end]


def _re2_compile(source: str) -> Any:
    re2 = _re2()
    if re2 is None:
        return None
    try:
        options = re2.Options()
        options.max_mem = 64 << 20  # the big alternations (number words, units) overflow the 8 MB default DFA
        options.log_errors = False
        return re2.compile(source.encode("utf-8"), options)  # searched over ASCII bytes
    except Exception:  # noqa: BLE001 - a construct re2 refuses: the windowed path still bounds the cost
        return None


def compile(pattern: str, flags: int = 0) -> TextPattern:  # noqa: A001 - mirrors re.compile on purpose
    """Compile ``pattern`` for reading memory or query text (the one door; see the module docstring)."""
    compiled = TextPattern(pattern, flags)
    _REGISTRY.add(compiled)
    return compiled


@functools.lru_cache(maxsize=512)
def _cached(pattern: str, flags: int) -> TextPattern:
    return TextPattern(pattern, flags)  # not in the registry: built from data (names) at run time


def search(pattern: str, text: str, flags: int = 0) -> re.Match[str] | None:
    return _cached(pattern, flags).search(text)


def match(pattern: str, text: str, flags: int = 0) -> re.Match[str] | None:
    return _cached(pattern, flags).match(text)


def fullmatch(pattern: str, text: str, flags: int = 0) -> re.Match[str] | None:
    return _cached(pattern, flags).fullmatch(text)


def finditer(pattern: str, text: str, flags: int = 0) -> Iterator[re.Match[str]]:
    return _cached(pattern, flags).finditer(text)


def findall(pattern: str, text: str, flags: int = 0) -> list[Any]:
    return _cached(pattern, flags).findall(text)


def sub(pattern: str, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0, flags: int = 0) -> str:
    return _cached(pattern, flags).sub(repl, text, count)


def split(pattern: str, text: str, maxsplit: int = 0, flags: int = 0) -> list[str | Any]:
    return _cached(pattern, flags).split(text, maxsplit)
