"""The symbolic-store contract, run against BOTH executors (``backend`` = falkordb | neo4j, see conftest.py).

The first half drives :class:`SymbolicStore` directly (what the Cypher does to the graph); the second half drives
:class:`NeuSymMemory` on the same backend (what users see: stage-2 search, symbolic queries, catch-up). Any test
that passes on one backend and fails on the other is a dialect bug in ``neusym/symbolic``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from neusym import MemoryType, NeuSymMemory, RecordNotFoundError, Scope, ScopeError, UnsafeQueryError
from neusym.errors import BackendError, GraphIntegrityError, InvalidInputError
from neusym.record import MemoryRecord, MemoryStatus, Triple
from neusym.retrieval.derived import DerivedIndexes
from neusym.retrieval.recipes import HYBRID_GRAPH
from neusym.symbolic.convert import decode_embedding, entity_uid, record_to_props
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.store import SymbolicStore

DIM = 8
U = Scope(user_id="u")
V = Scope(user_id="v")
JAN = datetime(2024, 1, 15, tzinfo=UTC)
MAR = datetime(2024, 3, 10, tzinfo=UTC)
JUN = datetime(2024, 6, 1, tzinfo=UTC)
SEP = datetime(2024, 9, 1, tzinfo=UTC)

TRICKY = [
    "ünïcödé — 日本語のテキスト — עברית — 🙂🚀👩‍👩‍👧",
    "e\u0301 combining, zero\u200bwidth, nbsp\u00a0here",
    "it's \"quoted\" `backticked` \\backslash\\ \\n not-a-newline",
    "line1\nline2\r\n\ttabbed",
    "'}) MATCH (n) DETACH DELETE n //",
    "\") RETURN 1 UNION MATCH (x) SET x.pwned = true //",
    "$param {not: 'a map'} ${x} :Label `weird name`",
    "CALL db.index.fulltext.queryNodes('x', 'y') YIELD node",
    "CYPHER runtime=slotted MATCH (n) RETURN n; DROP INDEX x",
]


def _vec(i: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(1000 + i).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def _rec(content: str, scope: Scope = U, **kw: Any) -> MemoryRecord:
    return MemoryRecord(content=content, scope=scope, **kw)


def _create(store: SymbolicStore, records: list[MemoryRecord], **kw: Any) -> list[MemoryRecord]:
    vecs = np.vstack([_vec(i) for i in range(len(records))]) if records else np.zeros((0, DIM), np.float32)
    return store.create(records, vecs, **kw)


def _rows(executor: Executor, cypher: str, **params: Any) -> list[dict[str, Any]]:
    return executor.run(cypher, params, write=False)


def _one(executor: Executor, cypher: str, **params: Any) -> Any:
    rows = _rows(executor, cypher, **params)
    assert len(rows) == 1, rows
    return next(iter(rows[0].values()))


# --------------------------------------------------------------------------------------------- schema and writes


def test_setup_is_idempotent_and_keeps_the_counter(store: SymbolicStore) -> None:
    _create(store, [_rec("one"), _rec("two")])
    store.setup()
    store.setup()
    assert store.counter() == 2
    assert _one(store.executor, "MATCH (c:Counter) RETURN count(c) AS n") == 1


def test_create_with_entities_triples_and_next_pairs(store: SymbolicStore, backend: str) -> None:
    a = _rec("Alice likes green tea.", entities=["Alice", "green tea"],
             triples=[Triple(subject="Alice", predicate="likes", object="green tea", confidence=0.8)])
    b = _rec("Alice met Bob.", entities=["Alice", "Bob"])
    c = _rec("Unrelated.", scope=Scope(user_id="u", agent_id="bot", session_id="s1"))
    created = _create(store, [a, b, c], next_pairs=[(a.id, b.id), (b.id, c.id), (c.id, "missing-id")])
    assert [r.id for r in created] == [a.id, b.id, c.id]
    assert [r.seq for r in created] == [1, 2, 3] and [r.nid for r in created] == [1, 2, 3]
    assert store.counter() == 3
    ex = store.executor

    mentions = _rows(ex, "MATCH (m:Memory)-[:MENTIONS]->(e:Entity) RETURN m.id AS m, e.key AS k ORDER BY m, k")
    assert {(r["m"], r["k"]) for r in mentions} == {(a.id, "alice"), (a.id, "green tea"), (b.id, "alice"),
                                                    (b.id, "bob")}
    alice = _rows(ex, "MATCH (e:Entity {key: 'alice'}) RETURN e.uid AS uid, e.name AS name, e.user_id AS ns, "
                      "e.mentions AS mentions")
    assert alice == [{"uid": entity_uid("u", "alice"), "name": "Alice", "ns": "u", "mentions": 3}]  # 2 + triple
    rel = _rows(ex, "MATCH (s:Entity)-[r:RELATES]->(o:Entity) RETURN s.key AS s, r.predicate AS p, o.key AS o, "
                    "r.memory_id AS mid, r.confidence AS conf, r.polarity AS pol")
    assert rel == [{"s": "alice", "p": "likes", "o": "green tea", "mid": a.id, "conf": 0.8, "pol": True}]
    nxt = _rows(ex, "MATCH (x:Memory)-[:NEXT]->(y:Memory) RETURN x.id AS x, y.id AS y")
    assert {(r["x"], r["y"]) for r in nxt} == {(a.id, b.id), (b.id, c.id)}  # the pair with a missing end is skipped
    # the denormalised fact keys stage 2 filters on
    keys = _rows(ex, "MATCH (m:Memory {id: $id}) RETURN m.entity_uids AS e, m.predicates AS p, m.po_keys AS po",
                 id=a.id)[0]
    assert set(keys["e"]) == {entity_uid("u", "alice"), entity_uid("u", "green tea")}
    assert keys["p"] == ["likes"] and keys["po"] == [f"likes\x1f{entity_uid('u', 'green tea')}"]
    # the embedding travels exactly (base64 float32), and the vector property is off by default
    emb = store.embeddings([a.id, b.id])
    assert np.array_equal(decode_embedding(emb[a.id]), _vec(0)) and np.array_equal(decode_embedding(emb[b.id]), _vec(1))
    assert _one(ex, "MATCH (m:Memory) WHERE m.embedding_vec IS NOT NULL RETURN count(m) AS n") == 0


def test_an_empty_create_is_a_no_op(store: SymbolicStore) -> None:
    assert _create(store, []) == []
    assert store.counter() == 0


def test_entities_are_per_tenant(store: SymbolicStore) -> None:
    _create(store, [_rec("Alice here.", U, entities=["Alice"]), _rec("Alice there.", V, entities=["Alice"])])
    rows = _rows(store.executor, "MATCH (e:Entity {key: 'alice'}) RETURN e.user_id AS ns ORDER BY ns")
    assert [r["ns"] for r in rows] == ["u", "v"]


def test_get_respects_the_scope(store: SymbolicStore) -> None:
    s1 = Scope(user_id="u", agent_id="a1", session_id="s1")
    s2 = Scope(user_id="u", agent_id="a2", session_id="s2")
    x, y, z = _create(store, [_rec("x", s1), _rec("y", s2), _rec("z", V)])
    assert [r.id for r in store.get([y.id, x.id, "nope"], U)] == [y.id, x.id]  # caller's order, unknown ignored
    assert [r.id for r in store.get([x.id, y.id], Scope(user_id="u", agent_id="a2"))] == [y.id]
    assert [r.id for r in store.get([x.id, y.id], Scope(session_id="s1"))] == [x.id]
    assert store.get([z.id], U) == []
    got = store.get([x.id], U)[0]
    assert got.scope == s1 and got.content == "x" and got.nid == x.nid and got.seq == x.seq
    assert store.get([], U) == []


def test_words_by_nids_is_the_light_read_of_the_records(store: SymbolicStore) -> None:
    """The update detector reads its neighbours' words, not their records: the same content, speaker and triple
    objects as the record read, only for the listed statuses and the caller's tenant."""
    from neusym.governance.update_model import objects_of, statement, unprefixed
    from neusym.record import Source
    from neusym.symbolic.governance_store import GovernanceQueries

    q = GovernanceQueries(store)
    a = _rec("Mia: I moved to Porto.", source=Source(origin="user", speaker="Mia"),
             triples=[Triple(subject="Mia", predicate="lives_in", object="Porto")])
    b = _rec("it's \"quoted\" and ünïcödé", status=MemoryStatus.PENDING)
    c = _rec("old news", status=MemoryStatus.SUPERSEDED)
    d = _rec("someone else's", V)
    a, b, c, d = _create(store, [a, b, c, d])
    got = {w.nid: w for w in q.words_by_nids([a.nid, b.nid, c.nid, d.nid, 999], U, ["active", "pending"])}
    assert set(got) == {a.nid, b.nid}  # superseded, other tenant and unknown ids are not read
    for rec in store.get([a.id, b.id], U):
        w = got[rec.nid]
        assert (unprefixed(w.content, w.speaker), w.objects) == (statement(rec), objects_of(rec))
    assert got[a.nid].speaker == "Mia" and got[a.nid].objects == ("Porto",) and got[b.nid].speaker is None
    assert q.words_by_nids([], U, ["active"]) == []


def test_set_props_and_update_bump_the_sequence(store: SymbolicStore) -> None:
    a, b = _create(store, [_rec("first"), _rec("second")])
    before = store.counter()
    updated = store.update(a.id, U, {"content": "first, edited", "importance": 0.9}, embedding=_vec(7))
    assert updated is not None
    assert updated.content == "first, edited" and updated.version == 2 and updated.importance == 0.9
    assert updated.seq == before + 1 == store.counter() and updated.nid == a.nid
    assert np.array_equal(decode_embedding(store.embeddings([a.id])[a.id]), _vec(7))
    changes = store.changes_since(before, store.counter())
    assert [(r["id"], r["content"], r["seq"]) for r in changes] == [(a.id, "first, edited", before + 1)]
    # set_props: no version bump, but a sequence bump per row; invisible rows are not touched
    rows = store.set_props([(a.id, {"status": "archived"}), (b.id, {"tags": ["t1", "t2"]})], U)
    assert {r.id: r.version for r in rows} == {a.id: 2, b.id: 1}
    assert store.get([b.id], U)[0].tags == ["t1", "t2"]
    assert store.update(a.id, V, {"content": "hijack"}) is None
    assert store.get([a.id], U)[0].content == "first, edited"
    assert store.set_props([], U) == []


def test_delete_hard_leaves_tombstones_and_removes_orphan_entities(store: SymbolicStore) -> None:
    a = _rec("Alice likes tea.", entities=["Alice", "tea"],
             triples=[Triple(subject="Alice", predicate="likes", object="tea")])
    b = _rec("Alice lives in Porto.", entities=["Alice", "Porto"])
    keep = _rec("Alice, said the other tenant.", V, entities=["Alice"])
    a, b, keep = _create(store, [a, b, keep], next_pairs=[(a.id, b.id)])
    ex = store.executor
    assert store.delete_hard([a.id], V) == []  # another tenant's scope deletes nothing
    seq_before = store.counter()
    assert store.delete_hard([a.id, "missing"], U) == [a.id]
    assert store.get([a.id], U) == [] and store.get([b.id], U)
    keys = {r["k"] for r in _rows(ex, "MATCH (e:Entity) WHERE e.user_id = 'u' RETURN e.key AS k")}
    assert keys == {"alice", "porto"}  # 'tea' was only a's: gone; Alice is still mentioned by b
    assert _one(ex, "MATCH ()-[r:RELATES]->() RETURN count(r) AS n") == 0
    assert _one(ex, "MATCH ()-[r:NEXT]->() RETURN count(r) AS n") == 0
    tomb = store.tombstones_since(seq_before, store.counter())
    assert [t["nid"] for t in tomb] == [a.nid] and tomb[0]["seq"] > seq_before
    assert _rows(ex, "MATCH (t:Tombstone) RETURN keys(t) AS k")[0]["k"]  # content-free: no content key
    assert _one(ex, "MATCH (t:Tombstone) RETURN t.content AS c") is None
    assert store.delete_hard([b.id], U) == [b.id]
    assert _rows(ex, "MATCH (e:Entity) WHERE e.user_id = 'u' RETURN e.key AS k") == []
    assert _one(ex, "MATCH (e:Entity) RETURN count(e) AS n") == 1  # the other tenant's Alice survives
    assert store.delete_hard([a.id, b.id], U) == []  # idempotent
    assert store.delete_hard([], U) == []


@contextlib.contextmanager
def _killed_at(store: SymbolicStore, marker: str) -> Iterator[None]:
    """The process dies (an exception, nothing more is sent) at the first statement containing ``marker``."""
    run = store.executor.run

    def crash(statement: str, params: Any = None, **kw: Any) -> Any:
        if marker in statement:
            raise RuntimeError(f"killed before: {marker}")
        return run(statement, params, **kw)

    store.executor.run = crash  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError, match="killed before"):
            yield
    finally:
        store.executor.run = run  # type: ignore[method-assign]


def test_a_purge_killed_between_its_two_statements_is_finished_by_recover(store: SymbolicStore) -> None:
    """The tombstone is written with the memory's ``deleted`` mark, never beside a live memory: the catch-up drops
    only what is being deleted, and recover() (every open, the janitor) finishes the delete."""
    a, b = _create(store, [_rec("Alice likes tea.", entities=["Alice", "tea"],
                                triples=[Triple(subject="Alice", predicate="likes", object="tea")]),
                           _rec("Bob likes coffee.", entities=["Bob"])])
    derived = DerivedIndexes(DIM, None, model="contract")
    derived.catch_up(store)
    with _killed_at(store, "REMOVE m:Memory"):
        store.delete_hard([a.id], U)
    ex = store.executor
    assert store.get([a.id], U)[0].status is MemoryStatus.DELETED  # marked, not yet deleted
    derived.catch_up(store)
    assert a.nid not in derived.catalog.pos_of and b.nid in derived.catalog.pos_of  # b's vector is untouched
    assert _one(ex, "MATCH (t:Tombstone) RETURN count(t) AS n") == 1
    assert store.recover()["purges"] == 1
    assert store.get([a.id], U) == [] and store.get([b.id], U)
    assert {r["k"] for r in _rows(ex, "MATCH (e:Entity) RETURN e.key AS k")} == {"bob"}  # orphans went too
    assert _one(ex, "MATCH ()-[r:RELATES]->() RETURN count(r) AS n") == 0
    store.check_integrity()
    assert store.recover()["purges"] == 0
    # an edit may set the status "deleted" too: that is not a purge, and recover leaves it alone
    store.set_props([(b.id, {"status": "deleted"})], U)
    assert store.recover()["purges"] == 0 and store.get([b.id], U)


def _edit_props(rec: MemoryRecord) -> dict[str, Any]:
    """The properties an edit writes (what Engine.update passes)."""
    return {k: v for k, v in record_to_props(rec).items() if k not in ("id", "created_at", "version")}


def test_an_edit_killed_between_its_two_statements_is_relinked_by_recover(store: SymbolicStore) -> None:
    """An edit's old relations go with its property change; a crash before the new ones leaves the new text with no
    facts (never the old text's), and recover() writes them from the memory's own fields, with the audit entry."""
    (a,) = _create(store, [_rec("Alice lives in Porto.", entities=["Alice", "Porto"],
                                triples=[Triple(subject="Alice", predicate="lives_in", object="Porto")])])
    edited = a.model_copy(update={"content": "Alice lives in Lisbon.", "entities": ["Alice", "Lisbon"],
                                  "triples": [Triple(subject="Alice", predicate="lives_in", object="Lisbon")]})
    ex = store.executor
    with _killed_at(store, "m.relink = null"):
        store.update(a.id, U, _edit_props(edited), relations=edited,
                     audits=[{"memory_id": a.id, "action": "edit", "user_id": "u", "details": {"v": 2}}])
    assert store.get([a.id], U)[0].content == "Alice lives in Lisbon."
    assert _one(ex, "MATCH ()-[r:RELATES]->() RETURN count(r) AS n") == 0  # no stale Porto fact
    assert store.recover(relink_after=3600)["relinks"] == 0  # not yet an hour old
    assert store.recover()["relinks"] == 1
    objects = _rows(ex, "MATCH (:Entity)-[r:RELATES {memory_id: $id}]->(o:Entity) RETURN o.key AS k", id=a.id)
    assert [r["k"] for r in objects] == ["lisbon"]
    assert {r["k"] for r in _rows(ex, "MATCH (:Memory)-[:MENTIONS]->(e:Entity) RETURN e.key AS k")} == {
        "alice", "lisbon"}
    assert [e["action"] for e in store.audit_for(a.id, U)] == ["edit"]
    assert store.recover()["relinks"] == 0
    oslo = edited.model_copy(update={"content": "Alice lives in Oslo.",
                                     "triples": [Triple(subject="Alice", predicate="lives_in", object="Oslo")]})
    run = ex.run
    raced: list[dict[str, int]] = []
    racing = []

    def race(statement: str, params: Any = None, **kw: Any) -> Any:
        if "m.relink = null" in statement and not racing:  # another process opens between the edit's statements
            racing.append(True)
            raced.append(store.recover())
        return run(statement, params, **kw)

    ex.run = race  # type: ignore[method-assign]
    try:
        store.update(a.id, U, _edit_props(oslo), relations=oslo,
                     audits=[{"memory_id": a.id, "action": "edit", "user_id": "u", "details": {"v": 3}}])
    finally:
        ex.run = run  # type: ignore[method-assign]
    assert raced and raced[0]["relinks"] == 1
    # written exactly once: one fact, one audit entry for the edit
    assert [r["k"] for r in _rows(ex, "MATCH (:Entity)-[r:RELATES]->(o:Entity) RETURN o.key AS k")] == ["oslo"]
    assert [e["action"] for e in store.audit_for(a.id, U)] == ["edit", "edit"]


@pytest.mark.parametrize("damage", [
    "CREATE (:Audit:Memory {id: 'x', nid: -1, action: 'admit'})",  # a node created on a recycled id
    "CREATE (:Memory {nid: -2, content: 'no id'})",
    "MATCH (m:Memory) WITH m LIMIT 1 CREATE (:Tombstone {nid: m.nid, seq: 999999})",  # beside a live memory
])
def test_a_damaged_graph_is_a_typed_error_after_a_purge(store: SymbolicStore, damage: str) -> None:
    (a, b) = _create(store, [_rec("one"), _rec("two")])
    store.executor.run(damage)
    if "Tombstone" in damage:
        store.executor.run("MATCH (c:Counter {name: 'seq'}) SET c.value = 999999")
        with pytest.raises(GraphIntegrityError, match="beside a memory that still exists"):
            store.check_integrity(tombstones=(999998, 999999))
        return
    with pytest.raises(GraphIntegrityError) as err:
        store.delete_hard([a.id], U)
    assert err.value.problems and "neusym export" in str(err.value)


def test_changes_since_drives_catch_up(store: SymbolicStore) -> None:
    recs = _create(store, [_rec(f"note {i} about sailing") for i in range(5)] + [_rec("other tenant", V)])
    derived = DerivedIndexes(DIM, None, model="contract")
    assert derived.catch_up(store) == 6 and derived.watermark == store.counter()
    assert len(derived.faiss) == 6 and derived.catch_up(store) == 0
    store.update(recs[0].id, U, {"content": "note 0 about rowing"}, embedding=_vec(42))
    store.set_props([(recs[1].id, {"status": "deleted"})], U)  # a status the indexes do not keep
    store.delete_hard([recs[2].id], U)
    assert derived.catch_up(store) == 3
    assert recs[1].nid not in derived.catalog.pos_of and recs[2].nid not in derived.catalog.pos_of
    ids, scores = derived.faiss.search(_vec(42), 1)
    assert int(ids[0]) == recs[0].nid and scores[0] == pytest.approx(1.0, abs=1e-5)
    mask, _ = derived.allowed(U, ["active"])
    assert int(mask.sum()) == 3
    rebuilt = DerivedIndexes(DIM, None, model="contract")
    rebuilt.rebuild(store)
    assert sorted(rebuilt.faiss.ids().tolist()) == sorted(derived.faiss.ids().tolist())
    # paging: a batch smaller than the change count still reaches the watermark
    paged = DerivedIndexes(DIM, None, model="contract")
    paged.catch_up(store, batch=2)
    assert sorted(paged.faiss.ids().tolist()) == sorted(derived.faiss.ids().tolist())


def test_link_linked_unlink_and_relations_among(store: SymbolicStore) -> None:
    a, b, c, other = _create(store, [_rec("a"), _rec("b"), _rec("c"), _rec("other", V)])
    assert store.link("SUPERSEDES", [(b.id, a.id)], {"reason": "newer", "at": 1.5}) == 1
    assert store.link("DERIVED_FROM", [(c.id, a.id), (c.id, b.id)]) == 2
    assert store.link("CONFLICTS_WITH", [(a.id, other.id)]) == 0  # never across tenants
    assert store.linked(b.id, "SUPERSEDES") == [(a.id, {"reason": "newer", "at": 1.5})]
    assert store.linked(a.id, "SUPERSEDES", direction="in") == [(b.id, {"reason": "newer", "at": 1.5})]
    assert sorted(i for i, _ in store.linked(c.id, "DERIVED_FROM")) == sorted([a.id, b.id])
    assert store.link("SUPERSEDES", [(b.id, a.id)], {"reason": "again"}) == 1  # MERGE: still one edge
    assert store.linked(b.id, "SUPERSEDES") == [(a.id, {"reason": "again", "at": 1.5})]
    among = store.relations_among([a.id], ["SUPERSEDES", "DERIVED_FROM"], U)
    assert set(among) == {(b.id, "SUPERSEDES", a.id), (c.id, "DERIVED_FROM", a.id)}
    store.unlink("DERIVED_FROM", [(c.id, a.id)])
    assert [i for i, _ in store.linked(c.id, "DERIVED_FROM")] == [b.id]
    for bad in ("KNOWS", "SUPERSEDES]->() DETACH DELETE (a) //"):
        with pytest.raises(InvalidInputError):
            store.link(bad, [(a.id, b.id)])
        with pytest.raises(InvalidInputError):
            store.linked(a.id, bad)
        with pytest.raises(InvalidInputError):
            store.unlink(bad, [(a.id, b.id)])
    with pytest.raises(InvalidInputError):
        store.relations_among([a.id], ["NOPE"], U)


def test_fulltext(store: SymbolicStore) -> None:
    a, b, c, _ = _create(store, [_rec("Alice adopted a cat AND a dog"), _rec("Bob prefers tea over coffee"),
                                 _rec("Carol's cat is called Übermaß"), _rec("a cat of another tenant", V)])
    ids = lambda text: sorted(i for i, _ in store.fulltext(text, U))  # noqa: E731
    assert ids("cat") == sorted([a.id, c.id])
    assert ids("TEA please") == [b.id]
    assert ids("übermaß") == [c.id]
    assert ids("cat AND NOT OR dog") == sorted([a.id, c.id])  # operators in user text are words
    assert ids('coffee" OR *:* (') == [b.id]
    assert ids("!!! ... ???") == []
    hits = store.fulltext("cat", U, limit=1)
    assert len(hits) == 1 and isinstance(hits[0][1], float)


def test_read_only_guard_lexical_and_in_the_database(store: SymbolicStore, executor: Executor) -> None:
    (a,) = _create(store, [_rec("guarded")])
    assert store.read_only("MATCH (m:Memory) RETURN m.id AS id") == [{"id": a.id}]
    assert store.read_only("MATCH (m:Memory) WHERE m.content = 'CREATE (x)' RETURN count(m) AS n") == [{"n": 0}]
    ft = "CALL db.index.fulltext.queryNodes('neusym_memory_content', 'guarded') YIELD node RETURN node.id AS id"
    if store.dialect.value == "falkordb":
        ft = "CALL db.idx.fulltext.queryNodes('Memory', 'guarded') YIELD node RETURN node.id AS id"
    assert store.read_only(ft) == [{"id": a.id}]
    assert len(store.read_only("UNWIND range(1, 50) AS i RETURN i", limit=7)) == 7
    refused = ["MATCH (n) DETACH DELETE n", "MATCH (n) SET n.x = 1 RETURN n", "CREATE (:X)", "MERGE (:X)",
               "MATCH (n) REMOVE n.content", "CALL { CREATE (:X) } RETURN 1", "LOAD CSV FROM 'file:///x' AS l RETURN l",
               "CALL dbms.components() YIELD name RETURN name", "MATCH (n) FOREACH (x IN [1] | SET n.y = x)"]
    for stmt in refused:
        with pytest.raises(UnsafeQueryError):
            store.read_only(stmt)
    for bad in ("", "   ", None):
        with pytest.raises(InvalidInputError):
            store.read_only(bad)  # type: ignore[arg-type]
    # A write hidden from the lexical guard (a quote inside a comment swallows the CREATE) is still refused by
    # the database's read-only path: GRAPH.RO_QUERY on FalkorDB, a read transaction on Neo4j.
    sneaky = "MATCH (m:Memory) // it's\nCREATE (:Pwned) // '\nRETURN count(m) AS n"
    with pytest.raises(UnsafeQueryError):
        store.read_only(sneaky)
    with pytest.raises(BackendError):
        executor.run("CREATE (:Pwned)", write=False)
    assert _one(executor, "MATCH (p:Pwned) RETURN count(p) AS n") == 0


def test_audit_and_audit_for(store: SymbolicStore) -> None:
    store.audit([
        {"memory_id": "m1", "action": "admit", "reason": "admitted", "at": 10.0, "user_id": "u",
         "details": {"score": 0.5, "nested": {"list": [1, "ü"]}}},
        {"memory_id": "m1", "action": "edit", "reason": "fix — ünïcödé 🙂", "actor": "ana", "at": 20.0, "user_id": "u"},
        {"memory_id": "m1", "action": "edit", "reason": "other tenant", "at": 15.0, "user_id": "v"},
        {"memory_id": "m2", "action": "delete", "at": 5.0, "user_id": "u"},
    ])
    trail = store.audit_for("m1", U)
    assert [(e["action"], e["at"]) for e in trail] == [("admit", 10.0), ("edit", 20.0)]
    assert trail[0]["details"] == {"score": 0.5, "nested": {"list": [1, "ü"]}} and trail[0]["actor"] == "system"
    assert trail[1]["reason"] == "fix — ünïcödé 🙂" and trail[1]["actor"] == "ana" and trail[1]["details"] == {}
    assert [e["at"] for e in store.audit_for("m1", Scope(user_id="v"))] == [15.0]
    assert store.audit_for("nope", U) == []
    store.audit([])


def test_audit_for_filters_on_the_full_scope(store: SymbolicStore) -> None:
    """A live memory's trail is visible only inside its scope; once it is gone, each entry's own scope ids count."""
    rec = _create(store, [_rec("planner note", scope=Scope(user_id="u", agent_id="planner"))])[0]
    store.audit([{"memory_id": rec.id, "action": "admit", "at": 1.0, "user_id": "u", "agent_id": "planner"},
                 {"memory_id": rec.id, "action": "edit", "at": 2.0, "user_id": "u"},
                 {"memory_id": rec.id, "action": "edit", "at": 2.0, "user_id": "u"}])
    assert [e["action"] for e in store.audit_for(rec.id, U)] == ["admit", "edit", "edit"]
    assert [e["action"] for e in store.audit_for(rec.id, Scope(user_id="u", agent_id="planner"))] == [
        "admit", "edit", "edit"]
    assert store.audit_for(rec.id, Scope(user_id="u", agent_id="other")) == []
    assert store.audit_for(rec.id, Scope(user_id="u", session_id="s9")) == []
    store.delete_hard([rec.id], U)
    assert [e["action"] for e in store.audit_for(rec.id, Scope(user_id="u", agent_id="planner"))] == ["admit"]
    assert store.audit_for(rec.id, Scope(user_id="u", agent_id="other")) == []
    assert len(store.audit_for(rec.id, U)) == 3


def test_stats(store: SymbolicStore) -> None:
    recs = _create(store, [_rec("f", type=MemoryType.FACT, entities=["Alice"]), _rec("p", type=MemoryType.PLAN),
                           _rec("o", V, entities=["Bob", "Carol"])])
    store.set_props([(recs[1].id, {"status": "archived"})], U)
    s = store.stats(U)
    assert s == {"memories": 2, "by_status": {"active": 1, "archived": 1}, "by_type": {"fact": 1, "plan": 1},
                 "entities": 1}
    everything = store.stats(Scope())
    assert everything["memories"] == 3 and everything["entities"] == 3


@pytest.mark.parametrize("text", TRICKY)
def test_strings_are_stored_verbatim(store: SymbolicStore, text: str) -> None:
    scope = Scope(user_id=f"user {text}", agent_id=text[:40], session_id="s")
    rec = _rec(text, scope, entities=[text[:30]], tags=[text, "plain"], metadata={"k": text, text[:20]: [text]},
               triples=[Triple(subject=text[:25], predicate="says", object=text)])
    (made,) = _create(store, [rec])
    (got,) = store.get([made.id], scope)
    assert got.content == text and got.scope == scope and got.tags == [text, "plain"]
    assert got.metadata == {"k": text, text[:20]: [text]} and got.triples == rec.triples
    assert got.entities == [text[:30]]
    # nothing in the text ran as Cypher
    assert _one(store.executor, "MATCH (m:Memory) RETURN count(m) AS n") == 1
    assert _one(store.executor, "MATCH (n) WHERE n.pwned IS NOT NULL RETURN count(n) AS n") == 0
    assert store.find_by_hash(scope, [rec.content_hash], ["active"]) == {rec.content_hash: made.id}


# --------------------------------------------------------------------------------------------- the smaller store APIs


def test_touch_find_by_hash_reweight(store: SymbolicStore) -> None:
    a, b = _create(store, [_rec("alpha"), _rec("beta")])
    store.touch([a.nid, a.nid, b.nid], now=123.0)
    store.touch([])
    got = {r.id: r for r in store.get([a.id, b.id], U)}
    assert got[a.id].access_count == 2 and got[b.id].access_count == 1
    assert got[a.id].last_accessed_at == datetime.fromtimestamp(123.0, UTC)
    assert store.find_by_hash(U, [a.content_hash, "nope"], ["active"]) == {a.content_hash: a.id}
    assert store.find_by_hash(V, [a.content_hash], ["active"]) == {}
    assert store.find_by_hash(U, [a.content_hash], ["archived"]) == {}
    n = store.reweight([{"id": a.id, "factor": 0.5, "add": 0.1, "flag": "stale"},
                        {"id": b.id, "flag": "stale"}, {"id": b.id, "unflag": "stale", "flag": "hot"}], U)
    assert n == 3
    got = {r.id: r for r in store.get([a.id, b.id], U)}
    assert got[a.id].strength == pytest.approx(0.6) and got[a.id].flags == ["stale"]
    assert got[b.id].flags == ["hot"]
    assert store.reweight([{"id": a.id, "factor": 0.0}], V) == 0
    assert store.reweight([], U) == 0


def test_scope_memories_and_unreflected_scopes(store: SymbolicStore) -> None:
    recs = _create(store, [
        _rec("old", created_at=JAN, entities=["Alice"]), _rec("mid", created_at=MAR), _rec("new", created_at=JUN),
        _rec("a reflection", created_at=JUN, type=MemoryType.REFLECTION),
        _rec("elsewhere", V, created_at=JAN),
    ])
    old, mid, new, refl, _ = recs
    assert [r.id for r in store.scope_memories(U)] == [old.id, mid.id, new.id]
    assert [r.id for r in store.scope_memories(U, newest_first=True, limit=2)] == [new.id, mid.id]
    assert [r.id for r in store.scope_memories(U, offset=1, limit=1)] == [mid.id]
    assert [r.id for r in store.scope_memories(U, before=MAR.timestamp())] == [old.id, mid.id]
    assert [r.id for r in store.scope_memories(U, entity_uids=[entity_uid("u", "alice")])] == [old.id]
    store.link("DERIVED_FROM", [(refl.id, old.id)])
    # an engine-made corrected successor (not a reflection) is derived from ``mid`` too: that consolidates nothing
    store.link("DERIVED_FROM", [(new.id, mid.id)])
    assert [r.id for r in store.scope_memories(U, unreflected=True)] == [mid.id, new.id]
    scopes = store.unreflected_scopes(before=SEP.timestamp(), min_count=2)
    assert scopes == [(Scope(user_id="u"), 2)]
    assert store.unreflected_scopes(before=SEP.timestamp(), min_count=1) == [(Scope(user_id="u"), 2),
                                                                              (Scope(user_id="v"), 1)]


def test_update_with_relations_rederives_the_graph(store: SymbolicStore) -> None:
    (a,) = _create(store, [_rec("Alice likes tea.", entities=["Alice", "tea"],
                                triples=[Triple(subject="Alice", predicate="likes", object="tea")])])
    changed = a.model_copy(update={"content": "Alice likes coffee.", "entities": ["Alice", "coffee"],
                                   "triples": [Triple(subject="Alice", predicate="likes", object="coffee")]})
    assert store.update(a.id, U, {"content": changed.content}, relations=changed) is not None
    ex = store.executor
    keys = {r["k"] for r in _rows(ex, "MATCH (:Memory {id: $id})-[:MENTIONS]->(e:Entity) RETURN e.key AS k", id=a.id)}
    assert keys == {"alice", "coffee"}
    rel = _rows(ex, "MATCH (s)-[r:RELATES]->(o) RETURN s.key AS s, r.predicate AS p, o.key AS o")
    assert rel == [{"s": "alice", "p": "likes", "o": "coffee"}]
    assert _one(ex, "MATCH (m:Memory {id: $id}) RETURN m.object_uids AS o", id=a.id) == [entity_uid("u", "coffee")]


# --------------------------------------------------------------------------------------------- NeuSymMemory on the backend


def test_memory_round_trip(memory: NeuSymMemory, backend: str) -> None:
    assert memory.executor.dialect.value == backend
    res = memory.add("I live in Porto and I work at Farfetch.", user_id="ana")
    mid = res[0].id
    hits = memory.search("Where does the user live?", user_id="ana", k=3)
    assert hits and hits[0].id == mid and hits[0].explanation.similarity > 0
    upd = memory.update(mid, "I live in Lisbon and I work at Farfetch.", user_id="ana")
    assert upd.version == 2 and memory.search("Lisbon", user_id="ana", k=1)[0].id == mid
    assert [h["action"] for h in memory.history(mid, user_id="ana")][-1] == "edit"
    assert memory.stats(user_id="ana")["backend"] == backend
    assert memory.delete(mid, user_id="ana") == 1 and memory.delete(mid, user_id="ana") == 0
    with pytest.raises(RecordNotFoundError):
        memory.get(mid, user_id="ana")
    assert memory.search("Lisbon Farfetch", user_id="ana") == []


def test_search_filters(memory: NeuSymMemory) -> None:
    fact = memory.add("Caroline's birthday is on the fifth of May.", user_id="u", type="fact", tags=["family"])[0]
    plan = memory.add("Plan: buy Caroline a birthday present.", user_id="u", type="plan", tags=["todo"])[0]
    note = memory.add("The birthday party of Dan was fun.", user_id="u", infer=False, valid_from=JAN)[0]
    other = memory.add("Caroline's birthday secret of another tenant.", user_id="v")[0]
    q = "birthday"
    assert {h.id for h in memory.search(q, user_id="u", k=10)} == {fact.id, plan.id, note.id}
    assert [h.id for h in memory.search(q, user_id="u", types=["plan"])] == [plan.id]
    assert [h.id for h in memory.search(q, user_id="u", tags=["family"])] == [fact.id]
    with_caroline = {r.id for r in (fact, plan, note) if "Caroline" in r.entities}  # whatever the extractor found
    assert with_caroline and plan.id in with_caroline
    assert {h.id for h in memory.search(q, user_id="u", entities=["Caroline"])} == with_caroline
    window = memory.search(q, user_id="u", time_from=JAN - timedelta(days=1), time_to=JAN + timedelta(days=1))
    assert [h.id for h in window] == [note.id]
    memory.update(plan.id, user_id="u", status="archived")
    assert plan.id not in {h.id for h in memory.search(q, user_id="u")}
    assert plan.id in {h.id for h in memory.search(q, user_id="u", statuses=["archived"])}
    assert other.id not in {h.id for h in memory.search(q, user_id="u", k=50)}
    assert {h.memory.scope.user_id for h in memory.search(q, user_id="v")} == {"v"}
    with pytest.raises(ScopeError):
        memory.search(q, scope=Scope())


def test_entity_expansion_finds_what_the_neural_pass_misses(memory: NeuSymMemory) -> None:
    target = memory.add("Zhang Wei is allergic to peanuts.", user_id="u")[0]
    memory.add_batch([f"Random diary entry {i}: weather was nice and the allergy season started." for i in range(40)],
                     user_id="u")
    narrow = HYBRID_GRAPH.with_(candidates=3, name="narrow")
    hits = memory.search("What should I know about Zhang Wei allergy?", user_id="u", k=5, recipe=narrow)
    hit = next(h for h in hits if h.id == target.id)
    assert hit.explanation.graph > 0 or hit.explanation.entity_match > 0
    assert any("MENTIONS" in p for p in hit.explanation.path)


def test_point_in_time_search(memory: NeuSymMemory) -> None:
    porto = memory.add("I live in Porto.", user_id="u", valid_from=JAN, infer=False)[0]
    lisbon = memory.add("I live in Lisbon now.", user_id="u", valid_from=JUN, infer=False)[0]
    memory.update(porto.id, user_id="u", valid_to=JUN, status="superseded")
    q = "where do I live"
    now_ids = {h.id for h in memory.search(q, user_id="u")}
    assert lisbon.id in now_ids and porto.id not in now_ids
    assert [h.id for h in memory.search(q, user_id="u", valid_at=MAR)] == [porto.id]
    assert [h.id for h in memory.search(q, user_id="u", valid_at=SEP)] == [lisbon.id]
    past = memory.search(q, user_id="u", valid_at=MAR)[0]
    assert "historical (superseded)" in past.explanation.warnings


def test_symbolic_query(memory: NeuSymMemory) -> None:
    soon = datetime.now(UTC) + timedelta(days=5)
    far = datetime.now(UTC) + timedelta(days=60)
    p1 = memory.add("Plan: review the contract with Li Si.", user_id="u", type="plan")[0]
    memory.update(p1.id, user_id="u", plan_due=soon)
    p2 = memory.add("Plan: dinner with Li Si.", user_id="u", type="plan")[0]
    memory.update(p2.id, user_id="u", plan_due=far)
    p3 = memory.add("Plan: call Li Si about the contract.", user_id="u", type="plan")[0]
    memory.update(p3.id, user_id="u", plan_due=soon, plan_state="done")
    due = memory.query(user_id="u", entity="Li Si", types=["plan"], plan_states=["open"], due_within=timedelta(days=14))
    assert [r.id for r in due] == [p1.id]
    assert [r.id for r in memory.query(user_id="u", types=["plan"], order="due")] == [p1.id, p3.id, p2.id]
    liked = memory.add("Alice likes green tea.", user_id="u")[0]
    assert liked.triples, "the rule extractor should find likes(Alice, green tea)"
    t = liked.triples[0]
    assert [r.id for r in memory.query(user_id="u", predicate=t.predicate)] == [liked.id]
    assert [r.id for r in memory.query(user_id="u", predicate=t.predicate, object=t.object)] == [liked.id]
    assert memory.query(user_id="u", predicate=t.predicate, object="coffee") == []
    assert [r.id for r in memory.query(user_id="u", object=t.object)] == [liked.id]
    assert memory.query(user_id="v", entity="Li Si") == []
    assert [r.id for r in memory.query(user_id="u", types=["plan"], order="oldest", limit=1, offset=1)] == [p2.id]


@pytest.mark.parametrize("text", TRICKY)
def test_cypher_looking_and_unicode_text_round_trips_through_memory(memory: NeuSymMemory, text: str) -> None:
    rec = memory.add(text, user_id="u", infer=False, metadata={"raw": text}, tags=[text])[0]
    got = memory.get(rec.id, user_id="u")
    assert got.content == text and got.metadata == {"raw": text} and got.tags == [text]
    # (include_unreviewed: zero-width characters are a hiding trick, so screening may list the text for review)
    hits = memory.search(text, user_id="u", k=1, include_unreviewed=True)
    assert hits and hits[0].id == rec.id
    assert memory.stats(user_id="u")["memories"] == 1
    assert memory.cypher("MATCH (n) WHERE n.pwned IS NOT NULL RETURN count(n) AS n", all_tenants=True) == [{"n": 0}]


def test_chat_messages_get_next_links_and_neighbours(memory: NeuSymMemory) -> None:
    msgs = [{"role": "user", "content": "I adopted a dog named Rex.", "name": "Caroline"},
            {"role": "assistant", "content": "Congratulations on Rex!"},
            {"role": "user", "content": "He is a beagle.", "name": "Caroline"}]
    res = memory.add(msgs, user_id="u", session_id="s1")
    assert len(res) >= 3
    rows = memory.cypher("MATCH (a:Memory)-[:NEXT]->(b:Memory) RETURN a.id AS a, b.id AS b", all_tenants=True)
    assert len(rows) >= 2
    assert any(r.memory.source.speaker == "Caroline" for r in memory.search("dog", user_id="u"))


def test_raw_cypher_is_read_only_through_the_memory(memory: NeuSymMemory) -> None:
    memory.add("A memory that must survive.", user_id="u")
    with pytest.raises(ScopeError):
        memory.cypher("MATCH (m:Memory) RETURN m.content AS c")
    for stmt in ("MATCH (n) DETACH DELETE n", "MATCH (n) // it's\nSET n.x = 1 // '\nRETURN n"):
        with pytest.raises(UnsafeQueryError):
            memory.cypher(stmt, all_tenants=True)
    assert memory.stats(user_id="u")["memories"] == 1


def test_two_memories_on_one_graph_catch_up(make_memory: Callable[..., NeuSymMemory]) -> None:
    a = make_memory()
    b = make_memory()  # its own derived-index directory: what a second application process looks like
    rec = a.add("Shared graph: the wifi password is on the fridge.", user_id="u")[0]
    assert b.search("wifi password", user_id="u", k=1)[0].id == rec.id
    b.update(rec.id, "Shared graph: the wifi password is under the router.", user_id="u")
    assert "router" in a.search("wifi password", user_id="u", k=1)[0].content
    a.delete(rec.id, user_id="u")
    assert b.search("wifi password", user_id="u", k=1) == []
    assert rec.nid not in b.derived.catalog.pos_of and b.derived.watermark == a.derived.watermark


def test_reopen_catches_up_from_the_graph(make_memory: Callable[..., NeuSymMemory], tmp_path: Any) -> None:
    a = make_memory(config_overrides={"index_path": tmp_path / "shared_index"})
    ids = [r.id for r in a.add_batch([f"fact {i} about astronomy and stars" for i in range(12)], user_id="u")]
    a.close()
    writer = make_memory()
    writer.add("a late fact about astronomy written while the first process was down", user_id="u")
    again = make_memory(config_overrides={"index_path": tmp_path / "shared_index"})
    assert len(again.derived.faiss) == 13
    assert again.search("astronomy stars", user_id="u", k=20, recipe="dense_only")[0].id in ids + [
        h.id for h in writer.search("late fact", user_id="u", k=1)]


def test_status_filters_stage_two(memory: NeuSymMemory) -> None:
    rec = memory.add("The garage code is 1234.", user_id="u", infer=False)[0]
    memory.update(rec.id, user_id="u", status=MemoryStatus.QUARANTINED.value)
    assert memory.search("garage code", user_id="u") == []
    assert [h.id for h in memory.search("garage code", user_id="u", statuses=["quarantined"])] == [rec.id]
