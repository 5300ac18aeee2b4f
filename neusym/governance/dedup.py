"""Duplicate detection: exact (normalised hash) and near (embedding similarity), with a review band in between.

Agents restate things constantly; storing every restatement would crowd retrieval with copies and dilute the
signal that a fact was *repeated*. A duplicate therefore reinforces the memory it repeats (strength, confidence,
provenance of both sources). Near-duplicates are only merged when nothing about them can differ in meaning: equal
numbers, equal negation, no disagreeing triple. Phone numbers and "I (don't) like coffee" embed almost identically,
and merging those would silently destroy an update.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from neusym.governance.decisions import Action, Decision, Flag
from neusym.governance.policy import GovernancePolicy
from neusym.language import regex as rx
from neusym.record import MemoryRecord, MemoryStatus, Scope
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.lexical import STOPWORDS
from neusym.symbolic.governance_store import GovernanceQueries
from neusym.symbolic.store import SymbolicStore

__all__ = ["Deduplicator", "compatible"]

_NUMBER = rx.compile(r"\d+(?:[.,]\d+)?")
_NEGATION = rx.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|no\s+longer|anymore)\b|n't\b",
                       re.IGNORECASE)
_DEDUP_STATUSES = ("active", "pending")


def _words(text: str) -> set[str]:
    return {w for w in rx.findall(r"\w+", text.casefold()) if w not in STOPWORDS}


def _same_object(a: str, b: str) -> bool:
    wa, wb = _words(a), _words(b)
    return wa <= wb or wb <= wa


def compatible(a: MemoryRecord, b: MemoryRecord) -> bool:
    """True if two similar texts cannot disagree on a fact: same numbers, same negation, no clashing triple.

    Triples clash when they share subject and predicate but name different things ("a dog named Rex" vs "...Max")
    or differ in polarity; "hiking on weekends" vs "hiking on the weekends" is the same object.
    """
    if sorted(_NUMBER.findall(a.content)) != sorted(_NUMBER.findall(b.content)):
        return False
    if len(_NEGATION.findall(a.content)) % 2 != len(_NEGATION.findall(b.content)) % 2:
        return False
    for t in a.triples:
        for u in b.triples:
            if t.subject.casefold() != u.subject.casefold() or t.predicate != u.predicate:
                continue
            if t.polarity != u.polarity or not _same_object(t.object, u.object):
                return False
    return True


def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


class Deduplicator:
    """Turns admitted candidates that repeat an existing memory into MERGE (or REVIEW) decisions."""

    def __init__(self, store: SymbolicStore, derived: DerivedIndexes, queries: GovernanceQueries,
                 policy: GovernancePolicy) -> None:
        self.store = store
        self.derived = derived
        self.queries = queries
        self.policy = policy

    def apply(self, decisions: Sequence[Decision], vectors: np.ndarray, scope: Scope) -> None:
        live = [i for i, d in enumerate(decisions) if d.action in (Action.STORE, Action.STORE_LOW_CONFIDENCE)]
        if not live:
            return
        existing = self.store.find_by_hash(scope, [decisions[i].record.content_hash for i in live],
                                           list(_DEDUP_STATUSES))
        seen_hash: dict[str, str] = {}
        unit = np.vstack([_unit(np.asarray(vectors[i], dtype=np.float32)) for i in live])
        near = self._near_existing(unit, scope)
        # In-batch similarities in one matrix product: a pairwise Python loop made a 1,000-memory batch spend
        # seconds here. Only pairs above the review threshold are looked at individually.
        sims = unit @ unit.T
        kept = np.zeros(len(live), dtype=bool)  # positions (in ``live``) stored so far in this batch
        for pos, i in enumerate(live):
            d = decisions[i]
            rec = d.record
            target = existing.get(rec.content_hash) or seen_hash.get(rec.content_hash)
            if target is not None:
                self._merge(d, target, 1.0, "exact")
                continue
            seen_hash[rec.content_hash] = rec.id
            best: tuple[float, MemoryRecord] | None = None
            close = [(float(sims[pos, j]), decisions[live[j]].record) for j in
                     np.flatnonzero(kept[:pos] & (sims[pos, :pos] >= self.policy.review_threshold)).tolist()]
            for sim, other in near[pos] + close:
                if sim >= self.policy.review_threshold and compatible(rec, other) and (best is None or sim > best[0]):
                    best = (sim, other)
            kept[pos] = True
            if best is None:
                continue
            sim, other = best
            if sim >= self.policy.near_duplicate_threshold:
                self._merge(d, other.id, sim, "near")
            else:
                d.action = Action.REVIEW
                d.target_id = other.id
                d.record = rec.model_copy(update={"status": MemoryStatus.PENDING,
                                                  "flags": list(dict.fromkeys([*rec.flags, Flag.DEDUP_REVIEW.value]))})
                d.details.update(dedup="review", similarity=round(sim, 4), target_id=other.id)
                d.note(f"possible duplicate (similarity {sim:.2f}) pending review")

    def _near_existing(self, unit: np.ndarray, scope: Scope) -> list[list[tuple[float, MemoryRecord]]]:
        """Top FAISS neighbours of each row of ``unit`` among the scope's live memories, above the review
        threshold."""
        out: list[list[tuple[float, MemoryRecord]]] = [[] for _ in range(len(unit))]
        _, allow = self.derived.allowed(scope, list(_DEDUP_STATUSES))
        if allow is not None and len(allow) == 0:
            return out
        found = self.derived.faiss.search_many(unit, 3, allow_ids=allow)
        hits = [[(int(n), float(s)) for n, s in zip(ids.tolist(), scores.tolist(), strict=False)
                 if s >= self.policy.review_threshold] for ids, scores in found]
        nids = sorted({n for h in hits for n, _ in h})
        by_nid = {r.nid: r for r in self.queries.records_by_nids(nids, scope)
                  if r.status.value in _DEDUP_STATUSES}
        for k, h in enumerate(hits):
            out[k] = [(s, by_nid[n]) for n, s in h if n in by_nid]
        return out

    @staticmethod
    def _merge(d: Decision, target: str, similarity: float, kind: str) -> None:
        d.action = Action.MERGE
        d.target_id = target
        d.memory_id = target
        d.details.update(dedup=kind, similarity=round(similarity, 4), target_id=target)
        d.reason = ("exact duplicate of an existing memory" if kind == "exact"
                    else f"near duplicate (similarity {similarity:.2f}) merged into an existing memory")
