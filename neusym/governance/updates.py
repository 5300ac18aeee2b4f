"""Update detection that does not depend on extraction alone: a new memory compared with its nearest older ones.

Rule extraction turns "I live in Austin" into ``lives_in(user, Austin)`` but misses most ways people say that the
value changed ("so, the relocation went fine. Denver is home now."). So every new memory is also compared with its
nearest older memories of the same tenant (one FAISS search per batch, plus earlier candidates of the same batch),
and a small pair model (:mod:`neusym.governance.update_model`) reads whether the two say *the same attribute of the
same subject with another value*: vector similarity (and how much the old one stands out among the neighbours), the
attribute slot both sit in, change / ending / correction cues of a multilingual lexicon, word overlap. Rules keep what is not a matter of degree: a
question states no value, a statement framed as the past ("used to", "back then") replaces nothing and is never
replaced (issue 18), two speakers are two people, a reflection restates its sources.

When the model says *update*, the new memory supersedes the old one if the slot holds one value at a time (one
home, one employer) or if it ends or corrects the old value by name ("left Tesco", "not piano, ukulele"); otherwise
(a second pet, another hobby) it is held for review. An update from a channel the policy trusts less than
``update_min_trust`` (an agent's own inference, a document) is held for review too. Every decision keeps its
probability, slot, similarities, the features that weighed most and its reason in the audit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from neusym.governance.decisions import Action, Decision, Flag
from neusym.governance.update_lexicon import CHANGE
from neusym.governance.update_model import (
    BACKGROUND,
    FEATURES,
    SLOTS,
    PairModel,
    Slot,
    content_words,
    pair_features,
    past_framed,
    same_subject,
    subject_of,
)
from neusym.record import MemoryRecord, MemoryStatus, MemoryType, Scope, as_epoch, from_epoch
from neusym.retrieval.derived import DerivedIndexes
from neusym.symbolic.governance_store import GovernanceQueries

__all__ = ["ATTRIBUTES", "Slot", "UpdateDetector", "change_cue", "past_framed"]

Embed = Callable[[list[str]], np.ndarray]
ATTRIBUTES = SLOTS  # the name earlier versions exported


def change_cue(text: str) -> bool:
    """True if the text signals that something changed ("now", "anymore", "new", "switched", "ya no", "désormais")."""
    from neusym.governance.update_lexicon import cue_positions

    return bool(cue_positions(text, CHANGE))


def _unit(m: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(m, axis=-1, keepdims=True)
    return np.asarray(m / np.where(n > 0, n, 1.0), dtype=np.float32)


_LO = {"cos": -1.0, "cos_margin": -2.0}
_PRODUCTS = {"single_change": "single", "slot_change": "slot_same", "slot_value": "slot_same",
             "agree_change": "slot_agree"}


def _range(name: str, known: dict[str, float]) -> tuple[float, float]:
    """The range a feature not yet computed can take (products scale with their known factor), for the score bound
    that prunes pairs before any work."""
    if name in _PRODUCTS and _PRODUCTS[name] in known:
        k = known[_PRODUCTS[name]]
        return (min(0.0, k), max(0.0, k))
    return (_LO.get(name, 0.0), 1.0)


@dataclass
class _Verdict:
    old: MemoryRecord
    similarity: float
    probability: float
    slot: Slot
    slot_score: float
    retracts: bool
    cue: bool
    why: list[str]
    batch: Decision | None = None  # the older memory is an earlier candidate of the same batch


class UpdateDetector:
    """Plans supersessions (or review flags) for candidate updates the extracted triples did not reveal.

    The pair model's weights and threshold are fitted by ``python -m benchmarks.governance.fit_updates`` on the
    governance benchmark's train split and LoCoMo dev conversations, where two memories of one speaker about one
    slot are common and false supersessions must stay near zero (``python -m benchmarks.governance.locomo_check``).
    Cost: one FAISS search per batch, and a pair is read from the graph only if its vector features could still
    reach the threshold (:meth:`_bound`).
    """

    neighbours = 6
    pair_floor = 0.15  # nearest older memories considered at all (the model weighs the similarity)

    def __init__(self, derived: DerivedIndexes, queries: GovernanceQueries, embed: Embed | None,
                 *, min_trust: Callable[[str], bool] | None = None, model: PairModel | None = None) -> None:
        self.derived = derived
        self.queries = queries
        self.embed = embed
        self.model = model or PairModel()
        self.trusted = min_trust or (lambda origin: True)
        self._slots: np.ndarray | None = None
        self._owner: np.ndarray | None = None

    # ------------------------------------------------------------------ vectors
    def slot_matrix(self) -> np.ndarray | None:
        """Unit vectors of every slot description (all languages) followed by the background texts."""
        if self._slots is None and self.embed is not None:
            texts = [d for s in SLOTS for d in s.descriptions] + list(BACKGROUND)
            self._owner = np.asarray([k for k, s in enumerate(SLOTS) for _ in s.descriptions], dtype=np.int64)
            self._slots = _unit(np.asarray(self.embed(texts), dtype=np.float32))
        return self._slots

    def scores(self, unit: np.ndarray) -> np.ndarray:
        """Per-slot scores (best description of each slot) followed by the background scores, one row per vector."""
        m = self.slot_matrix()
        assert m is not None and self._owner is not None
        raw = np.asarray(unit, dtype=np.float32) @ m.T
        n_desc = len(self._owner)
        per_slot = np.full((raw.shape[0], len(SLOTS)), -1.0, dtype=np.float32)
        np.maximum.at(per_slot.T, self._owner, raw[:, :n_desc].T)
        return np.hstack([per_slot, raw[:, n_desc:]])

    def _bound(self, known: dict[str, float]) -> float:
        """The highest probability the pair can reach given the features already known (the others at their most
        favourable value in their range): an exact test for skipping work, never an approximation of the model."""
        m = self.model
        z = m.bias
        for i, name in enumerate(FEATURES):
            w, mu, sc = m.weights[i], m.mean[i], m.scale[i]
            if name in known:
                z += w * (known[name] - mu) / sc
            else:
                lo, hi = _range(name, known)
                z += max(w * (lo - mu) / sc, w * (hi - mu) / sc)
        return 1.0 / (1.0 + float(np.exp(-max(-30.0, min(30.0, z)))))

    def _vector_bound(self, s_new: np.ndarray, s_old: np.ndarray, sim: float) -> float:
        n = len(SLOTS)
        joint = np.minimum(s_new[:n], s_old[:n])
        a = int(np.argmax(joint))
        bg_new, bg_old = float(s_new[n:].max()), float(s_old[n:].max())
        return self._bound({"cos": sim, "slot_same": float(joint[a]),
                            "slot_agree": float(int(np.argmax(s_new[:n])) == int(np.argmax(s_old[:n]))),
                            "filler": max(bg_new, bg_old) - float(joint[a]),
                            "slot_margin": min(float(s_new[a]) - bg_new, float(s_old[a]) - bg_old),
                            "single": 1.0 if SLOTS[a].single else 0.0})

    # ------------------------------------------------------------------ the write path
    def apply(self, decisions: Sequence[Decision], vectors: np.ndarray, scope: Scope) -> None:
        live = [i for i, d in enumerate(decisions) if self._eligible(d)]
        if not live or self.embed is None:
            return
        slots = self.slot_matrix()
        if slots is None or slots.shape[1] != vectors.shape[1]:
            return
        unit = _unit(np.asarray(vectors, dtype=np.float32)[live])
        scores = self.scores(unit)
        olds, near = self._neighbours(unit, scores, scope)
        sims = unit @ unit.T  # in-batch: each candidate looks at its few closest earlier candidates
        for pos, i in enumerate(live):
            d = decisions[i]
            cands: list[tuple[float, MemoryRecord, np.ndarray, Decision | None]] = [
                (s, r, v, None) for s, r, v in olds[pos]]
            seen = list(near[pos])  # similarities of every neighbour found, before any pruning
            if pos:
                row = sims[pos, :pos]
                close = np.flatnonzero(row >= self.pair_floor)
                for j in close[np.argsort(-row[close])][: self.neighbours].tolist():
                    seen.append(float(row[j]))
                    other = decisions[live[j]]
                    if (other.record.status is not MemoryStatus.SUPERSEDED
                            and self._vector_bound(scores[pos], scores[j], float(row[j])) >= self.model.threshold):
                        cands.append((float(row[j]), other.record, scores[j], other))
            if past_framed(d.record.content):
                if cands:
                    d.details["update_check"] = "describes the past: replaces nothing"
                continue
            best: _Verdict | None = None
            for sim, old, s_old, od in cands:
                others = list(seen)
                others.remove(sim)
                v = self._judge(d.record, scores[pos], old, s_old, sim, others)
                if v is not None:
                    v.batch = od
                if v is not None and (best is None or (v.retracts, v.probability, v.similarity)
                                      > (best.retracts, best.probability, best.similarity)):
                    best = v
            if best is not None:
                self._decide(d, best)

    @staticmethod
    def _eligible(d: Decision) -> bool:
        if d.action not in (Action.STORE, Action.STORE_LOW_CONFIDENCE, Action.REVIEW):
            return False
        if d.record.status in (MemoryStatus.QUARANTINED, MemoryStatus.SUPERSEDED):
            return False
        if d.record.type is MemoryType.REFLECTION:
            return False  # a summary restates its sources (an ended preference among them); it updates nothing
        if d.action is Action.REVIEW and d.details.get("dedup") != "review":
            return False  # already waiting for a reviewer for another reason
        return not (d.supersedes or d.superseded_by or d.conflicts_with or d.contradicts)

    def _neighbours(self, unit: np.ndarray, scores: np.ndarray, scope: Scope
                    ) -> tuple[list[list[tuple[float, MemoryRecord, np.ndarray]]], list[list[float]]]:
        """Stored neighbours of each candidate whose vector features can still reach the threshold, and the
        similarities of all neighbours found (the model asks how much one stands out among them)."""
        out: list[list[tuple[float, MemoryRecord, np.ndarray]]] = [[] for _ in range(len(unit))]
        near: list[list[float]] = [[] for _ in range(len(unit))]
        tenant = Scope(user_id=scope.user_id) if scope.user_id else scope
        _, allow = self.derived.allowed(tenant, ["active", "pending"])
        if allow is not None and len(allow) == 0:
            return out, near
        found = self.derived.faiss.search_many(unit, self.neighbours, allow_ids=allow)
        hits = [[(int(n), float(s)) for n, s in zip(ids.tolist(), scores_.tolist(), strict=False)
                 if s >= self.pair_floor and n >= 0] for ids, scores_ in found]
        near = [[s for _, s in h] for h in hits]
        nids = sorted({n for h in hits for n, _ in h})
        if not nids:
            return out, near
        nb = dict(zip(nids, self.scores(_unit(self.derived.faiss.reconstruct(nids))), strict=True))
        t = self.model.threshold
        hits = [[(n, s) for n, s in h if self._vector_bound(scores[k], nb[n], s) >= t] for k, h in enumerate(hits)]
        wanted = sorted({n for h in hits for n, _ in h})
        if not wanted:
            return out, near
        by_nid = {r.nid: r for r in self.queries.records_by_nids(wanted, tenant)
                  if r.status.value in ("active", "pending")}
        for k, h in enumerate(hits):
            out[k] = [(s, by_nid[n], nb[n]) for n, s in h if n in by_nid]
        return out, near

    @staticmethod
    def pair_gate(new: MemoryRecord, old: MemoryRecord) -> tuple[bool, bool] | None:
        """The rules before the model: ``None`` if ``new`` cannot update ``old`` whatever their similarity, else
        ``(third_person, via_role)`` for the model."""
        if old.type is MemoryType.REFLECTION or old.id == new.id:
            return None  # a summary holds no value of its own to replace: its sources do
        if past_framed(old.content) or past_framed(new.content):
            return None
        if "?" in new.content or "?" in old.content:
            return None  # a question states no value
        if new.created_at == old.created_at and {new.source.origin, old.source.origin} == {"agent", "user"}:
            return None  # one exchange: the assistant's reply restates or answers the user, it updates nothing
        t_new = as_epoch(new.valid_from or new.created_at) or 0.0
        t_old = as_epoch(old.valid_from or old.created_at) or 0.0
        if old.valid_from is not None and t_new < t_old and abs(
                (as_epoch(old.valid_from) or 0.0) - (as_epoch(old.created_at) or 0.0)) > 1.0:
            return None  # an older state told later: the rule path stores dated history
        if not (content_words(new.content) - content_words(old.content)):
            return None  # nothing new
        same, third, via_role = same_subject(new, old, subject_of(new), subject_of(old))
        return (third, via_role) if same else None

    def _judge(self, new: MemoryRecord, s_new: np.ndarray, old: MemoryRecord, s_old: np.ndarray,
               sim: float, others: Sequence[float] = ()) -> _Verdict | None:
        gate = self.pair_gate(new, old)
        if gate is None:
            return None
        third, via_role = gate
        m = self.model
        x = pair_features(new, old, sim, s_new, s_old, third=third, via_role=via_role, others=others)
        p = m.probability(x)
        if p < m.threshold:
            return None
        n = len(SLOTS)
        joint = np.minimum(s_new[:n], s_old[:n])
        a = int(np.argmax(joint))
        retracts = bool(x[FEATURES.index("ending")])
        return _Verdict(old, sim, p, SLOTS[a], float(joint[a]), retracts,
                        bool(x[FEATURES.index("change")]), m.explain(x))

    def _decide(self, d: Decision, v: _Verdict) -> None:
        rec, old = d.record, v.old
        entry: dict[str, object] = {
            "id": old.id, "predicate": f"slot:{v.slot.name}", "kind": "update_candidate",
            "strategy": "pair_model", "similarity": round(v.similarity, 3),
            "probability": round(v.probability, 3), "slot_score": round(v.slot_score, 3),
            "single_valued": v.slot.single, "retracts_old_value": v.retracts, "change_cue": v.cue,
            "features": v.why,
            "previous": {"status": old.status.value, "flags": list(old.flags), "valid_to": as_epoch(old.valid_to)}}
        trusted = self.trusted(rec.source.origin) or bool(d.details.get("restates_user"))
        if trusted and (v.retracts or v.slot.single):
            why = "ends or corrects the old value" if v.retracts else f"single-valued slot {v.slot.name}"
            if rec.source.origin not in ("user", "system"):
                why += (" (an agent turn restating the user)" if d.details.get("restates_user")
                        else f" (a trusted {rec.source.origin} record)")
            entry["why"] = why
            t_new = as_epoch(rec.valid_from or rec.created_at) or 0.0
            entry["valid_to"] = t_new
            d.supersedes.append(old.id)
            d.add_detail("supersede", entry)
            if d.details.get("dedup") == "review":  # the near-duplicate was a new value after all
                d.action = Action.STORE
                d.target_id = None
                d.details.pop("dedup", None)
                rec = rec.model_copy(update={"status": MemoryStatus.ACTIVE,
                                             "flags": [f for f in rec.flags if f != Flag.DEDUP_REVIEW.value]})
                d.record = rec
            d.note(f"candidate update ({why}, p={v.probability:.2f}, similarity {v.similarity:.2f}): supersedes "
                   "an older memory")
            if v.batch is not None:  # an earlier candidate of this batch: it is created as history directly
                v.batch.record = mark_superseded(v.batch.record, t_new)
            return
        entry["why"] = ("multi-valued slot" if trusted else f"less trusted origin {rec.source.origin}")
        entry["mark_other"] = False
        d.hold_for_conflict(old.id, entry, f"possible update of an older memory ({entry['why']}, "
                                           f"p={v.probability:.2f}): pending review")


def mark_superseded(record: MemoryRecord, valid_to: float) -> MemoryRecord:
    """An earlier candidate of the same batch that a later one replaces: stored as history directly."""
    return record.model_copy(update={"status": MemoryStatus.SUPERSEDED, "valid_to": from_epoch(valid_to)})
