"""Corrected successors: a memory that lists several values, one of which was corrected or ended, lives on with the
others.

"My kids are Ben and Lily." then "Not Lily, Lola!": the correction names one value of a list. Superseding the old
memory alone would hide Ben, and keeping it current would keep Lily. So the old memory becomes history (superseded by
the correcting memory, as any update) and the engine writes its **successor**: the old text with the named value
replaced by the new one ("My kids are Ben and Lola."), or removed when nothing replaces it ("We sold the Mazda."),
with its own triples re-extracted. The successor is linked ``DERIVED_FROM`` both memories (``role``: ``corrected`` /
``correction``), its admission audit says it is an engine-made correction of memory X by memory Y, and the old
memory's supersession audit names it, so a rollback of that supersession ends it too.

What makes a *list*: the value run sits next to a list word or a comma ("and", "und", "y", "e", "et", "ou", ...,
a determiner between them allowed: "a Ford and a Mazda"). A memory that states one value ("My favourite band is
Muse") is superseded as before: the correcting memory says all there is. The replacement is the new memory's value
that the old one does not hold (a value-like span, else a content word that is no cue or function word), the one
nearest to where the new memory names the ended value. A correction ("not X", "actually", "typo") was never true
the other way, so the successor is valid from when the old memory was; a change ("sold the Trek and got a Cube")
from when the new one was said.

LLM-free by default. With an LLM configured (and ``GovernancePolicy.llm_corrections``), the model rewrites the old
text instead; its answer is used only if it keeps every untouched value, drops the ended one and stays short, else
the rule rewrite stands.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from neusym.errors import ExtractionError
from neusym.governance import update_lexicon as lex
from neusym.governance.decisions import Action, Decision
from neusym.governance.update_model import (
    content_words,
    ended_values,
    negation_named,
    old_values,
    statement,
    stem,
)
from neusym.language import regex as rx
from neusym.llm import ChatModel, complete_json
from neusym.record import MemoryRecord, MemoryStatus, Source, Triple
from neusym.retrieval.lexical import STOPWORDS

__all__ = ["Rewrite", "Successors", "corrected_text", "derivations", "replacement"]

log = logging.getLogger(__name__)

Facts = Callable[[str], tuple[list[str], list[Triple]]]
"""Text -> (entities, triples): the engine's extractor, for the successor's own graph facts."""

LIST_WORDS = lex.wordset("and & or und sowie oder y e o ni et ou")
"""Words that join the items of a list, in English, German, Spanish and French."""
_DETERMINERS = lex.wordset("""a an the my our his her their some der die das den dem ein eine einen einem mein meine
el la los las un una unos unas mi mis le les l' une des du de d' mon ma mes""")
_CONTRAST = lex.wordset("but rather instead sondern aber doch sino pero mais plutôt")
"""Words of an "X, not Y" frame that are no value ("no italiano sino portugués")."""
_TOKEN = rx.compile(r"[\w@][\w@.'’\-/]*\w|\w|[,;&]", re.UNICODE)
_SPAN = rx.compile(r"\"[^\"]{1,60}\"|“[^”]{1,60}”|[\w.+-]+@[\w-]+\.[\w.]+|\+?\d[\d\s./:-]*\d|\d"
                   r"|\b(?!I\b|I')[A-ZÀ-Ý][\w'’-]*(?:\s+[A-ZÀ-Ý0-9][\w'’-]*)*")
"""Value-like spans (quotes, e-mails, numbers, capitalised runs), wherever they stand."""


@dataclass(frozen=True)
class _Tok:
    text: str
    start: int
    end: int

    @property
    def key(self) -> str:
        return stem(self.text)


def _tokens(text: str) -> list[_Tok]:
    return [_Tok(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _runs(toks: Sequence[_Tok], keys: set[str]) -> list[tuple[int, int]]:
    """Maximal runs [i, j] of tokens whose stems are in ``keys``."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if toks[i].key in keys:
            j = i
            while j + 1 < len(toks) and toks[j + 1].key in keys:
                j += 1
            out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


def _widen(text: str, toks: Sequence[_Tok], run: tuple[int, int]) -> tuple[int, int]:
    """The run widened to the value-like span it sits in ("Pratchett" -> "Terry Pratchett")."""
    a, b = toks[run[0]].start, toks[run[1]].end
    for m in _SPAN.finditer(text):
        if m.start() <= a < m.end() or m.start() < b <= m.end():
            a, b = min(a, m.start()), max(b, m.end())
    i = next(k for k, t in enumerate(toks) if t.end > a)
    j = max(k for k, t in enumerate(toks) if t.start < b)
    return i, j


def _listed(toks: Sequence[_Tok], run: tuple[int, int]) -> bool:
    """Whether the run is an item of a list: a list word or a comma next to it (a determiner may stand between)."""
    i, j = run
    k = i - 1
    while k >= 0 and toks[k].text.casefold() in _DETERMINERS:
        k -= 1
    before = toks[k].text.casefold() if k >= 0 else ""
    after = toks[j + 1].text.casefold() if j + 1 < len(toks) else ""
    return before in LIST_WORDS or before == "," or after in LIST_WORDS or after == ","


def _cue_words(text: str) -> set[str]:
    """Stems of the words of ``text`` that open a change, ending, correction or additive cue."""
    toks = lex.words(text)
    return {stem(toks[p]) for cues in (lex.CHANGE, lex.ENDING, lex.CORRECTION, lex.ADDITIVE)
            for p in lex.cue_positions(text, cues) if p < len(toks)}


def _is_value_word(tok: _Tok, old_words: set[str], cues: set[str]) -> bool:
    key, low = tok.key, tok.text.casefold()
    return (len(key) > 1 and key not in old_words and key not in cues and not any(
        w in STOPWORDS or w in lex.FUNCTION_WORDS or w in _CONTRAST or w in LIST_WORDS or w in _DETERMINERS
        or w in lex.NEGATION for w in (key, low)))


def replacement(new_text: str, old_text: str, ended: set[str], *, spans_only: bool = False) -> str | None:
    """The value of ``new_text`` that takes the place of the ``ended`` one in ``old_text``, or ``None``.

    A value-like span the old text does not hold, else (unless ``spans_only``: a change said in passing, "sold
    the Mazda because it was rusty", names no lowercase replacement) a run of content words it does not hold (no
    cue, function or frame words: "not piano, ukulele", "no italiano sino portugués"); of several, the one nearest
    to where the new text names the ended value."""
    toks = _tokens(new_text)
    old_words = {stem(t.text) for t in _tokens(old_text)} | content_words(old_text)
    cues = _cue_words(new_text)
    named = [k for k, t in enumerate(toks) if t.key in ended] or [len(toks)]
    spans: list[tuple[int, int]] = []
    for m in _SPAN.finditer(new_text):
        inside = [k for k, t in enumerate(toks) if t.start >= m.start() and t.end <= m.end()]
        keep = [k for k in inside if _is_value_word(toks[k], old_words, cues)]
        if keep and len(keep) == len([k for k in inside if toks[k].key not in cues]):
            spans.append((keep[0], keep[-1]))
    if not spans and not spans_only:
        spans = _runs(toks, {t.key for t in toks if _is_value_word(t, old_words, cues)})
    if not spans:
        return None
    i, j = min(spans, key=lambda s: (min(min(abs(s[0] - n), abs(s[1] - n)) for n in named), -s[0]))
    return new_text[toks[i].start:toks[j].end]


def _ended_run(old_text: str, ended: set[str]) -> tuple[list[_Tok], tuple[int, int]] | None:
    toks = _tokens(old_text)
    runs = _runs(toks, ended)
    if len(runs) != 1:
        return None  # none, or several values named at once: not a one-item correction of a list
    run = _widen(old_text, toks, runs[0])
    values = {w for w in old_values_of(old_text)}
    rest = {t.key for k, t in enumerate(toks) if not run[0] <= k <= run[1]} & values
    if not rest or not _listed(toks, run):
        return None
    return toks, run


def old_values_of(text: str) -> set[str]:
    """Words of ``text`` that can be values (value-like spans and content words)."""
    spans = {stem(w) for m in _SPAN.finditer(text) for w in m.group(0).split()}
    return spans | content_words(text)


def _negates_another(new_text: str, old_text: str, ended: set[str]) -> bool:
    """Whether the new text negates another value of the old one too ("not Lisbon and not Porto, Faro")."""
    values = old_values_of(old_text) - ended
    toks = _tokens(new_text)
    for k, t in enumerate(toks):
        if t.text.casefold() in lex.NEGATION:
            nxt = k + 1
            while nxt < len(toks) and toks[nxt].text.casefold() in _DETERMINERS:
                nxt += 1
            if nxt < len(toks) and toks[nxt].key in values:
                return True
    return False


def corrected_text(old_text: str, new_text: str, ended: set[str], *,
                   correction: bool = True) -> tuple[str, str] | None:
    """``(successor text, replacement or "")`` for an old memory whose one listed value ``ended`` names, or
    ``None`` when the old memory holds no list around that value. A ``correction`` ("not X, Y") may name a
    lowercase replacement; a change only a value-like one (see :func:`replacement`)."""
    found = _ended_run(old_text, ended)
    if found is None or _negates_another(new_text, old_text, ended):
        return None
    toks, (i, j) = found
    new_value = replacement(new_text, old_text, ended, spans_only=not correction)
    if new_value:
        return old_text[:toks[i].start] + new_value + old_text[toks[j].end:], new_value
    # removed: take the list word or comma that joined it, and a determiner before it
    k = i
    while k > 0 and toks[k - 1].text.casefold() in _DETERMINERS:
        k -= 1
    if k > 0 and (toks[k - 1].text.casefold() in LIST_WORDS or toks[k - 1].text == ","):
        a, b = toks[k - 1].start, toks[j].end
        if toks[k - 1].text.casefold() in LIST_WORDS and k >= 2 and toks[k - 2].text == ",":
            a = toks[k - 2].start  # "A, B and C" minus C: "A and B" would need the comma turned into "and"
    elif j + 1 < len(toks):
        a, b = toks[k].start, toks[j + 1].end
        while b < len(old_text) and old_text[b] == " ":
            b += 1
    else:
        return None
    text = (old_text[:a].rstrip() + old_text[b:]) if old_text[b:b + 1] in ".!?,;" or b >= len(old_text) else (
        old_text[:a] + old_text[b:])
    return rx.sub(r"\s{2,}", " ", text).strip(), ""


class Rewrite(BaseModel):
    """The LLM's answer: the old memory rewritten with the correction applied."""

    text: str


_SYSTEM = ("You keep a user's memories up to date. A NEW memory corrects or changes ONE value that an OLD memory "
           "lists among others. Rewrite the OLD memory so it states what is true now: replace (or drop) only the "
           "value the NEW memory names, keep every other value and the OLD memory's wording and language. Reply "
           'with JSON only: {"text": "<the rewritten old memory>"}')


@dataclass
class Plan:
    """One successor to write: ``text`` derived from ``old`` by the correction ``by``."""

    text: str
    old: MemoryRecord
    by: Decision
    correction: bool
    method: str
    replaced_with: bool


class Successors:
    """Plans corrected successors for the supersessions of one write (see the module docstring)."""

    def __init__(self, facts: Facts | None = None, llm: ChatModel | None = None) -> None:
        self.facts = facts
        self.llm = llm

    def apply(self, decisions: list[Decision], fetch: Callable[[list[str]], Sequence[MemoryRecord]],
              now_epoch: float) -> None:
        """Append a successor decision for every old memory a stored decision of this write supersedes that lists
        several values (one per old memory: a user turn's correction first, then a restating assistant turn's).
        ``fetch`` reads stored memories by id (only called when something was superseded)."""
        wanted = [(d, e) for d in decisions if d.stored and d.record.status is not MemoryStatus.QUARANTINED
                  for e in _entries(d.details.get("supersede"))]
        if not wanted:
            return
        olds = {d.record.id: d.record for d in decisions}
        missing = [str(e["id"]) for _, e in wanted if str(e["id"]) not in olds]
        if missing:
            olds.update({r.id: r for r in fetch(missing)})
        done: set[str] = set()
        for d, e in sorted(wanted, key=lambda w: w[0].record.source.origin not in ("user", "system")):
            oid = str(e["id"])
            if oid in done or oid not in olds:
                continue
            p = self.plan(d, olds[oid])
            if p is None:
                continue
            done.add(oid)
            sd = self.decision(p, now_epoch)
            e["successor"] = sd.record.id
            d.note(f"the other values of memory {oid} live on in an engine-made successor")
            decisions.append(sd)

    def plan(self, d: Decision, old: MemoryRecord) -> Plan | None:
        """The successor of ``old`` that ``d`` (which supersedes it) calls for, if ``old`` lists several values."""
        new = d.record
        t_new, t_old = statement(new), statement(old)
        shared = content_words(t_new) & content_words(t_old) & (old_values(old, t_old) | old_values_of(t_old))
        ended = ended_values(t_new, shared) - ended_values(t_old, shared)
        if not ended:
            return None
        correction = bool(lex.cue_positions(t_new, lex.CORRECTION) or negation_named(t_new) & ended)
        rule = corrected_text(old.content, t_new, ended, correction=correction)
        if rule is None:
            return None
        text, method = rule[0], "rules"
        if self.llm is not None:
            found = self._ask(old.content, t_new, ended)
            if found is not None:
                text, method = found, "llm"
        return Plan(text, old, d, correction, method, bool(rule[1]))

    def _ask(self, old_text: str, new_text: str, ended: set[str]) -> str | None:
        assert self.llm is not None
        try:
            out = complete_json(self.llm, _SYSTEM, f"OLD memory:\n{old_text[:1000]}\n\nNEW memory:\n{new_text[:1000]}",
                                Rewrite, retries=1).text.strip()
        except ExtractionError as err:
            log.info("successor rewrite by the LLM failed, keeping the rule rewrite: %s", err)
            return None
        keys = {stem(t.text) for t in _tokens(out)}
        kept = old_values_of(old_text) - ended - _cue_words(old_text)
        if not out or len(out) > 2 * len(old_text) + 80 or ended & keys or not kept <= keys | content_words(out):
            log.info("successor rewrite by the LLM dropped a value or kept the ended one: rule rewrite used")
            return None
        return out

    def decision(self, p: Plan, now_epoch: float) -> Decision:
        """The successor's own decision (stored, audited as an engine-made correction)."""
        old, new = p.old, p.by.record
        entities, triples = self.facts(p.text) if self.facts is not None else (list(old.entities), [])
        valid_from = old.valid_from if p.correction else (new.valid_from or new.created_at)
        rec = MemoryRecord(
            content=p.text, type=old.type, entities=entities, triples=triples, tags=list(old.tags),
            scope=new.scope, status=MemoryStatus.ACTIVE, created_at=new.created_at, valid_from=valid_from,
            importance=max(old.importance, new.importance), confidence=min(old.confidence, new.confidence),
            source=Source(origin=new.source.origin, session_id=new.source.session_id, turn=new.source.turn,
                          speaker=old.source.speaker, ref=new.source.ref),
            metadata={"derived": "correction", "corrected": old.id, "correction": new.id})
        kind = "correction" if p.correction else "change"
        how = "the named value replaced" if p.replaced_with else "the named value removed"
        d = Decision(action=Action.STORE, record=rec,
                     reason=f"engine-made {kind} of memory {old.id} by memory {new.id}: {how}, the other values "
                            f"kept ({p.method})",
                     details={"derived": {"kind": kind, "corrected": old.id, "correction": new.id,
                                          "method": p.method, "replaced": p.replaced_with, "at": now_epoch}})
        return d


def _entries(value: object) -> list[dict[str, object]]:
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def derivations(decisions: Sequence[Decision]) -> list[dict[str, object]]:
    """The ``DERIVED_FROM`` links of the successors planned in ``decisions`` (the create statement writes them)."""
    out: list[dict[str, object]] = []
    for d in decisions:
        info = d.details.get("derived")
        if not d.stored or not isinstance(info, dict):
            continue
        for role, key in (("corrected", "corrected"), ("correction", "correction")):
            out.append({"src": d.record.id, "dst": str(info[key]),
                        "props": {"kind": str(info["kind"]), "role": role, "method": str(info["method"])}})
    return out
