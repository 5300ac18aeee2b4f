"""Named Cypher statements and small builders. Portable across FalkorDB and Neo4j; dialect-specific parts come
from :mod:`neusym.symbolic.dialects`. Every value arrives as a parameter: user text never becomes Cypher.
"""

from __future__ import annotations

from neusym.symbolic.convert import MEMORY_FIELDS

__all__ = [
    "AUDIT_APPEND",
    "APPLY_CHANGES",
    "AUDIT_FOR_MEMORY",
    "CHANGES_SINCE",
    "COUNTER_VALUE",
    "CREATE_MEMORIES",
    "DELETE_ORPHAN_ENTITIES",
    "GET_BY_IDS",
    "LINK",
    "PENDING_UNLINKS",
    "PURGE_DELETE",
    "PURGE_MARK",
    "RELINK",
    "RETURN_MEMORY",
    "SCOPE_FILTER",
    "SET_EXPIRY",
    "SET_PROPS",
    "TOMBSTONES_SINCE",
    "TOUCH",
    "UPDATE_PROPS",
    "UNFINISHED_PURGES",
    "UNFINISHED_RELINKS",
    "UNLINK_PENDING",
    "UPDATE_UNLINK",
    "memory_projection",
]


def memory_projection(var: str = "m") -> str:
    return ", ".join(f"{var}.{f} AS {f}" for f in MEMORY_FIELDS)


RETURN_MEMORY = memory_projection("m")

# A read scope: unset fields are wildcards. The facade refuses an all-wildcard read scope unless asked explicitly.
SCOPE_FILTER = (
    "($user_id IS NULL OR m.user_id = $user_id) "
    "AND ($agent_id IS NULL OR m.agent_id = $agent_id) "
    "AND ($session_id IS NULL OR m.session_id = $session_id)"
)

# The sequence counter is bumped in the same statement as the change it numbers, so the FAISS watermark can never
# run ahead of the graph, and processes sharing one graph agree on the order of changes.
_BUMP = (
    "MERGE (c:Counter {name: 'seq'}) ON CREATE SET c.value = 0 "
    "SET c.value = c.value + $n "
    "WITH c.value - $n AS base "
)
# Every statement that writes a memory's vector first checks, in the same statement, that the store is still
# embedded by the identity this process opened it with ($embedder: its JSON, or null for no check) and that no
# re-embed is under way: a process left behind by a re-embed elsewhere (another model, another width) writes
# nothing instead of mixing widths; the store then explains (SymbolicStore.refused_write).
# (Aggregated first: FalkorDB 4.16 folds a WHERE right after an OPTIONAL MATCH into the match, so "gx IS NULL OR
# gx.identity = $embedder" let every row through with gx nulled.)
EMBEDDER_GUARD = (
    "OPTIONAL MATCH (gx:NeuSymMeta {key: 'embedder'}) "
    "WITH collect(gx.identity) AS gx_ids, collect(gx.reembed_to) AS gx_runs "
    "WHERE $embedder IS NULL OR (size(gx_runs) = 0 AND (size(gx_ids) = 0 OR $embedder IN gx_ids)) "
)

# The same for a statement that deletes (and so may not MERGE): the counter exists from the first open (setup).
_BUMP_EXISTING = (
    "MATCH (c:Counter {name: 'seq'}) "
    "SET c.value = c.value + $n "
    "WITH c.value - $n AS base "
)

CREATE_MEMORIES = (
    EMBEDDER_GUARD
    + _BUMP
    + "UNWIND range(0, size($rows) - 1) AS i "
    "WITH base + i + 1 AS s, $rows[i] AS r, base "
    # r.vec is null unless the graph-side vector index is in use (neural_backend="neo4j_vector"): then the memory's
    # vector for that index is written by this same statement, so the index can never lag behind the graph.
    "CREATE (m:Memory) SET m = r.props, m.seq = s, m.nid = s, m.embedding = r.embedding, m.embedding_vec = r.vec "
    "FOREACH (ent IN r.entities | "
    "  MERGE (e:Entity {uid: ent.uid}) ON CREATE SET e.key = ent.key, e.name = ent.name, e.user_id = ent.ns "
    "  SET e.mentions = coalesce(e.mentions, 0) + 1 "
    "  MERGE (m)-[:MENTIONS]->(e)) "
    "FOREACH (t IN r.triples | "
    "  MERGE (a:Entity {uid: t.s_uid}) ON CREATE SET a.key = t.s_key, a.name = t.s_name, a.user_id = t.ns "
    "  MERGE (b:Entity {uid: t.o_uid}) ON CREATE SET b.key = t.o_key, b.name = t.o_name, b.user_id = t.ns "
    "  SET a.mentions = coalesce(a.mentions, 0) + 1, b.mentions = coalesce(b.mentions, 0) + 1 "
    "  MERGE (m)-[:MENTIONS]->(a) MERGE (m)-[:MENTIONS]->(b) "
    "  CREATE (a)-[:RELATES {predicate: t.predicate, polarity: t.polarity, confidence: t.confidence, "
    "    memory_id: m.id, valid_from: r.props.valid_from, created_at: r.props.created_at}]->(b)) "
    "WITH base, collect({id: m.id, nid: m.nid, seq: m.seq}) AS out "
    # supersessions planned by governance land in the same statement: a crash right after the create must not leave
    # two current values of one fact (the governor's after_write re-applies them idempotently, with the audit)
    "UNWIND CASE WHEN size($sets) = 0 THEN [null] ELSE $sets END AS st "
    "OPTIONAL MATCH (o:Memory {id: st.id}) WHERE coalesce(o.user_id, '') = coalesce(st.user_id, '') "
    "OPTIONAL MATCH (nw:Memory {id: st.by}) "
    "FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END | "
    "  SET o += st.props, o.seq = base + size($rows) + st.k + 1) "
    "FOREACH (_ IN CASE WHEN o IS NULL OR nw IS NULL THEN [] ELSE [1] END | "
    "  MERGE (nw)-[x:SUPERSEDES]->(o) SET x += st.edge) "
    # the facts the superseded memory stated end when it does (found through its mentions: no edge scan)
    "WITH out, o, st OPTIONAL MATCH (o)-[:MENTIONS]->(:Entity)-[fr:RELATES]->(:Entity) WHERE fr.memory_id = o.id "
    "FOREACH (_ IN CASE WHEN fr IS NULL THEN [] ELSE [1] END | SET fr.valid_to = st.valid_to) "
    "WITH out LIMIT 1 "
    "UNWIND CASE WHEN size($pairs) = 0 THEN [null] ELSE $pairs END AS p "
    "OPTIONAL MATCH (x:Memory {id: p[0]}) "
    "OPTIONAL MATCH (y:Memory {id: p[1]}) "
    "FOREACH (_ IN CASE WHEN x IS NULL OR y IS NULL THEN [] ELSE [1] END | MERGE (x)-[:NEXT]->(y)) "
    "WITH out LIMIT 1 "
    # the conversation chain: the session's previous turn is the memory marked as its tail (an indexed property,
    # found here, inside the write), so chaining survives restarts and is shared by every process on the graph.
    # The Counter bump at the top of this statement serialises concurrent creates on both backends, so two
    # processes alternating turns read each other's tail. More than one tail (a restore merged into a live
    # session) is tolerated: the newest is continued and every old mark cleared.
    "OPTIONAL MATCH (tl:Memory {chain_tail: $chain_key}) "
    "WHERE coalesce(tl.user_id, '') = coalesce($chain_user, '') "
    "WITH out, collect(tl) AS tails "
    "WITH out, tails, reduce(b = null, t IN tails | CASE WHEN b IS NULL OR t.nid > b.nid THEN t ELSE b END) AS prev "
    "FOREACH (t IN tails | SET t.chain_tail = null) "
    "WITH out, CASE WHEN prev IS NULL THEN [] ELSE [prev.id] END + $chain AS turns "
    "UNWIND CASE WHEN size(turns) < 2 THEN [null] ELSE range(0, size(turns) - 2) END AS ci "
    "OPTIONAL MATCH (ca:Memory {id: turns[ci]}) "
    "OPTIONAL MATCH (cb:Memory {id: turns[ci + 1]}) "
    "FOREACH (_ IN CASE WHEN ca IS NULL OR cb IS NULL THEN [] ELSE [1] END | MERGE (ca)-[:NEXT]->(cb)) "
    "WITH out, turns LIMIT 1 "
    "OPTIONAL MATCH (last:Memory {id: CASE WHEN size($chain) = 0 THEN null ELSE turns[size(turns) - 1] END}) "
    "FOREACH (_ IN CASE WHEN last IS NULL THEN [] ELSE [1] END | SET last.chain_tail = $chain_key) "
    "WITH out LIMIT 1 "
    # a reflection and its DERIVED_FROM links are one write: a crash never leaves a reflection without its sources
    "UNWIND CASE WHEN size($derived) = 0 THEN [null] ELSE $derived END AS l "
    "OPTIONAL MATCH (ra:Memory {id: l.src}) "
    "OPTIONAL MATCH (rb:Memory {id: l.dst}) WHERE coalesce(rb.user_id, '') = coalesce(ra.user_id, '') "
    "FOREACH (_ IN CASE WHEN ra IS NULL OR rb IS NULL THEN [] ELSE [1] END | "
    "  MERGE (ra)-[z:DERIVED_FROM]->(rb) SET z += l.props) "
    "WITH out LIMIT 1 "
    # the governance decisions about this batch are audited by the same write: one round trip (and one fsync) less
    # per add, and a memory never exists without the record of why it was admitted
    "FOREACH (au IN $audits | CREATE (a:Audit) SET a = au) "
    "RETURN out"
)

GET_BY_IDS = f"MATCH (m:Memory) WHERE m.id IN $ids AND {SCOPE_FILTER} RETURN {RETURN_MEMORY}"

# Property changes that matter to the derived indexes (content, status, scope, embedding) bump the sequence.
SET_PROPS = (
    _BUMP
    + "UNWIND range(0, size($rows) - 1) AS i "
    "WITH base + i + 1 AS s, $rows[i] AS r "
    f"MATCH (m:Memory {{id: r.id}}) WHERE {SCOPE_FILTER} "
    "SET m += r.props, m.seq = s "
    f"RETURN {RETURN_MEMORY}"
)

# An edit that changes what a memory says is TWO statements, because no statement may both delete and create (FalkorDB
# 4.16 reuses the ids of entities deleted earlier in the same statement for the ones it creates, and corrupts them).
# The first sets the new properties (seq, version, fact keys) and deletes the old text's MENTIONS and RELATES; the
# second creates the new text's entities, MENTIONS, RELATES and the audit entries. The first also leaves a
# ``relink`` mark (and the audit rows as JSON) on the memory, which the second clears: a crash in between leaves the
# new text without facts (never behind the old text's facts, after which a later fact superseded the wrong memory),
# and :meth:`SymbolicStore.recover` rebuilds them from the memory's own ``entity_names``/``triples_json``.
UPDATE_UNLINK = (
    EMBEDDER_GUARD
    + _BUMP_EXISTING
    + f"MATCH (m:Memory {{id: $id}}) WHERE {SCOPE_FILTER} "
    "SET m += $props, m.seq = base + 1, m.version = coalesce(m.version, 1) + 1, "
    "m.relink = $token, m.relink_at = $now, m.relink_audits = $audits_json "
    "WITH m OPTIONAL MATCH (m)-[x:MENTIONS]->() "
    "WITH m, collect(x) AS mentions FOREACH (x IN mentions | DELETE x) "
    "WITH m OPTIONAL MATCH ()-[y:RELATES {memory_id: m.id}]->() "
    "WITH m, collect(y) AS facts FOREACH (y IN facts | DELETE y) "
    f"WITH m RETURN {RETURN_MEMORY}"
)

# The second half of an edit (see UPDATE_UNLINK), exactly once whoever runs it (the writer, or recover() in another
# process while the writer is still between its statements): the relations only while the memory still carries
# this edit's mark, which the same statement clears (so a later edit's relations are never joined by this one's);
# the audit entries MERGEd on their ids (the writer and recover() write the same entries once).
RELINK = (
    "OPTIONAL MATCH (m:Memory {id: $id}) WHERE m.relink = $token "
    "FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | "
    "  SET m.relink = null, m.relink_at = null, m.relink_audits = null) "
    "FOREACH (ent IN CASE WHEN m IS NULL THEN [] ELSE $entities END | "
    "  MERGE (e:Entity {uid: ent.uid}) ON CREATE SET e.key = ent.key, e.name = ent.name, e.user_id = ent.ns "
    "  MERGE (m)-[:MENTIONS]->(e)) "
    "FOREACH (t IN CASE WHEN m IS NULL THEN [] ELSE $triples END | "
    "  MERGE (a:Entity {uid: t.s_uid}) ON CREATE SET a.key = t.s_key, a.name = t.s_name, a.user_id = t.ns "
    "  MERGE (b:Entity {uid: t.o_uid}) ON CREATE SET b.key = t.o_key, b.name = t.o_name, b.user_id = t.ns "
    "  MERGE (m)-[:MENTIONS]->(a) MERGE (m)-[:MENTIONS]->(b) "
    "  CREATE (a)-[:RELATES {predicate: t.predicate, polarity: t.polarity, confidence: t.confidence, "
    "    memory_id: m.id, valid_from: m.valid_from, created_at: m.created_at}]->(b)) "
    "FOREACH (au IN $audits | MERGE (ea:Audit {memory_id: au.memory_id, id: au.id}) ON CREATE SET ea = au) "
    "FOREACH (au IN $loose_audits | CREATE (la:Audit) SET la = au) "
    "RETURN m IS NOT NULL AS linked"
)

# Edits whose second half has not run (the process died in between, or is about to run it): the memories to relink
# from their own fields.
UNFINISHED_RELINKS = (
    "MATCH (m:Memory) WHERE m.relink_at < $before "
    f"RETURN m.relink AS token, m.relink_audits AS audits_json, {RETURN_MEMORY} LIMIT $limit"
)

# An edit that leaves text, entities and facts alone (status, flags, importance, ...), with its audit entries.
UPDATE_PROPS = (
    EMBEDDER_GUARD
    + _BUMP
    + f"MATCH (m:Memory {{id: $id}}) WHERE {SCOPE_FILTER} "
    "SET m += $props, m.seq = base + 1, m.version = coalesce(m.version, 1) + 1 "
    "FOREACH (au IN $audits | CREATE (ea:Audit) SET ea = au) "
    f"RETURN {RETURN_MEMORY}"
)

TOUCH = (
    "UNWIND $nids AS nid MATCH (m:Memory {nid: nid}) "
    "SET m.last_accessed_at = $now, m.access_count = coalesce(m.access_count, 0) + 1"
)

# A read-refreshed TTL (LangGraph's refresh_on_read): only the expiry moves, in one statement for a whole result
# list. No seq bump, no updated_at: the derived indexes hold no expiry (reads filter it in the graph), and a read
# is not an edit of the memory.
SET_EXPIRY = (
    "UNWIND $rows AS r "
    f"MATCH (m:Memory {{id: r.id}}) WHERE {SCOPE_FILTER} AND m.expires_at IS NOT NULL "
    "SET m.expires_at = r.expires_at "
    "RETURN count(m) AS n"
)

# A hard delete is TWO statements (no statement may both delete and create, see UPDATE_UNLINK). PURGE_MARK creates
# each memory's content-free tombstone and turns the memory into ``deleted`` (with a new seq), so from here on no read
# path, no derived index and no other process treats it as live, in ONE statement: the tombstone never exists beside
# a live memory, whose vector the catch-up would drop. PURGE_DELETE then removes the memories, their facts and
# edges; a crash in between leaves memories marked ``purge_at`` that :meth:`SymbolicStore.recover` (every open) and
# every later purge delete. (The mark, not the status: ``deleted`` is also a status an edit may set.)
PURGE_MARK = (
    _BUMP
    + "UNWIND range(0, size($ids) - 1) AS i "
    "WITH base, base + i + 1 AS s, $ids[i] AS mid "
    f"MATCH (m:Memory {{id: mid}}) WHERE {SCOPE_FILTER} AND m.purge_at IS NULL "
    "CREATE (:Tombstone {nid: m.nid, seq: s, user_id: m.user_id, at: $now, memory_id: m.id}) "
    "SET m.status = 'deleted', m.seq = s, m.purge_at = $now "
    "RETURN collect(m.id) AS ids, min(base) AS base"
)

# Deletes never create, and remove a node's labels before deleting it: FalkorDB 4.16 leaves a deleted node's entry
# in a label matrix that the graph outgrew (past 16,384 nodes) since it was last written; the node then stays
# matchable under its label with no properties ("Attempted to access undefined attribute") and the next node
# created on its recycled id shows up under that label too (an Audit:Memory). Removing the label first goes through
# the label update, which resizes the matrix.
PURGE_DELETE = (
    "UNWIND $ids AS mid "
    f"MATCH (m:Memory {{id: mid}}) WHERE m.purge_at > 0 AND {SCOPE_FILTER} "
    "OPTIONAL MATCH (:Entity)-[rel:RELATES {memory_id: m.id}]->(:Entity) "
    "WITH m, collect(DISTINCT rel) AS rels "
    "FOREACH (x IN rels | DELETE x) "
    "WITH m, m.id AS gone REMOVE m:Memory WITH m, gone DETACH DELETE m "
    "RETURN collect(gone) AS ids"
)

# Memories a purge marked but did not delete (the process died in between), any tenant.
UNFINISHED_PURGES = (
    "MATCH (m:Memory) WHERE m.purge_at > 0 "
    "RETURN m.id AS id, m.user_id AS user_id, m.agent_id AS agent_id, m.session_id AS session_id LIMIT $limit"
)

DELETE_ORPHAN_ENTITIES = (
    "MATCH (e:Entity) WHERE e.user_id IN $namespaces AND NOT (e)<-[:MENTIONS]-(:Memory) "
    "WITH e LIMIT $limit REMOVE e:Entity DETACH DELETE e RETURN count(*) AS n"
)

CHANGES_SINCE = (
    "MATCH (m:Memory) WHERE m.seq > $since AND m.seq <= $upto "
    "RETURN m.nid AS nid, m.id AS id, m.seq AS seq, m.content AS content, m.status AS status, "
    "m.user_id AS user_id, m.agent_id AS agent_id, m.session_id AS session_id, m.embedding AS embedding, "
    "m.type AS type, m.speaker AS speaker "
    "ORDER BY m.seq LIMIT $limit"
)

TOMBSTONES_SINCE = "MATCH (t:Tombstone) WHERE t.seq > $since AND t.seq <= $upto RETURN t.nid AS nid, t.seq AS seq"

COUNTER_VALUE = "MATCH (c:Counter {name: 'seq'}) RETURN c.value AS value"

LINK = (
    "UNWIND $rows AS r MATCH (a:Memory {id: r.src}) MATCH (b:Memory {id: r.dst}) "
    "WHERE a.user_id = b.user_id OR (a.user_id IS NULL AND b.user_id IS NULL) "
)

AUDIT_APPEND = (
    "UNWIND $rows AS r CREATE (a:Audit) SET a = r "
    "RETURN count(a) AS n"
)

# One memory's trail, on the caller's full scope: the memory itself must be in the scope; once it is gone (a hard
# delete), each entry's own scope ids must match.
AUDIT_FOR_MEMORY = (
    "OPTIONAL MATCH (m:Memory {id: $memory_id}) "
    "WITH m MATCH (a:Audit {memory_id: $memory_id}) WHERE a.user_id = $user_id AND CASE WHEN m IS NULL "
    "THEN ($agent_id IS NULL OR a.agent_id = $agent_id) AND ($session_id IS NULL OR a.session_id = $session_id) "
    f"ELSE {SCOPE_FILTER} END "
    "RETURN a.id AS id, a.memory_id AS memory_id, a.action AS action, a.reason AS reason, a.actor AS actor, "
    "a.at AS at, a.user_id AS user_id, a.details_json AS details_json "
    "ORDER BY a.at, a.ord"
)

# A review decision or a rollback: property changes inside the tenant (each bumps the write sequence), edges added
# between memories of one tenant, RELATES edges closed or reopened, the audit entries, and a ``PendingUnlink`` node
# naming the edges the decision removes, as ONE statement; the removal itself is a second statement (UNLINK_PENDING:
# no statement may both delete and create, see UPDATE_UNLINK), which also deletes the PendingUnlink. A crash in
# between leaves the node, and :meth:`SymbolicStore.recover` finishes the removal from it. Relationship types are
# literals (Cypher cannot parameterise them): one FOREACH per allowed type.
_CHANGE_LINK = (
    "FOREACH (_ IN CASE WHEN l.rel = '{rel}' AND la IS NOT NULL AND lb IS NOT NULL THEN [1] ELSE [] END | "
    "  MERGE (la)-[x:{rel}]->(lb) SET x += l.props) "
)
APPLY_CHANGES = (
    _BUMP
    + "UNWIND CASE WHEN size($sets) = 0 THEN [null] ELSE $sets END AS st "
    "OPTIONAL MATCH (m:Memory {id: st.id}) WHERE m.user_id = $user_id "
    "FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | SET m += st.props, m.seq = base + st.k + 1) "
    "WITH collect(m.id) AS changed "
    "UNWIND CASE WHEN size($links) = 0 THEN [null] ELSE $links END AS l "
    "OPTIONAL MATCH (la:Memory {id: l.src}) WHERE la.user_id = $user_id "
    "OPTIONAL MATCH (lb:Memory {id: l.dst}) WHERE lb.user_id = $user_id "
    + "".join(_CHANGE_LINK.format(rel=rel) for rel in ("SUPERSEDES", "CONFLICTS_WITH", "DUPLICATE_OF"))
    + "WITH changed LIMIT 1 "
    "UNWIND CASE WHEN size($close) = 0 THEN [null] ELSE $close END AS cl "
    "OPTIONAL MATCH (cm:Memory {id: cl.id})-[:MENTIONS]->(:Entity)-[cr:RELATES]->(:Entity) "
    "WHERE cr.memory_id = cl.id AND cm.user_id = $user_id "
    "FOREACH (_ IN CASE WHEN cr IS NULL THEN [] ELSE [1] END | SET cr.valid_to = cl.valid_to) "
    "WITH changed LIMIT 1 "
    "FOREACH (au IN $audits | CREATE (a:Audit) SET a = au) "
    "FOREACH (_ IN CASE WHEN size($unlinks) = 0 THEN [] ELSE [1] END | "
    "  CREATE (:PendingUnlink {token: $token, at: $now, user_id: $user_id, "
    "    src: [u IN $unlinks | u.src], rel: [u IN $unlinks | u.rel], dst: [u IN $unlinks | u.dst]})) "
    "RETURN changed"
)

# The removals of a decision (see APPLY_CHANGES), then its PendingUnlink; idempotent, so running it twice (the writer
# and a recovering process) changes nothing more.
UNLINK_PENDING = (
    "UNWIND CASE WHEN size($unlinks) = 0 THEN [null] ELSE $unlinks END AS u "
    "OPTIONAL MATCH (ua:Memory {id: u.src})-[ux]->(ub:Memory {id: u.dst}) "
    "WHERE type(ux) = u.rel AND ua.user_id = $user_id AND ub.user_id = $user_id "
    "WITH collect(DISTINCT ux) AS gone "
    "FOREACH (x IN gone | DELETE x) "
    "WITH size(gone) AS removed "
    "OPTIONAL MATCH (p:PendingUnlink {token: $token}) "
    "WITH removed, collect(p) AS done "
    "FOREACH (p IN done | REMOVE p:PendingUnlink DELETE p) "
    "RETURN removed"
)

PENDING_UNLINKS = (
    "MATCH (p:PendingUnlink) WHERE p.at < $before "
    "RETURN p.token AS token, p.user_id AS user_id, p.src AS src, p.rel AS rel, p.dst AS dst LIMIT $limit"
)
