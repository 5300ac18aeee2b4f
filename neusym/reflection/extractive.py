"""The LLM-free reflector: extractive consolidation so reflection works with no model configured.

It cannot paraphrase, so it selects: statements are grouped by the entity (or topic tag) they are about,
near-duplicates collapse onto the newest wording, and within each group the representative statement (the one most
like the others), the most recent one and those carrying dates or numbers are kept first, round-robin across groups
until the output budget is full. Contradictions are found from the memories' triples (a functional predicate with
two values, or a fact asserted and negated) and from governance's ``conflict_pending`` flag, and are stated at the
top of the summary so they survive any trimming.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from neusym.language import regex as rx
from neusym.record import MemoryRecord
from neusym.reflection.prompts import ConflictNote, ReflectionOutput, render_memory
from neusym.reflection.tokens import ReflectionBudget, TokenCounter
from neusym.retrieval.lexical import tokenize

__all__ = ["ExtractiveReflector", "find_triple_conflicts"]

_SYNTH_PREFIX = "partial:"
_DIGIT = rx.compile(r"\d")
_GROUP_LINE = rx.compile(r"^([^:;\n]{1,60}):\s+(.+)$")
_CONFLICTS = "Conflicts"


@dataclass(eq=False)
class _Stmt:
    rid: str
    text: str
    when: float
    importance: float
    group: str
    words: frozenset[str]
    speaker: str | None = None
    dup_of: _Stmt | None = None
    kept: bool = False
    covers: list[str] = field(default_factory=list)  # record ids whose duplicate this statement stands for


def _when(r: MemoryRecord) -> float:
    """When it was *said* (statement order decides what is newest; the event date is kept in the text)."""
    return r.created_at.timestamp() + r.seq * 1e-6


def _strip_speaker(text: str, speaker: str | None) -> str:
    prefix = f"{speaker}: " if speaker else ""
    return text[len(prefix):] if prefix and text.startswith(prefix) else text


def _date_suffix(r: MemoryRecord, text: str) -> str:
    """The event date, when it is not the day the memory was stored (a memory without a stated event time is valid
    from its ingestion, which the reflection's own time already says)."""
    if r.valid_from is None:
        return text
    day = r.valid_from.strftime("%Y-%m-%d")
    if day == r.created_at.strftime("%Y-%m-%d"):
        return text
    return text if day in text else f"{text} ({day})"


def find_triple_conflicts(records: Sequence[MemoryRecord]) -> list[ConflictNote]:
    """Conflicts visible in the records themselves: a functional predicate (lives_in, age, ...) with two objects
    for one subject, the same fact asserted and negated, and memories governance flagged ``conflict_pending``."""
    from neusym.extraction import entity_key
    from neusym.extraction.vocabulary import is_functional

    by_sp: dict[tuple[str, str], dict[str, list[str]]] = {}
    by_spo: dict[tuple[str, str, str], dict[bool, list[str]]] = {}
    for r in records:
        if r.status.value in ("superseded", "deleted") or r.valid_to is not None:
            continue  # history is not a live contradiction
        for t in r.triples:
            s, o = entity_key(t.subject), entity_key(t.object)
            if not s or not o:
                continue
            by_spo.setdefault((s, t.predicate, o), {}).setdefault(t.polarity, []).append(r.id)
            if t.polarity and is_functional(t.predicate):
                by_sp.setdefault((s, t.predicate), {}).setdefault(o, []).append(r.id)
    notes: list[ConflictNote] = []
    for (s, p), objs in by_sp.items():
        if len(objs) > 1:
            ids = list(dict.fromkeys(i for v in objs.values() for i in v))
            if len(ids) > 1:
                notes.append(ConflictNote(ids=ids, description=f"{s} {p}: {' vs '.join(objs)}"))
    for (s, p, o), pol in by_spo.items():
        if len(pol) > 1:
            ids = list(dict.fromkeys([*pol[True], *pol[False]]))
            if len(ids) > 1:
                notes.append(ConflictNote(ids=ids, description=f"{s} {p} {o}: asserted and negated"))
    flagged = [r.id for r in records if "conflict_pending" in r.flags]
    if flagged:
        notes.append(ConflictNote(ids=flagged, description="flagged as conflicting, pending review"))
    return notes


class ExtractiveReflector:
    """Deterministic, model-free batch reflector (see the module docstring for the selection rules)."""

    name = "extractive"

    def __init__(self, *, dedup_threshold: float = 0.8) -> None:
        self.dedup_threshold = dedup_threshold

    def prompt_overhead(self, goal: str | None, budget: ReflectionBudget, counter: TokenCounter) -> int:
        return 16  # no prompt; a little slack keeps batches comparable with the LLM path

    def render(self, alias: str, record: MemoryRecord) -> str:
        return render_memory(alias, record)

    # ------------------------------------------------------------------ statements
    def _statements(self, records: Sequence[MemoryRecord]) -> list[_Stmt]:
        freq: Counter[str] = Counter()
        for r in records:
            if not r.id.startswith(_SYNTH_PREFIX):
                freq.update(dict.fromkeys(r.entities, 1))
        out: list[_Stmt] = []
        for r in records:
            if r.id.startswith(_SYNTH_PREFIX):
                for line in r.content.splitlines():
                    m = _GROUP_LINE.match(line.strip())
                    group, body = (m.group(1), m.group(2)) if m else ("General", line.strip())
                    for part in (p.strip() for p in body.split("; ")):
                        if part:
                            out.append(_Stmt(r.id, part, _when(r), r.importance, group, frozenset(tokenize(part))))
                continue
            speaker = r.source.speaker
            text = _date_suffix(r, _strip_speaker(" ".join(r.content.split()), speaker).rstrip(" ."))
            ents = [e for e in r.entities if e != speaker] or list(r.entities)
            group = max(ents, key=lambda e: (freq[e], -ents.index(e))) if ents else (r.tags[0] if r.tags else
                                                                                      "General")
            out.append(_Stmt(r.id, text, _when(r), r.importance, group, frozenset(tokenize(text)), speaker))
        # an entity nobody else mentions is not a topic: such statements join their speaker's group
        sizes = Counter(s.group for s in out)
        for s in out:
            if sizes[s.group] == 1 and s.group != _CONFLICTS and not s.rid.startswith(_SYNTH_PREFIX):
                s.group = s.speaker or "Other"
        return out

    def _dedupe(self, stmts: list[_Stmt]) -> list[_Stmt]:
        """Collapse near-duplicates onto the newest wording; the survivor ``covers`` the others' records."""
        keep: list[_Stmt] = []
        for s in sorted(stmts, key=lambda x: -x.when):
            if s.group == _CONFLICTS:
                keep.append(s)
                continue
            twin = next((k for k in keep if k.group != _CONFLICTS and _jaccard(k.words, s.words)
                         >= self.dedup_threshold), None)
            if twin is None:
                keep.append(s)
            else:
                s.dup_of = twin
                twin.covers.append(s.rid)
        return keep

    # ------------------------------------------------------------------ batch
    def run_batch(self, records: Sequence[MemoryRecord], lines: Sequence[str], goal: str | None,
                  budget: ReflectionBudget, counter: TokenCounter) -> tuple[ReflectionOutput, int]:
        stmts = self._statements(records)
        uniq = self._dedupe(stmts)
        conflicts = find_triple_conflicts([r for r in records if not r.id.startswith(_SYNTH_PREFIX)])
        by_id = {r.id: r for r in records}
        conflict_lines = [_conflict_text(c, by_id) for c in conflicts]
        carried = [s for s in uniq if s.group == _CONFLICTS]
        groups: dict[str, list[_Stmt]] = {}
        for s in uniq:
            if s.group != _CONFLICTS:
                groups.setdefault(s.group, []).append(s)
        order = sorted(groups, key=lambda g: (-len(groups[g]), -max(x.when for x in groups[g])))
        queues = {g: _priority(groups[g]) for g in order}
        head = "; ".join([*conflict_lines, *(s.text for s in carried)])
        if head:
            head = counter.truncate(head, max(budget.output_tokens // 2, 8))
            for s in carried:
                s.kept = s.text in head
        kept: dict[str, list[_Stmt]] = {g: [] for g in order}

        def render() -> str:
            rows = [f"{_CONFLICTS}: {head}"] if head else []
            for g in order:
                if kept[g]:
                    rows.append(_group_line(g, sorted(kept[g], key=lambda x: x.when)))
            return "\n".join(rows)

        for rank in range(max((len(q) for q in queues.values()), default=0)):
            for g in order:
                if rank >= len(queues[g]):
                    continue
                s = queues[g][rank]
                kept[g].append(s)
                if counter.count(render()) > budget.output_tokens:
                    kept[g].pop()
                else:
                    s.kept = True
        summary = render()
        if not summary.strip():  # even one statement is over budget: keep a truncated first one
            first = uniq[0] if uniq else _Stmt(records[0].id, records[0].content, 0.0, 0.5, "General", frozenset())
            summary = counter.truncate(f"{first.group}: {first.text}", budget.output_tokens)
        cited, covered = _coverage(records, stmts)
        goal_rel = ""
        if goal and goal.strip():
            gw = set(tokenize(goal))
            hits = sorted((s for s in uniq if gw & s.words), key=lambda s: (-len(gw & s.words), -s.when))[:3]
            goal_rel = counter.truncate("; ".join(s.text for s in hits), max(budget.output_tokens // 4, 8))
        imps = sorted((r.importance for r in records), reverse=True)[:3]
        tag_counts: Counter[str] = Counter(t for r in records for t in r.tags if t != "reflection")
        tags = [t for t, _ in tag_counts.most_common(6)] + [g.lower() for g in order[:3] if g != "General"]
        out = ReflectionOutput(summary=summary, goal_relevance=goal_rel, importance=round(sum(imps) / len(imps), 3),
                               tags=tags, conflicts=conflicts, cited=cited, covered=covered)
        return out, sum(counter.count(line) + 1 for line in lines) + self.prompt_overhead(goal, budget, counter)


def _group_line(group: str, stmts: Sequence[_Stmt]) -> str:
    """``Group (Speaker): s1; s2``; a statement keeps its own speaker when the group's speakers differ."""
    speakers = {s.speaker for s in stmts}
    one = next(iter(speakers)) if len(speakers) == 1 else None
    label = f"{group} ({one})" if one and one != group else group
    texts = [s.text if one or not s.speaker else f"{s.speaker}: {s.text}" for s in stmts]
    return f"{label}: " + "; ".join(texts)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 1.0 if a == b else 0.0
    return len(a & b) / len(a | b)


def _priority(stmts: list[_Stmt]) -> list[_Stmt]:
    """Representative first, then the most recent, then dated/numeric statements, then by importance."""
    if not stmts:
        return []
    rep = max(stmts, key=lambda s: (sum(_jaccard(s.words, o.words) for o in stmts if o is not s), s.importance,
                                    s.when))
    recent = max(stmts, key=lambda s: s.when)
    rest = sorted((s for s in stmts if s is not rep and s is not recent),
                  key=lambda s: (not _DIGIT.search(s.text), -s.importance, -s.when))
    return list(dict.fromkeys([rep, recent, *rest]))


def _coverage(records: Sequence[MemoryRecord], stmts: Sequence[_Stmt]) -> tuple[list[str], list[str]]:
    """cited: records with a statement kept (directly or through a kept duplicate); covered: records whose every
    statement is kept that way, so the summary fully preserves them."""
    ok: dict[str, list[bool]] = {}
    for s in stmts:
        kept = s.kept or (s.dup_of is not None and s.dup_of.kept)
        ok.setdefault(s.rid, []).append(kept)
    cited = [r.id for r in records if any(ok.get(r.id, []))]
    covered = [r.id for r in records if ok.get(r.id) and all(ok[r.id])]
    return cited, covered


def _conflict_text(note: ConflictNote, by_id: dict[str, MemoryRecord]) -> str:
    recs = sorted((by_id[i] for i in note.ids if i in by_id), key=_when)
    if not recs:
        return note.description
    parts = [f'"{_snip(r.content)}" ({(r.valid_from or r.created_at).strftime("%Y-%m-%d")})' for r in recs]
    return f"{' vs '.join(parts)}; newest: \"{_snip(recs[-1].content)}\""


def _snip(text: str, n: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"
