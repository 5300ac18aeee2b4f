"""Admission control: the first verdict on each candidate (store, store as low-confidence, reject, quarantine).

Inputs are the extractor's confidence and intent signals, the memory type, and how far the source is trusted. The
verdict is a :class:`Decision` whose record already carries what storing means (flags, reduced weight, TTL, status),
so later steps (dedup, conflicts) and the graph create just follow it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from neusym.governance.decisions import Action, Decision, Flag
from neusym.governance.policy import GovernancePolicy
from neusym.governance.screening import Screener, ScreeningResult
from neusym.record import MemoryRecord, MemoryStatus, MemoryType, Scope, utcnow

__all__ = ["Admission", "intent_of"]

_NOT_ASSERTED = frozenset({"question", "hypothetical"})


def intent_of(record: MemoryRecord) -> set[str]:
    """The extractor's intent signals (``record.intent``; older records kept them in ``metadata["intent"]``)."""
    raw = list(getattr(record, "intent", None) or []) or record.metadata.get("intent") or []
    return {str(s) for s in raw} if isinstance(raw, list) else set()


def _add_flags(record: MemoryRecord, *flags: str) -> list[str]:
    return list(dict.fromkeys([*record.flags, *flags]))


class Admission:
    """Decides store / low-confidence / reject / quarantine for one candidate at a time."""

    def __init__(self, policy: GovernancePolicy, screener: Screener) -> None:
        self.policy = policy
        self.screener = screener

    def evaluate(self, cand: MemoryRecord, scope: Scope, *, edit: bool = False) -> Decision:
        """The verdict on one candidate. ``edit``: the candidate is a stored memory with new text (an update):
        screened exactly like a new memory (a text that would be quarantined on add is quarantined), but its
        confidence was weighed when it was first stored, so it is neither weighed again nor rejected."""
        screening = self.screener.screen(cand.content, origin=cand.source.origin, user_id=scope.user_id)
        if screening.quarantine:
            return self._quarantine(cand, screening)
        if edit:
            return self._edit(cand, screening)
        p = self.policy
        intent = intent_of(cand)
        trust = p.trust(cand.source.origin)
        effective = cand.confidence * trust
        updates: dict[str, object] = {}
        notes: list[str] = []
        flags = list(cand.flags)
        importance = cand.importance
        mtype = cand.type

        # A passing emotion is not a durable preference: retype it, cap its importance, give it the emotion TTL.
        if "transient_emotion" in intent and mtype in (MemoryType.PREFERENCE, MemoryType.OBSERVATION):
            mtype = MemoryType.EMOTION
            updates["type"] = mtype
            notes.append("passing emotion, not a durable preference")
        if mtype is MemoryType.EMOTION:
            importance = min(importance, p.emotion_importance)
        # An explicit instruction or "please remember" from the user is durable by intent, whatever the wording.
        explicit = mtype is MemoryType.INSTRUCTION or bool(intent & {"instruction", "explicit_remember"})
        if explicit and cand.source.origin in ("user", "system"):
            importance = max(importance, p.instruction_importance)
            effective = max(effective, p.store_threshold)
            notes.append("explicit instruction" if mtype is MemoryType.INSTRUCTION else "explicitly asked to remember")
        ttl = p.default_ttl_seconds.get(mtype.value)
        ingested = utcnow()
        if cand.expires_at is None and ttl:
            # The TTL runs from when the feeling was, but a memory about the past (a conversation dated last
            # year) would then be expired the moment it is stored and never found: its TTL counts from ingestion.
            base = cand.valid_from or cand.created_at
            expires_at = base + timedelta(seconds=ttl)
            if expires_at <= ingested:
                expires_at = ingested + timedelta(seconds=ttl)
                notes.append(f"default {mtype.value} ttl {ttl / 3600:g}h from ingestion (the event is in the past)")
            else:
                notes.append(f"default {mtype.value} ttl {ttl / 3600:g}h")
            updates["expires_at"] = expires_at
        expires = updates.get("expires_at", cand.expires_at)
        if isinstance(expires, datetime) and expires <= ingested:
            # Stored but invisible to every default read: say so instead of reporting a plain "admitted".
            notes.append("already expired at ingest: kept, but search will not return it (include_expired=True)")
        updates["confidence"] = round(min(max(effective, 0.0), 1.0), 4)
        details: dict[str, object] = {"type": mtype.value, "origin": cand.source.origin, "trust": trust,
                                      "confidence": updates["confidence"], "raw_confidence": cand.confidence}
        if screening.verdict == "borderline":
            flags.append(Flag.SUSPICIOUS.value)
            details.update(risk=screening.risk, signals=[s.name for s in screening.signals],
                           judged_by=screening.judged_by)
            notes.append(f"borderline injection risk {screening.risk:.2f}, listed for review (withheld from search "
                         "until approved)")

        if effective >= p.store_threshold:
            action, head = Action.STORE, "admitted"
        elif effective >= p.low_confidence_threshold:
            action, head = Action.STORE_LOW_CONFIDENCE, f"low confidence {effective:.2f} (stored at reduced weight)"
            flags.append(Flag.LOW_CONFIDENCE.value)
            importance *= p.low_confidence_weight
            updates["strength"] = cand.strength * p.low_confidence_weight
        else:
            why = "not asserted (question/hypothetical)" if intent & _NOT_ASSERTED else f"source {cand.source.origin}"
            return Decision(action=Action.REJECT, record=cand, memory_id=None, details=details,
                            reason=f"rejected: confidence {effective:.2f} below {p.low_confidence_threshold} ({why})")
        updates.update(importance=importance, flags=list(dict.fromkeys(flags)))
        record = cand.model_copy(update=updates)
        reason = "; ".join([head, *notes])
        return Decision(action=action, reason=reason, record=record, memory_id=record.id, details=details)

    @staticmethod
    def _edit(cand: MemoryRecord, screening: ScreeningResult) -> Decision:
        """An edit that screening lets through. Its status stays what it was (an edit never releases a memory from
        quarantine or review: only a reviewer does); a borderline text is flagged for review like a new one; a
        memory still in quarantine keeps no graph facts."""
        updates: dict[str, object] = {}
        details: dict[str, object] = {"origin": cand.source.origin, "edit": True}
        reason = "edit admitted"
        if screening.verdict == "borderline":
            updates["flags"] = _add_flags(cand, Flag.SUSPICIOUS.value)
            details.update(risk=screening.risk, signals=[s.name for s in screening.signals],
                           judged_by=screening.judged_by)
            reason += (f"; borderline injection risk {screening.risk:.2f}, listed for review (withheld from search "
                       "until approved)")
        if cand.status is MemoryStatus.QUARANTINED:
            updates.update(entities=[], triples=[])
            reason += "; still quarantined (only a reviewer releases it)"
        record = cand.model_copy(update=updates) if updates else cand
        return Decision(action=Action.STORE, reason=reason, record=record, memory_id=record.id, details=details)

    def _quarantine(self, cand: MemoryRecord, screening: ScreeningResult) -> Decision:
        """Quarantined text is kept for review but stripped of entities and triples: its claims must not reach the
        graph, where conflict detection and graph expansion would act on them before anyone looked."""
        names = [s.name for s in screening.signals]
        record = cand.model_copy(update={
            "status": MemoryStatus.QUARANTINED,
            "flags": _add_flags(cand, Flag.INJECTION.value),
            "entities": [],
            "triples": [],
            "metadata": {**cand.metadata, "screening": {
                "risk": screening.risk, "signals": names, "judged_by": screening.judged_by,
                "evidence": [s.evidence for s in screening.signals]}},
        })
        return Decision(action=Action.QUARANTINE, record=record, memory_id=record.id,
                        reason=f"quarantined: {screening.reason}",
                        details={"risk": screening.risk, "signals": names, "judged_by": screening.judged_by,
                                 "origin": cand.source.origin})
