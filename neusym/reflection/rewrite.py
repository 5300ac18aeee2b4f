"""Query rewriting before retrieval: make a vague follow-up self-contained.

"How is that going?" retrieves nothing useful on its own; the conversation it follows says what "that" is. With a
model the follow-up is rewritten from the recent turns; without one (or when the model fails) the entities and
topic words of the last turns are appended, which is what stage 1 (BM25) and stage 2 (entity expansion) need.
Queries that already stand on their own are left alone, so turning rewriting on costs nothing for them.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.errors import ExtractionError
from neusym.ingest import normalize_messages
from neusym.language import regex as rx
from neusym.reflection.prompts import REWRITE_SYSTEM, RewriteOutput, rewrite_user_prompt
from neusym.retrieval.lexical import STOPWORDS, tokenize

__all__ = ["QueryRewriter", "RewriteResult", "looks_vague"]

log = logging.getLogger(__name__)

_DEICTIC = rx.compile(
    r"\b(it|its|that|this|those|these|they|them|their|there|he|him|his|she|her|the same|that one|so far|anything "
    r"new|any news|any update|how about|what about)\b", re.IGNORECASE)
_FOLLOW_UP_START = rx.compile(r"^\s*(and|also|so|then|but|what about|how about|and what)\b", re.IGNORECASE)
_NAME = rx.compile(r"\b[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*")
_WORD = rx.compile(r"[^\W\d_]{3,}", re.UNICODE)


def looks_vague(query: str, max_words: int = 10) -> bool:
    """A short query with a pronoun/deictic or a follow-up opener depends on context."""
    words = query.split()
    if len(words) > max_words:
        return False
    return bool(_DEICTIC.search(query) or _FOLLOW_UP_START.search(query))


@dataclass
class RewriteResult:
    query: str
    original: str
    method: str  # unchanged | llm | entities
    entities: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.query


def _as_lines(recent: Sequence[Any]) -> list[str]:
    if not recent:
        return []
    if all(isinstance(m, str) for m in recent):
        return [str(m) for m in recent]
    return [f"{t.speaker or t.role}: {t.content}" for t in normalize_messages(list(recent))]


class QueryRewriter:
    """Rewrites follow-ups. ``extractor`` (a NeuSym :class:`~neusym.extraction.Extractor`) finds entities for the
    LLM-free path; without it capitalised names are used. ``ignore`` lists entities never worth appending (the
    speakers themselves, who appear in every turn)."""

    def __init__(self, llm: Any = None, *, extractor: Any = None, max_turns: int = 6, only_vague: bool = True,
                 retries: int = 1, ignore: Sequence[str] | None = None) -> None:
        self.llm = llm
        self.extractor = extractor
        self.max_turns = max_turns
        self.only_vague = only_vague
        self.retries = retries
        self.ignore = set(ignore or ())

    def rewrite(self, query: str, recent: Sequence[Any] | None = None) -> RewriteResult:
        lines = _as_lines(list(recent or []))[-self.max_turns :]
        if not lines or (self.only_vague and not looks_vague(query)):
            return RewriteResult(query, query, "unchanged")
        if self.llm is not None:
            from neusym.reflection.reflector import ask_structured

            try:
                out: RewriteOutput = ask_structured(self.llm, REWRITE_SYSTEM, rewrite_user_prompt(query, lines),
                                                    RewriteOutput, retries=self.retries)
                text = " ".join(out.query.split())
                if text:
                    return RewriteResult(text, query, "llm")
            except ExtractionError as err:
                log.warning("query rewrite failed (%s); resolving from entities instead", err)
        return self._resolve(query, lines)

    def _entities(self, text: str) -> list[str]:
        if self.extractor is not None:
            try:
                return [e for x in self.extractor.extract(text) for e in x.entities]
            except Exception:  # noqa: BLE001 - a failing extractor must not break search
                log.debug("extractor failed during query rewrite", exc_info=True)
        return [m.group(0) for m in _NAME.finditer(text) if m.start() > 0 or len(m.group(0).split()) > 1]

    def _resolve(self, query: str, lines: Sequence[str]) -> RewriteResult:
        """Append the entities and topic words of the latest turns (newest first) that the query lacks."""
        have = set(tokenize(query))
        entities: list[str] = []
        topics: Counter[str] = Counter()
        for age, line in enumerate(reversed(lines[-3:])):
            body = line.split(": ", 1)[1] if ": " in line[:40] else line
            for e in self._entities(body):
                if e not in entities and not (set(tokenize(e)) <= have) and e not in self.ignore:
                    entities.append(e)
            if age > 1:
                continue  # topic words only from the last two turns: older ones drift off-topic
            for w in _WORD.findall(body.lower()):
                if w not in STOPWORDS and w not in have and not any(w in e.lower() for e in entities):
                    topics[w] += max(1, 3 - age)
        ents = entities[:4]
        tops = [w for w, _ in topics.most_common(4)]
        if not ents and not tops:
            return RewriteResult(query, query, "unchanged")
        text = f"{query.rstrip()} ({', '.join([*ents, *tops])})"
        return RewriteResult(text, query, "entities", ents, tops)
