"""Lifecycle: decay, TTL expiry, archiving and purging, run by a janitor (on demand, scheduled, or from the CLI).

Strength decays exponentially from the *last access* (or the last decay pass), with a per-type half-life that is
stretched by how often the memory was used and how important it is: a memory nobody reads fades, one the agent
keeps retrieving does not. Faded and expired memories are archived (kept for audit, invisible to default reads)
and purged for good after a retention period. Every step takes ``now`` so tests can move a simulated clock.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from neusym.governance.decisions import AuditAction, Flag
from neusym.governance.policy import GovernancePolicy
from neusym.record import Scope
from neusym.symbolic.governance_store import GovernanceQueries
from neusym.symbolic.store import SymbolicStore

__all__ = ["JanitorReport", "decayed_strength", "run_janitor"]

log = logging.getLogger(__name__)

_PAGE = 2000
_DAY = 86400.0


class JanitorReport(BaseModel):
    """What one janitor pass did (or, with ``dry_run``, would do)."""

    now: float
    dry_run: bool = False
    expired: list[str] = Field(default_factory=list)
    decayed: int = 0
    archived: list[str] = Field(default_factory=list)  # faded below the archive threshold
    purged: list[str] = Field(default_factory=list)
    compacted: int = 0  # dead BM25 postings dropped (+1 when FAISS was compacted)

    @property
    def changed(self) -> bool:
        return bool(self.expired or self.decayed or self.archived or self.purged)


def decayed_strength(row: dict[str, Any], policy: GovernancePolicy, now: float) -> float | None:
    """The strength a memory has at ``now``, or ``None`` if it does not decay (type without half-life, pinned)."""
    half_life = policy.half_life_seconds(str(row.get("type") or "observation"))
    if half_life is None or Flag.PINNED.value in (row.get("flags") or []):
        return None
    strength = float(row["strength"] if row.get("strength") is not None else 1.0)
    since = max(float(row.get(k) or 0.0) for k in ("decayed_at", "last_accessed_at", "created_at"))
    elapsed = now - since
    if elapsed <= 0:
        return strength
    accesses = int(row.get("access_count") or 0)
    importance = float(row["importance"] if row.get("importance") is not None else 0.5)
    effective = half_life * (1.0 + policy.frequency_boost * math.log1p(accesses)) \
        * (1.0 + policy.importance_boost * importance)
    return float(strength * 0.5 ** (elapsed / effective))


def _halvings(strength: float) -> int:
    """How many times a memory has halved; decay is audited once per halving, not on every pass."""
    return int(math.floor(-math.log2(strength) + 1e-6)) if strength > 0 else 64


def run_janitor(
    store: SymbolicStore,
    queries: GovernanceQueries,
    policy: GovernancePolicy,
    *,
    scope: Scope,
    now: float,
    purge: Callable[[list[str], Scope], list[str]],
    dry_run: bool = False,
    actor: str = "janitor",
) -> JanitorReport:
    """One pass: expire TTLs, decay strengths, archive the faded, purge what outlived its retention.

    ``purge`` is the hard-forget pipeline (graph, FAISS, BM25, caches, audit redaction); ``scope`` may be empty
    (every tenant) because the janitor is an operator task, not a tenant read.
    """
    report = JanitorReport(now=now, dry_run=dry_run)
    audits: list[dict[str, Any]] = []

    def archive(rows: list[dict[str, Any]], flag: str, reason: str) -> None:
        changes = [(str(r["id"]), {"status": "archived", "archived_at": now,
                                   "flags": list(dict.fromkeys([*(r.get("flags") or []), flag]))}) for r in rows]
        audits.extend({"memory_id": r["id"], "action": AuditAction.ARCHIVE.value, "reason": reason, "actor": actor,
                       "at": now, "user_id": r.get("user_id"),
                       "details": {"previous": {"status": r.get("status"), "flags": list(r.get("flags") or []),
                                                "valid_to": None}, "reason_code": flag}} for r in rows)
        if changes and not dry_run:
            store.set_props(changes, scope)

    # 1. TTL expiry
    while True:
        rows = queries.expired(scope, ["active", "pending", "superseded"], now, _PAGE)
        rows = [r for r in rows if r["id"] not in report.expired]
        if not rows:
            break
        report.expired.extend(str(r["id"]) for r in rows)
        archive(rows, Flag.EXPIRED.value, "expired (ttl)")
        if dry_run or len(rows) < _PAGE:
            break

    # 2. decay (+ archive the faded)
    after = 0
    while True:
        rows = queries.lifecycle_page(scope, ["active", "pending"], after, _PAGE)
        if not rows:
            break
        after = int(rows[-1]["nid"])
        updates: list[tuple[str, float]] = []
        faded: list[dict[str, Any]] = []
        for r in rows:
            if r["id"] in report.expired:
                continue
            new = decayed_strength(r, policy, now)
            if new is None:
                continue
            old = float(r["strength"] if r.get("strength") is not None else 1.0)
            updates.append((str(r["id"]), new))
            if new < old:
                report.decayed += 1
            if _halvings(new) > _halvings(old):
                audits.append({"memory_id": r["id"], "action": AuditAction.DECAY.value, "actor": actor, "at": now,
                               "reason": f"strength decayed to {new:.3f}", "user_id": r.get("user_id"),
                               "details": {"strength": round(new, 4), "previous": {"strength": old}}})
            if new < policy.archive_below:
                faded.append(r)
        if updates and not dry_run:
            queries.set_strengths(updates, now)
        if faded:
            report.archived.extend(str(r["id"]) for r in faded)
            archive(faded, Flag.FADED.value, f"faded below strength {policy.archive_below}")
        if len(rows) < _PAGE:
            break

    # 3. purge after retention
    archived_before = now - policy.archive_retention_days * _DAY if policy.archive_retention_days is not None \
        else None
    quarantined_before = now - policy.quarantine_retention_days * _DAY \
        if policy.quarantine_retention_days is not None else None
    if archived_before is not None or quarantined_before is not None:
        while True:
            rows = queries.purgeable(scope, archived_before, quarantined_before, _PAGE)
            rows = [r for r in rows if r["id"] not in report.purged]
            if not rows:
                break
            if dry_run:
                report.purged.extend(str(r["id"]) for r in rows)
                break
            by_tenant: dict[str | None, list[str]] = {}
            for r in rows:
                by_tenant.setdefault(r.get("user_id"), []).append(str(r["id"]))
            for user, ids in by_tenant.items():
                gone = purge(ids, Scope(user_id=user) if user else scope)
                report.purged.extend(gone)
                audits.extend({"memory_id": i, "action": AuditAction.PURGE.value, "actor": actor, "at": now,
                               "reason": "retention period over", "user_id": user, "details": {"hard": True}}
                              for i in gone)
            if len(rows) < _PAGE:
                break
    if audits and not dry_run:
        store.audit(audits)
    log.info("janitor: %d expired, %d decayed, %d archived, %d purged%s", len(report.expired), report.decayed,
             len(report.archived), len(report.purged), " (dry run)" if dry_run else "")
    return report
