"""Stage 2's faster statement: candidates found by memory id (or nid for an index saved before ids were kept),
parallel-list parameters, the hub test on the hop's middle entity, and stage 1's cached scope masks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from neusym import NeuSymMemory
from neusym.engine.candidates import search_filters
from neusym.record import Scope, SearchResult
from neusym.retrieval.config import RetrievalConfig
from neusym.retrieval.derived import Catalog
from neusym.retrieval.pipeline import run_search
from neusym.retrieval.recipes import HYBRID_GRAPH

CONVERSATION = [
    {"role": "user", "content": "I adopted a dog named Rex last spring.", "name": "Caroline"},
    {"role": "assistant", "content": "Congratulations on Rex! What breed is he?"},
    {"role": "user", "content": "He is a beagle and loves the park near Lake Tahoe.", "name": "Caroline"},
    {"role": "user", "content": "Melanie painted a sunset over Lake Tahoe.", "name": "Melanie"},
    {"role": "user", "content": "Caroline lives in Denver and works at Acme.", "name": "Melanie"},
]
QUERIES = ["What dog did Caroline adopt?", "Where does Caroline live?", "what did melanie paint",
           "Lake Tahoe", "beagle park", "who works at Acme", "nothing matches zzz"]


def _search(mem: NeuSymMemory, query: str, cfg: RetrievalConfig = HYBRID_GRAPH, k: int = 10,
            user: str = "u", session: str | None = None, **filters: Any) -> list[SearchResult]:
    sc = mem.scope_for(user_id=user, session_id=session)
    return run_search(mem.store, mem.derived, query=query, qvec=mem.embedder.embed_query(query), scope=sc, k=k,
                      filters=search_filters(sc, **filters), cfg=cfg, now=1.9e9)


def _summary(results: list[SearchResult]) -> list[tuple[Any, ...]]:
    return [(r.id, round(r.score, 9), r.explanation.model_dump()) for r in results]


@pytest.fixture
def talk(memory: NeuSymMemory) -> NeuSymMemory:
    memory.add(CONVERSATION, user_id="u", session_id="s1")
    memory.add("Bob lives in Paris.", user_id="u")
    memory.add("Bob works at Acme.", user_id="u")
    memory.add("I adopted a cat named Rex too.", user_id="other")  # another tenant, same words
    return memory


def test_lookup_by_id_and_by_nid_agree(talk: NeuSymMemory) -> None:
    catalog = talk.derived.catalog
    assert catalog.key is not None
    by_id = {q: _summary(_search(talk, q)) for q in QUERIES}
    assert any(r for r in by_id.values())
    assert any(e["neighbour"] > 0 for r in by_id.values() for _, _, e in r)  # NEXT neighbours are exercised
    assert any(e["speaker"] > 0 for r in by_id.values() for _, _, e in r)
    assert any(e["entity_match"] > 0 for r in by_id.values() for _, _, e in r)
    key, catalog.key = catalog.key, None  # as loaded from an index saved before ids were kept
    try:
        assert catalog.keys_of([1]) is None
        by_nid = {q: _summary(_search(talk, q)) for q in QUERIES}
    finally:
        catalog.key = key
    assert by_nid == by_id


def test_tenants_stay_apart_on_the_fast_path(talk: NeuSymMemory) -> None:
    for q in QUERIES:
        assert all(r.memory.scope.user_id == "u" for r in _search(talk, q))
    other = _search(talk, "adopted a cat named Rex", user="other")
    assert [r.memory.content for r in other] == ["I adopted a cat named Rex too."]


def test_stage1_numbers_come_back_exactly(talk: NeuSymMemory) -> None:
    res = _search(talk, "beagle park")
    top = res[0]
    assert top.explanation.via == "neural" and top.explanation.dense_rank is not None
    assert top.explanation.dense is not None and top.explanation.lexical is not None
    assert 0.0 < top.explanation.similarity <= 1.0


def test_a_stale_id_is_dropped_not_scored_as_another_memory(talk: NeuSymMemory) -> None:
    before = _search(talk, "beagle park", k=20)
    cat = talk.derived.catalog
    victim, other = before[0].memory, before[1].memory
    pos = cat.pos_of[victim.nid]
    saved = cat.key[pos].copy() if cat.key is not None else None
    assert cat.key is not None
    cat.key[pos] = other.id.encode("ascii")  # the catalog now names another memory for this candidate
    try:
        after = _search(talk, "beagle park", k=20)
    finally:
        cat.key[pos] = saved
    # the stale candidate is dropped; the victim may still come back through another path (its entities "beagle"
    # and "park" match the query), but always as itself, and the memory the stale id names is scored once
    assert all(r.memory.content == victim.content for r in after if r.id == victim.id)
    assert [r.id for r in after].count(other.id) == 1


def test_catalog_ids_survive_saving_and_odd_ids(talk: NeuSymMemory) -> None:
    cat = talk.derived.catalog
    nids = list(cat.pos_of)
    keys = cat.keys_of(nids)
    assert keys is not None and len(set(keys)) == len(nids)
    arrays, meta = cat.to_arrays()
    again = Catalog.from_arrays(arrays, json.loads(json.dumps(meta)))
    assert again.keys_of(nids) == keys
    odd = Catalog()
    odd.put(1, "u", None, None, "active", "x" * 40)
    odd.put(2, "u", None, None, "active", "ünï")
    odd.put(3, "u", None, None, "active", "plain")
    odd.put(4, "u", None, None, "active", None)
    assert odd.keys_of([1, 2, 3]) == ["x" * 40, "ünï", "plain"]
    assert odd.keys_of([4]) is None and odd.keys_of([99]) is None
    arrays, meta = odd.to_arrays()
    again = Catalog.from_arrays(arrays, json.loads(json.dumps(meta)))
    assert again.keys_of([1, 2, 3]) == ["x" * 40, "ünï", "plain"] and again.keys_of([4]) is None
    odd.retire(1)
    assert 0 not in odd.key_extra and odd.keys_of([1]) is None


def test_catalog_without_ids_falls_back_to_nids() -> None:
    cat = Catalog()
    cat.key = None  # a catalog that keeps no ids: stage 2 looks its candidates up by nid
    cat.put(7, "u", None, None, "active", "m7")
    arrays, meta = cat.to_arrays()
    again = Catalog.from_arrays(arrays, meta)
    assert again.key is None and again.keys_of([7]) is None and again.pos_of == {7: 0}
    again.put(8, "u", None, None, "active", "m8")  # still writable, still no ids
    assert again.keys_of([8]) is None


def test_scope_masks_are_cached_until_a_change(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    first = mem.add("The orchard has apple trees.", user_id="u")[0]
    d = mem.derived
    sc = Scope(user_id="u")
    m1, allow1, n1 = d.scope_view(sc, ["active"])
    m2, _, _ = d.scope_view(sc, ["active"])
    assert m1 is m2 and n1 == 1 and not m1.flags.writeable
    with pytest.raises(ValueError):
        m1[0] = False
    mem.add("The orchard also has pear trees.", user_id="u")
    m3, _, n3 = d.scope_view(sc, ["active"])
    assert m3 is not m1 and n3 == 2
    assert [h.id for h in mem.search("apple orchard", user_id="u", k=5)][0] == first.id
    mem.delete(first.id, user_id="u")
    _, _, n4 = d.scope_view(sc, ["active"])
    assert n4 == 1
    assert first.id not in [h.id for h in mem.search("apple orchard", user_id="u", k=5)]
    other_mask, other_allow, other_n = d.scope_view(Scope(user_id="nobody"), ["active"])
    assert other_n == 0 and other_allow is not None and other_allow.size == 0
    assert np.array_equal(d.catalog.mask(sc, ["active"]), d.scope_view(sc, ["active"])[0])


def test_hop_does_not_walk_through_a_hub(make_memory: Callable[..., NeuSymMemory]) -> None:
    """Bob is related to Paris (a hub: most memories mention it) and to Acme (specific). The one-hop expansion
    reaches Carol through Acme, never the Paris memories through Paris."""
    mem = make_memory()
    mem.add("Bob lives in Paris.", user_id="u")
    mem.add("Bob works at Acme.", user_id="u")
    carol = mem.add("Carol works at Acme.", user_id="u")[0]
    dinners = ["We had dinner in Paris with the cousins.", "Paris was rainy at the museum.",
               "The Paris flat needs a new boiler.", "Lunch in Paris cost too much.",
               "A parade filled Paris at night.", "Paris metro strike again.", "Paris bakery sells croissants."]
    dinner_ids = {mem.add(t, user_id="u")[0].id for t in dinners}
    mentions = mem.cypher("MATCH (m:Memory)-[:MENTIONS]->(e:Entity {name: 'Paris'}) RETURN count(m) AS n",
                          all_tenants=True)[0]["n"]
    assert mentions > 4  # a hub for hub_degree=4
    cfg = HYBRID_GRAPH.with_(candidates=1, hub_degree=4, name="narrow")
    res = _search(mem, "Bob", cfg=cfg, k=50)
    by_id = {r.id: r for r in res}
    assert carol.id in by_id and by_id[carol.id].explanation.graph == pytest.approx(0.5)
    assert not dinner_ids & {r.id for r in res if r.explanation.graph > 0}


def test_an_index_over_a_replaced_graph_is_rebuilt(make_memory: Callable[..., NeuSymMemory], falkordb_dir: Any,
                                                   graph_name: str, tmp_path: Any) -> None:
    """The graph is emptied and refilled by another process up to the same write sequence: the saved index's
    watermark matches, but its memories are not the graph's. The open notices and rebuilds, instead of scoring
    other memories under their nids (or dropping every candidate as a stale id)."""
    from neusym import NeuSymConfig
    from neusym.symbolic.executors.falkordb import FalkorDBExecutor

    first = make_memory()
    first.add_batch([{"content": t, "infer": False} for t in
                     ["The red kite nests in the oak.", "Tea is brewed at noon.", "Mars has two moons."]],
                    user_id="u")
    first.close()
    ex = FalkorDBExecutor(graph_name, unix_socket_path=str(falkordb_dir / "falkordb.sock"), stop_on_close=False)
    ex.delete_graph()
    ex.close()
    other = make_memory(config=NeuSymConfig(data_dir=falkordb_dir, graph_name=graph_name, appendfsync="everysec",
                                            index_path=tmp_path / "elsewhere"))
    replaced = other.add_batch([{"content": t, "infer": False} for t in
                                ["Violins need new strings.", "The ferry leaves at six.", "Snow closed the pass."]],
                               user_id="u")
    other.close()
    again = make_memory()
    assert again.derived.watermark == 3
    hits = again.search("When does the ferry leave?", user_id="u", k=1)
    assert [h.id for h in hits] == [replaced[1].id]
    assert "The red kite nests in the oak." not in [h.memory.content for h in again.search("kite oak", user_id="u")]


FILTERS: list[dict[str, Any]] = [
    {},
    {"session": "s1"},
    {"types": ["fact"]},
    {"tags": ["pets"]},
    {"entities": ["Caroline"]},
    {"time_from": 1.6e9, "time_to": 1.75e9},
    {"valid_at": 1.7e9},
    {"min_confidence": 0.7},
    {"include_expired": True},
    {"statuses": ["active", "superseded"]},
    {"predicate": "lives_in"},
    {"predicate": "lives_in", "objects": ["Denver"]},
    {"objects": ["Acme"]},
    {"types": ["fact", "observation"], "tags": ["pets"], "time_from": 1.6e9, "session": "s1"},
]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: ",".join(f) or "none")
def test_every_filter_works_the_same_by_id_and_by_nid(talk: NeuSymMemory, filters: dict[str, Any]) -> None:
    talk.add("The beagle has a vet visit; the dog needs shots.", user_id="u", session_id="s1", tags=["pets"],
             valid_from=1.65e9)
    talk.add("Old note about the dog park, already expired.", user_id="u", session_id="s1", tags=["pets"],
             ttl=0.001)
    queries = ["dog", "Where does Caroline live?", "who works at Acme", "beagle shots"]
    by_id = {q: _summary(_search(talk, q, k=20, **filters)) for q in queries}
    catalog = talk.derived.catalog
    key, catalog.key = catalog.key, None
    try:
        by_nid = {q: _summary(_search(talk, q, k=20, **filters)) for q in queries}
    finally:
        catalog.key = key
    assert by_id == by_nid
    assert any(by_id.values())  # every filter set keeps something to compare
    if filters and "statuses" not in filters:  # (nothing here is superseded: the status filter changes nothing)
        unfiltered = {q: _summary(_search(talk, q, k=20)) for q in queries}
        assert unfiltered != by_id  # ... and every one of them changes the results
