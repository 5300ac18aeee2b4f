"""Optional quality check: did a reflection lose a fact a given question needs?

A reflection that drops a key fact is worse than none when the raw memories then go cold, so when the check finds a
loss the raw memories that hold it are kept hot (reinforced, never moved to the colder tier). With a model the
question is put to it; without one (or when it fails) a heuristic compares the dates, numbers and names of the
question-relevant sources with the summary.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.errors import ExtractionError
from neusym.language import regex as rx
from neusym.record import MemoryRecord
from neusym.reflection.prompts import QUALITY_SYSTEM, QualityVerdict, quality_user_prompt, render_memory
from neusym.reflection.tokens import TokenCounter, get_token_counter
from neusym.retrieval.lexical import tokenize

__all__ = ["QualityReport", "check_quality"]

log = logging.getLogger(__name__)

_KEY = rx.compile(r"\b\d[\d:/.,-]*\b|\b[A-Z][\w'-]+\b")


@dataclass
class QualityReport:
    question: str
    lost_key_fact: bool
    missing: list[str] = field(default_factory=list)
    hot_ids: list[str] = field(default_factory=list)
    method: str = "heuristic"


def _relevant(sources: Sequence[MemoryRecord], question: str) -> list[MemoryRecord]:
    qw = set(tokenize(question))
    if not qw:
        return list(sources)
    return [s for s in sources if qw & set(tokenize(s.content))]


def _heuristic(summary: str, sources: Sequence[MemoryRecord], question: str) -> QualityReport:
    low = summary.casefold()
    missing: list[str] = []
    hot: list[str] = []
    q_first = {w.casefold() for w in question.split()[:1]}
    for s in _relevant(sources, question):
        keys = {k for k in _KEY.findall(s.content) if k.casefold() not in q_first}
        lost = [k for k in keys if k.casefold() not in low]
        if lost:
            missing.append(s.content)
            hot.append(s.id)
    return QualityReport(question, bool(missing), missing, hot, "heuristic")


def check_quality(
    summary: str,
    sources: Sequence[MemoryRecord],
    question: str,
    *,
    llm: Any = None,
    counter: TokenCounter | None = None,
    input_tokens: int = 3000,
    retries: int = 2,
) -> QualityReport:
    """Ask what ``summary`` lost for ``question``; ``hot_ids`` names the sources to keep hot."""
    if llm is None:
        return _heuristic(summary, sources, question)
    from neusym.reflection.reflector import ask_structured

    counter = counter or get_token_counter()
    relevant = _relevant(sources, question) or list(sources)
    room = input_tokens - counter.count(QUALITY_SYSTEM) - counter.count(quality_user_prompt(summary, [], question))
    lines: list[str] = []
    shown: list[MemoryRecord] = []
    for i, s in enumerate(relevant):
        line = render_memory(f"m{i + 1}", s)
        cost = counter.count(line) + 1
        if cost > room:
            break
        room -= cost
        lines.append(line)
        shown.append(s)
    try:
        verdict: QualityVerdict = ask_structured(llm, QUALITY_SYSTEM, quality_user_prompt(summary, lines, question),
                                                 QualityVerdict, retries=retries)
    except ExtractionError as err:
        log.warning("quality check failed (%s); using the heuristic check", err)
        return _heuristic(summary, sources, question)
    if not verdict.lost_key_fact:
        return QualityReport(question, False, [], [], "llm")
    hot: list[str] = []
    for s in shown:
        words = set(tokenize(s.content))
        if any(words & set(tokenize(m)) for m in verdict.missing):
            hot.append(s.id)
    return QualityReport(question, True, list(verdict.missing), hot or [s.id for s in shown], "llm")
