"""The Cypher governance needs (conflicts, lifecycle, forgetting, review, audit redaction), in one place.

Kept beside :mod:`neusym.symbolic.store` rather than inside it so the governance statements can evolve without
touching the core store; like every statement in this package they are parameterised (user text never becomes
Cypher) and relationship types come from :data:`neusym.symbolic.store.RELATIONS`. Writes that the derived indexes
must see (status changes) go through :meth:`SymbolicStore.set_props`, which bumps the write sequence; writes they
need not see (strength decay, audit redaction) deliberately do not, so a janitor pass does not re-index every
memory it touches.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from neusym.record import MemoryRecord, Scope
from neusym.symbolic import cypher as q
from neusym.symbolic.convert import props_to_record
from neusym.symbolic.executors.base import Row
from neusym.symbolic.store import PURGE_CHUNK, SymbolicStore

__all__ = ["GovernanceQueries", "Words"]


@dataclass(frozen=True)
class Words:
    """What a memory says, without the rest of its record: enough to read text features of a pair before deciding
    whether the whole record is worth fetching (the update detector's neighbours)."""

    nid: int
    content: str
    speaker: str | None
    objects: tuple[str, ...]  # the objects of its triples

_LIFECYCLE_FIELDS = (
    "m.id AS id, m.nid AS nid, m.type AS type, m.status AS status, m.strength AS strength, "
    "m.importance AS importance, m.access_count AS access_count, m.last_accessed_at AS last_accessed_at, "
    "m.created_at AS created_at, m.decayed_at AS decayed_at, m.flags AS flags, m.expires_at AS expires_at, "
    "m.archived_at AS archived_at, m.user_id AS user_id, m.agent_id AS agent_id, m.session_id AS session_id"
)

FACTS_ABOUT = (
    "UNWIND $s_uids AS su "
    "MATCH (a:Entity {uid: su})-[r:RELATES]->(b:Entity) WHERE r.predicate IN $predicates "
    # WITH first: FalkorDB otherwise plans the Memory lookup as a hash join over an index scan of every memory in
    # the scope (O(store) per call: 0.3-0.4 s at 5k memories); after WITH it is one index seek per fact (~9 ms).
    "WITH su, r, b MATCH (m:Memory {id: r.memory_id}) "
    f"WHERE m.status IN $statuses AND NOT m.id IN $exclude AND {q.SCOPE_FILTER} "
    "OPTIONAL MATCH (b)-[k:RELATES {predicate: 'is_a'}]->(c:Entity) "
    "RETURN su AS s_uid, r.predicate AS predicate, b.uid AS o_uid, b.key AS o_key, b.name AS object, "
    "r.polarity AS polarity, m.id AS memory_id, m.status AS status, m.valid_from AS valid_from, "
    "m.created_at AS created_at, m.valid_to AS valid_to, m.source_origin AS origin, m.confidence AS confidence, "
    "m.flags AS flags, collect(DISTINCT c.key) AS kinds"
)

KINDS_OF = (
    "UNWIND $uids AS u MATCH (b:Entity {uid: u})-[k:RELATES {predicate: 'is_a'}]->(c:Entity) "
    "RETURN u AS uid, collect(DISTINCT c.key) AS kinds"
)

CLOSE_RELATIONS = "UNWIND $ids AS mid MATCH ()-[r:RELATES {memory_id: mid}]->() SET r.valid_to = $valid_to"

SET_STRENGTHS = (
    "UNWIND $rows AS r MATCH (m:Memory {id: r.id}) SET m.strength = r.strength, m.decayed_at = $now"
)

LIFECYCLE_PAGE = (
    f"MATCH (m:Memory) WHERE m.status IN $statuses AND m.nid > $after AND {q.SCOPE_FILTER} "
    f"RETURN {_LIFECYCLE_FIELDS} ORDER BY m.nid LIMIT $limit"
)

EXPIRED = (
    f"MATCH (m:Memory) WHERE m.status IN $statuses AND m.expires_at IS NOT NULL AND m.expires_at <= $now "
    f"AND {q.SCOPE_FILTER} RETURN {_LIFECYCLE_FIELDS} LIMIT $limit"
)

PURGEABLE = (
    "MATCH (m:Memory) WHERE "
    "(($archived_before IS NOT NULL AND m.status = 'archived' "
    "  AND coalesce(m.archived_at, m.updated_at, m.created_at) <= $archived_before) "
    " OR ($quarantined_before IS NOT NULL AND m.status = 'quarantined' "
    "  AND coalesce(m.updated_at, m.created_at) <= $quarantined_before)) "
    f"AND {q.SCOPE_FILTER} RETURN {_LIFECYCLE_FIELDS} LIMIT $limit"
)

IDS_BY_PREDICATES = (
    "MATCH (m:Memory)-[:MENTIONS]->(:Entity)-[r:RELATES]->(:Entity) "
    f"WHERE r.memory_id = m.id AND r.predicate IN $predicates AND m.status IN $statuses AND {q.SCOPE_FILTER} "
    "RETURN DISTINCT m.id AS id, r.predicate AS predicate LIMIT $limit"
)

IDS_BY_ENTITIES = (
    "MATCH (m:Memory)-[:MENTIONS]->(e:Entity) "
    f"WHERE e.uid IN $uids AND m.status IN $statuses AND {q.SCOPE_FILTER} "
    "RETURN m.id AS id, collect(DISTINCT e.name) AS names LIMIT $limit"
)

SCOPE_PAGE = (
    f"MATCH (m:Memory) WHERE {q.SCOPE_FILTER} AND m.nid > $after "
    "RETURN m.id AS id, m.nid AS nid, m.content AS content ORDER BY m.nid LIMIT $limit"
)

RECORDS_BY_NIDS = f"MATCH (m:Memory) WHERE m.nid IN $nids AND {q.SCOPE_FILTER} RETURN {q.RETURN_MEMORY}"

WORDS_BY_NIDS = (
    f"MATCH (m:Memory) WHERE m.nid IN $nids AND m.status IN $statuses AND {q.SCOPE_FILTER} "
    "RETURN m.nid AS nid, m.content AS content, m.speaker AS speaker, m.triples_json AS triples_json"
)

TENANT_EXISTS = "MATCH (m:Memory) WHERE m.user_id = $user_id RETURN m.id AS id LIMIT 1"

REVIEW_ITEMS = (
    f"MATCH (m:Memory) WHERE {q.SCOPE_FILTER} AND (m.status IN $statuses "
    "OR any(f IN coalesce(m.flags, []) WHERE f IN $flags)) "
    "OPTIONAL MATCH (m)-[c:CONFLICTS_WITH|DUPLICATE_OF]-(o:Memory) "
    f"WITH m, collect(DISTINCT {{id: o.id, rel: type(c), props: properties(c)}}) AS links "
    f"RETURN {q.RETURN_MEMORY}, links ORDER BY m.created_at DESC LIMIT $limit"
)

AUDIT_FOR_IDS = (
    "MATCH (a:Audit) WHERE a.memory_id IN $ids "
    "RETURN a.id AS id, a.memory_id AS memory_id, a.action AS action, a.reason AS reason, "
    "a.details_json AS details_json, a.user_id AS user_id"
)

AUDIT_FOR_TENANT = (
    "MATCH (a:Audit) WHERE a.user_id = $user_id "
    "RETURN a.id AS id, a.memory_id AS memory_id, a.action AS action, a.reason AS reason, "
    "a.details_json AS details_json"
)

# Found through the indexed memory_id (an Audit has no index on its own id: matching by id alone scanned every
# audit entry per row, seconds for a 1,000-memory purge); entries without a memory id by id.
REDACT_AUDIT = (
    "UNWIND $rows AS r MATCH (a:Audit {memory_id: r.memory_id}) WHERE a.id = r.id "
    "SET a.details_json = r.details_json, a.reason = r.reason, a.redacted = true"
)
REDACT_AUDIT_WITHOUT_MEMORY = (
    "UNWIND $rows AS r MATCH (a:Audit) WHERE a.memory_id IS NULL AND a.id = r.id "
    "SET a.details_json = r.details_json, a.reason = r.reason, a.redacted = true"
)

AUDIT_LOG = (
    "MATCH (a:Audit) WHERE ($user_id IS NULL OR a.user_id = $user_id) "
    "AND ($agent_id IS NULL OR a.agent_id = $agent_id) AND ($session_id IS NULL OR a.session_id = $session_id) "
    "AND ($actions IS NULL OR a.action IN $actions) AND ($since IS NULL OR a.at >= $since) "
    "RETURN a.id AS id, a.memory_id AS memory_id, a.action AS action, a.reason AS reason, a.actor AS actor, "
    "a.at AS at, a.user_id AS user_id, a.details_json AS details_json ORDER BY a.at DESC, a.ord DESC LIMIT $limit"
)

DELETE_TENANT_ENTITIES = (
    # labels go before the node (see cypher.PURGE_DELETE: FalkorDB 4.16 can keep a deleted node's label entry)
    "MATCH (e:Entity) WHERE e.user_id = $ns WITH e LIMIT $limit REMOVE e:Entity DETACH DELETE e RETURN count(*) AS n"
)


class GovernanceQueries:
    """Thin, typed wrappers over the statements above."""

    def __init__(self, store: SymbolicStore) -> None:
        self.store = store
        self.executor = store.executor

    def _read(self, stmt: str, params: Mapping[str, Any]) -> list[Row]:
        return self.executor.run(stmt, dict(params), write=False)

    # ------------------------------------------------------------------ conflicts
    def facts_about(self, subject_uids: Sequence[str], predicates: Sequence[str], statuses: Sequence[str],
                    scope: Scope, *, exclude: Sequence[str] = ()) -> list[Row]:
        if not subject_uids or not predicates:
            return []
        return self._read(FACTS_ABOUT, {"s_uids": list(dict.fromkeys(subject_uids)), "predicates": list(predicates),
                                        "statuses": list(statuses), "exclude": list(exclude), **scope.as_params()})

    def kinds_of(self, uids: Sequence[str]) -> dict[str, list[str]]:
        if not uids:
            return {}
        return {r["uid"]: list(r["kinds"] or []) for r in self._read(KINDS_OF, {"uids": list(dict.fromkeys(uids))})}

    def close_relations(self, memory_ids: Sequence[str], valid_to: float | None) -> None:
        """Stamp (or clear, with ``None``) ``valid_to`` on the RELATES edges a memory produced."""
        if memory_ids:
            self.executor.run(CLOSE_RELATIONS, {"ids": list(memory_ids), "valid_to": valid_to})

    # ------------------------------------------------------------------ lifecycle
    def set_strengths(self, rows: Sequence[tuple[str, float]], now: float) -> None:
        if rows:
            self.executor.run(SET_STRENGTHS, {"rows": [{"id": i, "strength": float(s)} for i, s in rows],
                                              "now": float(now)})

    def lifecycle_page(self, scope: Scope, statuses: Sequence[str], after: int, limit: int) -> list[Row]:
        return self._read(LIFECYCLE_PAGE, {"statuses": list(statuses), "after": int(after), "limit": int(limit),
                                           **scope.as_params()})

    def expired(self, scope: Scope, statuses: Sequence[str], now: float, limit: int) -> list[Row]:
        return self._read(EXPIRED, {"statuses": list(statuses), "now": float(now), "limit": int(limit),
                                    **scope.as_params()})

    def purgeable(self, scope: Scope, archived_before: float | None, quarantined_before: float | None,
                  limit: int) -> list[Row]:
        return self._read(PURGEABLE, {"archived_before": archived_before, "quarantined_before": quarantined_before,
                                      "limit": int(limit), **scope.as_params()})

    # ------------------------------------------------------------------ forgetting
    def ids_by_predicates(self, scope: Scope, predicates: Sequence[str], statuses: Sequence[str],
                          limit: int) -> list[Row]:
        if not predicates:
            return []
        return self._read(IDS_BY_PREDICATES, {"predicates": list(predicates), "statuses": list(statuses),
                                              "limit": int(limit), **scope.as_params()})

    def ids_by_entities(self, scope: Scope, uids: Sequence[str], statuses: Sequence[str], limit: int) -> list[Row]:
        if not uids:
            return []
        return self._read(IDS_BY_ENTITIES, {"uids": list(uids), "statuses": list(statuses), "limit": int(limit),
                                            **scope.as_params()})

    def scope_page(self, scope: Scope, after: int, limit: int) -> list[Row]:
        return self._read(SCOPE_PAGE, {"after": int(after), "limit": int(limit), **scope.as_params()})

    def records_by_nids(self, nids: Sequence[int], scope: Scope) -> list[MemoryRecord]:
        if not nids:
            return []
        rows = self._read(RECORDS_BY_NIDS, {"nids": [int(n) for n in nids], **scope.as_params()})
        return [props_to_record(r) for r in rows]

    def words_by_nids(self, nids: Sequence[int], scope: Scope, statuses: Sequence[str]) -> list[Words]:
        """The words of the memories with these FAISS ids and statuses: a light read (four fields, no record built)
        for the many neighbours a write looks at and mostly dismisses."""
        if not nids:
            return []
        rows = self._read(WORDS_BY_NIDS, {"nids": [int(n) for n in nids], "statuses": list(statuses),
                                          **scope.as_params()})
        return [Words(int(r["nid"]), str(r["content"]), r.get("speaker"),
                      tuple(str(t.get("object", "")) for t in json.loads(r.get("triples_json") or "[]")))
                for r in rows]

    def tenant_exists(self, user_id: str) -> bool:
        return bool(self._read(TENANT_EXISTS, {"user_id": user_id}))

    def delete_tenant_entities(self, namespace: str) -> int:
        total = 0
        while True:
            rows = self.executor.run(DELETE_TENANT_ENTITIES, {"ns": namespace, "limit": PURGE_CHUNK})
            n = int(rows[0]["n"]) if rows else 0
            total += n
            if n < PURGE_CHUNK:
                self.store.check_integrity()
                return total

    def rewrite_log(self) -> bool:
        """Best effort: ask FalkorDB to rewrite its append-only file, so the commands that created deleted content
        do not linger in the persistence log after a hard forget. A no-op on other backends."""
        forget = getattr(self.executor, "forget_persisted", None)
        if callable(forget):
            return bool(forget())
        conn = getattr(getattr(self.executor, "_db", None), "connection", None)
        if conn is None:
            return False
        try:
            conn.execute_command("BGREWRITEAOF")
            return True
        except Exception:  # noqa: BLE001 - e.g. a rewrite already running; the next one will cover this
            return False

    # ------------------------------------------------------------------ review
    def review_items(self, scope: Scope, statuses: Sequence[str], flags: Sequence[str], limit: int) -> list[Row]:
        return self._read(REVIEW_ITEMS, {"statuses": list(statuses), "flags": list(flags), "limit": int(limit),
                                         **scope.as_params()})

    # ------------------------------------------------------------------ audit
    def audit_rows(self, *, memory_ids: Sequence[str] | None = None, user_id: str | None = None) -> list[Row]:
        if memory_ids is not None:
            return self._read(AUDIT_FOR_IDS, {"ids": list(memory_ids)}) if memory_ids else []
        return self._read(AUDIT_FOR_TENANT, {"user_id": user_id})

    def redact_audit(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Overwrite ``details_json``/``reason`` of entries (``id``, ``memory_id`` as read by :meth:`audit_rows`)."""
        keyed = [dict(r) for r in rows if r.get("memory_id") is not None]
        loose = [dict(r) for r in rows if r.get("memory_id") is None]
        if keyed:
            self.executor.run(REDACT_AUDIT, {"rows": keyed})
        if loose:
            self.executor.run(REDACT_AUDIT_WITHOUT_MEMORY, {"rows": loose})

    def audit_log(self, scope: Scope, actions: Sequence[str] | None, since: float | None,
                  limit: int) -> list[Row]:
        """Recent entries whose own scope ids match ``scope`` (unset fields are wildcards)."""
        return self._read(AUDIT_LOG, {**scope.as_params(), "actions": list(actions) if actions else None,
                                      "since": since, "limit": int(limit)})
