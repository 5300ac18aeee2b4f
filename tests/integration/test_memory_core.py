"""End-to-end behaviour of NeuSymMemory on the real embedded FalkorDB and real FAISS."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from neusym import (
    ClosedError,
    InvalidInputError,
    MemoryType,
    NeuSymConfig,
    NeuSymMemory,
    RecordNotFoundError,
    Scope,
    ScopeError,
    UnsafeQueryError,
)
from neusym.symbolic.convert import decode_embedding


def test_add_search_get_update_delete(memory: NeuSymMemory) -> None:
    res = memory.add("I live in Porto and I work at Farfetch.", user_id="ana")
    assert res and res.decisions
    mid = res[0].id
    got = memory.get(mid, user_id="ana")
    assert got.content.startswith("I live in Porto")
    assert got.nid > 0 and got.seq > 0

    hits = memory.search("Where does the user live?", user_id="ana", k=3)
    assert hits and hits[0].id == mid
    expl = hits[0].explanation
    assert expl.similarity > 0 and expl.weights and expl.via in ("neural", "lexical")

    upd = memory.update(mid, "I live in Lisbon and I work at Farfetch.", user_id="ana")
    assert upd.version == 2 and "Lisbon" in upd.content
    hits = memory.search("Lisbon", user_id="ana", k=1)
    assert hits[0].id == mid
    assert memory.history(mid, user_id="ana")[-1]["action"] == "edit"

    assert memory.delete(mid, user_id="ana") == 1
    assert memory.delete(mid, user_id="ana") == 0  # idempotent
    with pytest.raises(RecordNotFoundError):
        memory.get(mid, user_id="ana")
    assert memory.search("Lisbon Farfetch", user_id="ana") == []
    assert mid not in {r["id"] for r in memory.cypher("MATCH (m:Memory) RETURN m.id AS id", all_tenants=True)}


def test_delete_removes_vector_and_lexical_entries(memory: NeuSymMemory) -> None:
    res = memory.add_batch([f"note number {i} about gardening" for i in range(5)], user_id="u")
    nids = [r.nid for r in res]
    memory.delete([r.id for r in res[:2]], user_id="u")
    for nid in nids[:2]:
        assert nid not in memory.derived.catalog.pos_of
    remaining = {int(i) for i in memory.derived.faiss.ids()}
    assert not set(nids[:2]) & remaining and set(nids[2:]) <= remaining


def test_exact_duplicate_merges(memory: NeuSymMemory) -> None:
    a = memory.add("My favourite colour is green.", user_id="u")
    b = memory.add("my favourite colour is green", user_id="u")
    assert len(b) == 0 and b.decisions[0].action.value == "merge"
    assert b.decisions[0].target_id == a[0].id
    assert memory.get(a[0].id, user_id="u").strength > a[0].strength


def test_scope_isolation_on_every_read_path(memory: NeuSymMemory) -> None:
    a = memory.add("Alice's secret project is called Bluebird.", user_id="alice")[0]
    memory.add("Bob likes sailing on weekends.", user_id="bob")
    assert all(h.memory.scope.user_id == "bob" for h in memory.search("secret project Bluebird", user_id="bob"))
    assert memory.search("Bluebird", user_id="bob") == [] or all(
        "Bluebird" not in h.content for h in memory.search("Bluebird", user_id="bob"))
    with pytest.raises(RecordNotFoundError):
        memory.get(a.id, user_id="bob")
    assert memory.query(user_id="bob", entity="Bluebird") == []
    assert memory.query(user_id="alice", entity="Bluebird")[0].id == a.id
    assert memory.delete(a.id, user_id="bob") == 0
    assert memory.get(a.id, user_id="alice")
    with pytest.raises(ScopeError):
        memory.search("anything", scope=Scope())
    with pytest.raises(ScopeError):
        memory.cypher("MATCH (m:Memory) RETURN m.content AS c")


def test_session_scope_narrows_and_user_scope_widens(memory: NeuSymMemory) -> None:
    memory.add("We discussed the quarterly budget.", user_id="u", session_id="s1")
    memory.add("We discussed the holiday schedule.", user_id="u", session_id="s2")
    s1 = memory.search("discussed", user_id="u", session_id="s1")
    assert {h.memory.scope.session_id for h in s1} == {"s1"}
    assert {h.memory.scope.session_id for h in memory.search("discussed", user_id="u")} == {"s1", "s2"}


def test_symbolic_stage_fixes_what_dense_ranks_wrong(memory: NeuSymMemory) -> None:
    """A time filter and an entity filter are applied by stage 2: the dense pass alone ranks the wrong memory
    first because the distractor repeats the query's words."""
    old = datetime(2023, 3, 10, tzinfo=UTC)
    new = datetime(2024, 6, 1, tzinfo=UTC)
    memory.add("Meeting notes: the team meeting notes were long.", user_id="u", valid_from=new)
    target = memory.add("We met Li Si to plan the launch.", user_id="u", valid_from=old)[0]
    dense = memory.search("team meeting notes", user_id="u", recipe="dense_only", k=1)
    assert dense[0].id != target.id
    hits = memory.search("team meeting notes", user_id="u", k=1, time_from=datetime(2023, 1, 1, tzinfo=UTC),
                         time_to=datetime(2023, 12, 31, tzinfo=UTC))
    assert hits[0].id == target.id
    by_entity = memory.search("team meeting notes", user_id="u", k=1, entities=["Li Si"])
    assert by_entity[0].id == target.id


def test_graph_expansion_finds_memory_the_neural_pass_misses(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory()
    target = mem.add("Zhang Wei is allergic to peanuts.", user_id="u")[0]
    for i in range(60):
        mem.add(f"Random diary entry {i}: weather was nice and the allergy season started.", user_id="u")
    from neusym.retrieval.recipes import HYBRID_GRAPH

    narrow = HYBRID_GRAPH.with_(candidates=3, name="narrow")
    hits = mem.search("What should I know about Zhang Wei allergy?", user_id="u", k=5, recipe=narrow)
    assert target.id in [h.id for h in hits]
    hit = next(h for h in hits if h.id == target.id)
    assert hit.explanation.graph > 0 or hit.explanation.entity_match > 0
    assert any("MENTIONS" in p for p in hit.explanation.path)


def test_symbolic_query_plans(memory: NeuSymMemory) -> None:
    soon = datetime.now(UTC) + timedelta(days=5)
    far = datetime.now(UTC) + timedelta(days=60)
    p1 = memory.add("Plan: review the contract with Li Si.", user_id="u", type="plan")[0]
    memory.update(p1.id, user_id="u", plan_due=soon)
    p2 = memory.add("Plan: dinner with Li Si.", user_id="u", type="plan")[0]
    memory.update(p2.id, user_id="u", plan_due=far)
    p3 = memory.add("Plan: call Li Si about the contract.", user_id="u", type="plan")[0]
    memory.update(p3.id, user_id="u", plan_due=soon, plan_state="done")
    got = memory.query(user_id="u", entity="Li Si", types=["plan"], plan_states=["open"],
                       due_within=timedelta(days=14))
    assert [r.id for r in got] == [p1.id]


def test_bad_input_is_typed_and_loses_nothing(memory: NeuSymMemory) -> None:
    keep = memory.add("A memory that must survive.", user_id="u")[0]
    for bad in ["", "   ", "x\x00y", "bad \ud800 surrogate", "é" * 600_000, 42, None, b"\xff\xfe"]:
        with pytest.raises(InvalidInputError):
            memory.add(bad, user_id="u")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        memory.search("ok", user_id="u", k=-1)
    with pytest.raises(InvalidInputError):
        memory.search("ok", user_id="u", k=10**9)
    with pytest.raises(ScopeError):
        memory.add("x", scope={"tenant": "u"})
    with pytest.raises(InvalidInputError):
        memory.add("x", user_id="u", metadata="nope")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        memory.search("x", user_id="u", types=["nonsense"])
    evil = "'}) MATCH (n) DETACH DELETE n //"
    stored = memory.add(evil, user_id="u", infer=False)[0]
    assert memory.get(stored.id, user_id="u").content == evil
    assert memory.get(keep.id, user_id="u").content == "A memory that must survive."
    with pytest.raises(UnsafeQueryError):
        memory.cypher("MATCH (n) DETACH DELETE n", all_tenants=True)
    with pytest.raises(UnsafeQueryError):
        memory.cypher("MATCH (n) SET n.x = 1 RETURN n", all_tenants=True)
    assert memory.stats(user_id="u")["memories"] == 2


def test_nested_metadata_round_trips(memory: NeuSymMemory) -> None:
    md = {"a": {"b": [1, 2, {"c": "ü"}]}, "n": None}
    rec = memory.add("metadata test", user_id="u", metadata=md, infer=False)[0]
    assert memory.get(rec.id, user_id="u").metadata == md


def test_closed_memory_refuses(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory()
    mem.close()
    with pytest.raises(ClosedError):
        mem.search("x", user_id="u")


def test_embedding_is_stored_on_the_graph_node(memory: NeuSymMemory) -> None:
    rec = memory.add("The embedding lives in the graph too.", user_id="u", infer=False)[0]
    emb = memory.store.embeddings([rec.id])[rec.id]
    vec = decode_embedding(emb)
    assert vec.shape == (256,)
    assert np.allclose(vec, memory.embedder.embed_documents([rec.content])[0], atol=1e-6)


def test_faiss_rebuilt_after_file_deleted_or_corrupted(make_memory, falkordb_dir: Path, graph_name: str) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory()
    ids = [r.id for r in mem.add_batch([f"fact {i} about astronomy and stars" for i in range(20)], user_id="u")]
    mem.close()
    index_dir = falkordb_dir / "indexes" / graph_name
    (index_dir / "vectors.faiss").write_bytes(b"garbage, not a faiss index")
    mem2 = make_memory()
    assert len(mem2.derived.faiss) == 20
    assert mem2.search("astronomy stars", user_id="u", k=20, recipe="dense_only")[0].id in ids
    mem2.close()
    (index_dir / "vectors.faiss").unlink()
    mem3 = make_memory()
    assert len(mem3.derived.faiss) == 20


def _script(data_dir: Path, graph: str, body: str) -> str:
    return textwrap.dedent(f"""
        import os, sys
        from neusym import NeuSymMemory, NeuSymConfig
        from neusym.embeddings import HashingEmbedder
        cfg = NeuSymConfig(data_dir={str(data_dir)!r}, graph_name={graph!r}, appendfsync="everysec")
        mem = NeuSymMemory(config=cfg, embedder=HashingEmbedder(256))
    """) + textwrap.dedent(body)


def test_persistence_across_processes(falkordb_dir: Path, graph_name: str, make_memory) -> None:  # type: ignore[no-untyped-def]
    writer = _script(falkordb_dir, graph_name, """
        r = mem.add("Persisted: the spare key is under the blue pot.", user_id="u")
        print(r[0].id)
        mem.close()
    """)
    out = subprocess.run([sys.executable, "-c", writer], capture_output=True, text=True, check=True)
    mid = out.stdout.strip().splitlines()[-1]
    reader = _script(falkordb_dir, graph_name, """
        hits = mem.search("where is the spare key", user_id="u", k=1)
        print(hits[0].id)
        mem.close()
    """)
    out = subprocess.run([sys.executable, "-c", reader], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == mid


def test_catch_up_after_crash_between_graph_write_and_index_save(
    falkordb_dir: Path, graph_name: str, make_memory  # type: ignore[no-untyped-def]
) -> None:
    crasher = _script(falkordb_dir, graph_name, """
        mem.add_batch(["crash test %d: the boiler service is due" % i for i in range(30)], user_id="u")
        os._exit(0)   # dies without saving FAISS: graph has 30 memories, the index file has none
    """)
    subprocess.run([sys.executable, "-c", crasher], check=True)
    mem = make_memory()
    assert len(mem.derived.faiss) == 30
    assert mem.derived.watermark == mem.store.counter()
    assert len(mem.search("boiler service", user_id="u", k=30)) == 30


def test_two_memories_share_one_graph_and_catch_up(make_memory) -> None:  # type: ignore[no-untyped-def]
    a = make_memory()
    # same graph, separate FAISS files: what two application processes on one database look like
    b = make_memory(config=a.config.model_copy(update={"index_path": Path(str(a.config.index_dir) + "_b")}))
    rec = a.add("Shared graph: the wifi password is on the fridge.", user_id="u")[0]
    assert b.search("wifi password", user_id="u", k=1)[0].id == rec.id
    a.delete(rec.id, user_id="u")
    assert b.search("wifi password", user_id="u", k=1) == []


async def test_async_api(memory: NeuSymMemory) -> None:
    recs = await memory.aadd("Async: I enjoy climbing.", user_id="u")
    hits, stats = await asyncio.gather(memory.asearch("climbing", user_id="u"), memory.astats(user_id="u"))
    assert hits[0].id == recs[0].id and stats["memories"] == 1


def test_chat_messages_get_speakers_and_next_links(memory: NeuSymMemory) -> None:
    msgs = [{"role": "user", "content": "I adopted a dog named Rex.", "name": "Caroline"},
            {"role": "assistant", "content": "Congratulations on Rex!"},
            {"role": "user", "content": "He is a beagle.", "name": "Caroline"}]
    res = memory.add(msgs, user_id="u", session_id="s1")
    assert len(res) >= 3
    rows = memory.cypher("MATCH (a:Memory)-[:NEXT]->(b:Memory) RETURN a.id AS a, b.id AS b", all_tenants=True)
    assert len(rows) >= 2
    assert any(r.memory.source.speaker == "Caroline" for r in memory.search("dog", user_id="u"))


def test_default_scope_and_config_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NEUSYM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NEO4J_URI", raising=False)
    cfg = NeuSymConfig.from_env()
    assert cfg.data_dir == tmp_path and cfg.backend == "embedded"
    monkeypatch.setenv("NEO4J_URI", "bolt://localhost:7687")
    assert NeuSymConfig.from_env().backend == "neo4j"


def test_type_and_ttl(memory: NeuSymMemory) -> None:
    rec = memory.add("Remember the door code 4512.", user_id="u", ttl=timedelta(minutes=10),
                     type=MemoryType.FACT)[0]
    assert rec.expires_at is not None
    assert memory.search("door code", user_id="u", k=1)[0].id == rec.id
