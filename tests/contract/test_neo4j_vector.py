"""``neural_backend="neo4j_vector"``: stage 1's dense channel runs in Neo4j's native vector index instead of FAISS.

The headline check: for the same data, FAISS mode and vector-index mode return the same results (up to ties), on
both the exact path (tenant-sized scopes) and the ANN path (``db.index.vector.queryNodes`` with over-fetch and
in-statement scope filtering). The rest covers the write path (vectors written by the memory's own CREATE), the
backfill when the mode is switched on for existing data, FAISS-mode processes joining in, dimension checks, and the
governance callers of the dense index (dedup, forget) being answered by the graph.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from neusym import NeuSymMemory, Scope, SearchResult
from neusym.embeddings import HashingEmbedder
from neusym.errors import DimensionMismatchError, EmbedderMismatchError
from neusym.neural import FaissIndex
from neusym.retrieval.graph_vectors import GraphBackedIndex
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.executors.base import Executor

pytestmark = pytest.mark.neo4j

VECTOR = {"neural_backend": "neo4j_vector"}

PEOPLE = ["Ana", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana"]
THINGS = ["sourdough bread", "trail running", "jazz piano", "orchid care", "chess openings", "kayak trips",
          "tax returns", "pottery glazes", "bird watching", "rust compiler errors"]
PLACES = ["Porto", "Nairobi", "Kyoto", "Quito", "Oslo"]


@pytest.fixture
def backend() -> str:
    """This module is Neo4j only (overrides the two-backend parameter of conftest.py)."""
    return "neo4j"


def _corpus() -> list[tuple[str, str]]:
    """(user_id, text) pairs: distinct word sets, so ties in cosine are rare; two tenants of different sizes."""
    out = []
    for i, thing in enumerate(THINGS):
        for j, person in enumerate(PEOPLE):
            if (i + j) % 3 == 0:
                continue
            place = PLACES[(i * 7 + j) % len(PLACES)]
            user = "big" if (i + j) % 4 else "small"
            out.append((user, f"{person} talked about {thing} during the trip to {place} (note {i}-{j})."))
    return out


QUERIES = ["sourdough bread in Porto", "who likes jazz piano", "kayak trips with Farah", "rust compiler errors",
           "Chen orchid care Kyoto", "tax returns", "bird watching note"]


def _same_up_to_ties(a: list[SearchResult], b: list[SearchResult], tol: float = 1e-4) -> None:
    """Same scores rank by rank; the same ids inside every group of tied scores (the last group may be cut by k)."""
    assert len(a) == len(b), ([h.id for h in a], [h.id for h in b])
    for x, y in zip(a, b, strict=True):
        assert abs(x.score - y.score) <= tol, (x.content, x.score, y.content, y.score)
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and abs(a[j + 1].score - a[i].score) <= tol:
            j += 1
        if j + 1 < len(a):
            assert {h.id for h in a[i : j + 1]} == {h.id for h in b[i : j + 1]}
        i = j + 1


def _load(mem: NeuSymMemory) -> None:
    by_user: dict[str, list[str]] = {}
    for user, text in _corpus():
        by_user.setdefault(user, []).append(text)
    for user, texts in by_user.items():
        mem.add_batch([{"content": t, "infer": False} for t in texts], user_id=user)


@pytest.mark.parametrize("path", ["exact", "ann"])
def test_vector_index_mode_returns_the_same_results_as_faiss(
    make_memory: Callable[..., NeuSymMemory], path: str
) -> None:
    faiss_mem = make_memory()
    _load(faiss_mem)  # written in FAISS mode: no graph vectors yet
    graph_mem = make_memory(config_overrides=VECTOR)  # switching the mode on backfills the existing memories
    assert graph_mem.dense_search is not None
    if path == "ann":
        graph_mem.dense_search.exact_below = 0  # always db.index.vector.queryNodes + over-fetch + filter
    faiss_mem.search("warm up", user_id="big")  # both caught up to the same write sequence
    assert len(faiss_mem.derived.faiss) == len(_corpus()) and len(graph_mem.derived.faiss) == 0
    compared = 0
    for user in ("big", "small"):
        for q in QUERIES:
            for recipe in ("dense_only", "hybrid_rrf", "hybrid_graph"):
                a = faiss_mem.search(q, user_id=user, k=8, recipe=recipe, touch=False)
                b = graph_mem.search(q, user_id=user, k=8, recipe=recipe, touch=False)
                assert a, (user, q, recipe)
                _same_up_to_ties(a, b)
                if recipe == "dense_only":
                    for x, y in zip(a, b, strict=True):
                        assert x.explanation.dense == pytest.approx(y.explanation.dense, abs=1e-4)
                compared += 1
    assert compared == 2 * len(QUERIES) * 3


def test_ann_path_keeps_tenants_apart_and_finds_small_tenants(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory(config_overrides=VECTOR)
    _load(mem)
    assert mem.dense_search is not None
    mem.dense_search.exact_below = 0
    mem.dense_search.overfetch = 1  # force the retry loop / exact fallback for the small tenant
    small = sum(1 for u, _ in _corpus() if u == "small")
    hits = mem.search("talked about the trip", user_id="small", k=small + 5, recipe="dense_only")
    assert len(hits) == small and {h.memory.scope.user_id for h in hits} == {"small"}
    nids, scores = mem.dense_search(mem.embedder.embed_query("jazz piano"), Scope(user_id="small"), ["active"], 3,
                                    eligible=small, total=len(_corpus()))
    assert len(nids) == 3 and scores == sorted(scores, reverse=True)


def test_vectors_are_written_by_the_create_and_the_update(make_memory: Callable[..., NeuSymMemory],
                                                          executor: Executor) -> None:
    mem = make_memory(config_overrides=VECTOR)
    rec = mem.add("Vectors live in the graph now.", user_id="u", infer=False)[0]
    row = executor.run("MATCH (m:Memory {id: $id}) RETURN m.embedding AS e, m.embedding_vec AS v", {"id": rec.id})[0]
    assert np.allclose(np.asarray(row["v"], np.float32), decode_embedding(row["e"]))
    mem.update(rec.id, "Vectors follow every edit of the content.", user_id="u")
    row = executor.run("MATCH (m:Memory {id: $id}) RETURN m.embedding AS e, m.embedding_vec AS v", {"id": rec.id})[0]
    assert np.allclose(np.asarray(row["v"], np.float32), decode_embedding(row["e"]))
    assert np.allclose(decode_embedding(row["e"]), mem.embedder.embed_documents(
        ["Vectors follow every edit of the content."])[0], atol=1e-6)
    assert mem.search("every edit of the content", user_id="u", k=1, recipe="dense_only")[0].id == rec.id
    assert isinstance(mem.derived.faiss, GraphBackedIndex) and len(mem.derived.faiss) == 0
    assert mem.delete(rec.id, user_id="u") == 1
    assert mem.search("every edit of the content", user_id="u", k=1, recipe="dense_only") == []
    mem.close()
    _, _, meta = FaissIndex.load(str(Path(mem.config.index_dir) / "vectors.faiss"))
    assert meta["vectors"] == "graph"


def test_faiss_mode_processes_join_in_once_the_index_exists(make_memory: Callable[..., NeuSymMemory]) -> None:
    graph_mem = make_memory(config_overrides=VECTOR)  # creates the vector index
    faiss_mem = make_memory()  # FAISS mode, opened after: writes graph vectors too
    assert faiss_mem.store.vectors and faiss_mem.dense_search is None
    rec = faiss_mem.add("Written by a FAISS-mode process.", user_id="u", infer=False)[0]
    hits = graph_mem.search("written by a FAISS-mode process", user_id="u", k=1, recipe="dense_only")
    assert [h.id for h in hits] == [rec.id]


def test_dimension_of_an_existing_index_is_checked(make_memory: Callable[..., NeuSymMemory],
                                                   executor: Executor) -> None:
    make_memory(config_overrides=VECTOR)  # 256-d index
    with pytest.raises(DimensionMismatchError, match="256-d"):
        make_memory(config_overrides=VECTOR, embedder=HashingEmbedder(64))
    with pytest.raises(EmbedderMismatchError):  # the store's recorded embedder refuses it in FAISS mode too
        make_memory(embedder=HashingEmbedder(64))
    # a store with no recorded embedder (written before identities) and no memories adopts the 64-d model; a
    # FAISS-mode process then does not write vectors into the 256-d graph index
    executor.run("MATCH (x:NeuSymMeta) DELETE x")
    other = make_memory(embedder=HashingEmbedder(64))
    assert not other.store.vectors
    other.add("a 64-d memory", user_id="u")


def test_switching_modes_on_one_index_directory_rebuilds(make_memory: Callable[..., NeuSymMemory],
                                                         tmp_path: Path) -> None:
    where = {"index_path": tmp_path / "one_dir"}
    first = make_memory(config_overrides=where)
    rec = first.add("The boiler service is due in March.", user_id="u", infer=False)[0]
    first.close()
    graph_mem = make_memory(config_overrides={**where, **VECTOR})
    assert graph_mem.search("boiler service", user_id="u", k=1, recipe="dense_only")[0].id == rec.id
    graph_mem.close()
    back = make_memory(config_overrides=where)  # a FAISS file saved in graph mode is empty: rebuilt, not trusted
    assert len(back.derived.faiss) == 1
    assert back.search("boiler service", user_id="u", k=1, recipe="dense_only")[0].id == rec.id


def test_governance_dense_lookups_are_answered_by_the_graph(make_memory: Callable[..., NeuSymMemory]) -> None:
    faiss_mem = make_memory()
    _load(faiss_mem)
    graph_mem = make_memory(config_overrides=VECTOR)
    q = faiss_mem.embedder.embed_query("Chen talked about orchid care")
    for user in ("big", "small"):
        _, allow_a = faiss_mem.derived.allowed(Scope(user_id=user), ["active"])
        _, allow_b = graph_mem.derived.allowed(Scope(user_id=user), ["active"])
        ids_a, s_a = faiss_mem.derived.faiss.search(q, 5, allow_ids=allow_a)
        ids_b, s_b = graph_mem.derived.faiss.search(q, 5, allow_ids=allow_b)
        assert np.allclose(s_a, s_b, atol=1e-4) and ids_a[0] == ids_b[0]
    # the linear fusion's "cosine of a BM25-only hit" reads vectors back: served from the graph as well
    nids = graph_mem.derived.catalog.nid[:3]
    assert np.allclose(graph_mem.derived.faiss.reconstruct(nids), faiss_mem.derived.faiss.reconstruct(nids),
                       atol=1e-6)
    assert not graph_mem.derived.faiss.reconstruct(np.asarray([10**9])).any()  # a gone memory scores 0
    # near-duplicate detection (governance) still works without FAISS
    orig = "Chen talked about orchid care during the trip to Quito (note 3-2)."
    (target,) = [h for h in faiss_mem.search(orig, user_id="big", k=1) if h.content == orig]
    decision = graph_mem.add(orig.replace(".", ", yes."), user_id="big", infer=False).decisions[0]
    assert decision.details.get("dedup") in ("near", "review") and decision.target_id == target.id


def test_a_restore_writes_graph_vectors(make_memory: Callable[..., NeuSymMemory], executor: Executor,
                                        tmp_path: Path) -> None:
    """A restored memory carries its vector for the native index (written with the node, never backfilled later)."""
    src = make_memory()
    rec = src.add("Restored vectors are searchable in the graph.", user_id="u", infer=False)[0]
    backup = tmp_path / "u.jsonl"
    src.export(backup, user_id="u")
    executor.run("MATCH (n) DETACH DELETE n")
    mem = make_memory(config_overrides=VECTOR)
    assert mem.restore(backup, user_id="u").memories == 1
    row = executor.run("MATCH (m:Memory {id: $id}) RETURN m.embedding AS e, m.embedding_vec AS v", {"id": rec.id})[0]
    assert row["v"] is not None and np.allclose(np.asarray(row["v"], np.float32), decode_embedding(row["e"]))
    assert mem.search("restored vectors searchable", user_id="u", k=1, recipe="dense_only")[0].id == rec.id
