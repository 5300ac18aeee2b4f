"""The bookkeeping of a staged restore: its labels, and the statements that remove what a restore staged.

A restore (:mod:`neusym.symbolic.transfer`) first writes its items under labels no read path matches and makes them
live in one statement; the staged copies are garbage from then on, and so is everything a killed restore left. They
are invisible, but they hold content (text, vectors, audit details), so they are removed:

* right after a commit, and by an abort (:func:`abort_staged`);
* on every open and by the janitor (:func:`sweep_stale`: a committed run's copies at once, a run still staging
  once its heartbeat is ``older_than`` seconds old);
* by a forget: ``forget_tenant`` and a hard forget remove every run that staged something of the tenant or of the
  forgotten ids (:func:`forget_staged`), so a right-to-be-forgotten request leaves no staged copy behind.

Kept apart from :mod:`~neusym.symbolic.transfer` so the store's recovery on open can sweep without importing the
restore machinery. Deletes remove a node's labels first (see :data:`neusym.symbolic.cypher.PURGE_DELETE`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from neusym.symbolic.executors.base import Executor

__all__ = [
    "RESTORE_RUN",
    "STAGED_AUDIT",
    "STAGED_ENTITY",
    "STAGED_LABELS",
    "STAGED_LINK",
    "STAGED_MEMORY",
    "abort_staged",
    "forget_staged",
    "sweep_stale",
]

log = logging.getLogger(__name__)

STAGED_MEMORY = "RestoreMemory"
STAGED_ENTITY = "RestoreEntity"
STAGED_AUDIT = "RestoreAudit"
STAGED_LINK = "RestoreLink"
RESTORE_RUN = "RestoreRun"
STAGED_LABELS = (STAGED_MEMORY, STAGED_ENTITY, STAGED_AUDIT, STAGED_LINK)

_ABORT = (
    *(f"MATCH (n:{label} {{restore_id: $rid}}) WITH n LIMIT $limit REMOVE n:{label} DETACH DELETE n "
      "RETURN count(*) AS n" for label in STAGED_LABELS),
    f"MATCH (n:{RESTORE_RUN} {{id: $rid}}) WITH n LIMIT $limit REMOVE n:{RESTORE_RUN} DELETE n RETURN count(*) AS n",
)
STALE_RUNS = (f"MATCH (r:{RESTORE_RUN}) WHERE r.heartbeat < $before OR r.committed_at IS NOT NULL "
              "RETURN r.id AS id")
STAGED_RUN_IDS = tuple(f"MATCH (n:{label}) RETURN DISTINCT n.restore_id AS id" for label in STAGED_LABELS)
LIVE_RUNS = f"MATCH (r:{RESTORE_RUN}) RETURN r.id AS id"
# the runs that staged something of a tenant (memories, entities of its namespace, audit entries) or of given ids
RUNS_OF_TENANT = tuple(
    f"MATCH (n:{label}) WHERE n.user_id = $user_id RETURN DISTINCT n.restore_id AS id"
    for label in (STAGED_MEMORY, STAGED_ENTITY, STAGED_AUDIT)
)
RUNS_OF_IDS = (
    f"MATCH (n:{STAGED_MEMORY}) WHERE n.id IN $ids RETURN DISTINCT n.restore_id AS id",
    f"MATCH (n:{STAGED_AUDIT}) WHERE n.memory_id IN $ids RETURN DISTINCT n.restore_id AS id",
    f"MATCH (n:{STAGED_LINK}) WHERE n.restore_src IN $ids OR n.restore_dst IN $ids "
    "RETURN DISTINCT n.restore_id AS id",
)


def _count(rows: list[dict[str, Any]]) -> int:
    return int(rows[0]["n"]) if rows else 0


def abort_staged(executor: Executor, restore_id: str, *, batch: int = 10_000) -> int:
    """Delete the staged nodes of one restore, then its run (never anything live); returns how many were deleted.
    Idempotent: a concurrent sweep of the same run deletes nothing twice."""
    deleted = 0
    for stmt in _ABORT:
        while True:
            n = _count(executor.run(stmt, {"rid": restore_id, "limit": batch}))
            deleted += n
            if n < batch:
                break
    return deleted


def sweep_stale(executor: Executor, *, older_than: float = 3600.0) -> int:
    """Remove what restores left staged: a committed run's copies (its cleanup did not finish), a run silent for
    ``older_than`` seconds (a restore refreshes its heartbeat after every batch: this one died), and staged items
    whose run marker is gone (an abort interrupted after deleting it). Returns how many restores were swept."""
    before = time.time() - float(older_than)
    run = executor.run
    ids = {str(r["id"]) for r in run(STALE_RUNS, {"before": before}, write=False)}
    live = {str(r["id"]) for r in run(LIVE_RUNS, write=False)}
    for stmt in STAGED_RUN_IDS:
        ids.update(str(r["id"]) for r in run(stmt, write=False) if r.get("id") and str(r["id"]) not in live)
    for rid in sorted(ids):
        log.warning("removing the staged items of an interrupted restore %s", rid)
        abort_staged(executor, rid)
    return len(ids)


def forget_staged(executor: Executor, *, user_id: str | None = None, memory_ids: Sequence[str] = ()) -> int:
    """Remove every restore run that staged something of ``user_id`` or of ``memory_ids`` (a forget must reach the
    staged copies too). A restore still running then fails at its commit (its staged counts no longer match) and
    restores nothing. Returns how many runs were removed."""
    runs: set[str] = set()
    if user_id is not None:
        for stmt in RUNS_OF_TENANT:
            runs.update(str(r["id"]) for r in executor.run(stmt, {"user_id": user_id}, write=False) if r.get("id"))
    if memory_ids:
        for stmt in RUNS_OF_IDS:
            runs.update(str(r["id"]) for r in executor.run(stmt, {"ids": list(memory_ids)}, write=False)
                        if r.get("id"))
    for rid in sorted(runs):
        log.info("removing restore %s: it staged memories being forgotten", rid)
        abort_staged(executor, rid)
    return len(runs)
