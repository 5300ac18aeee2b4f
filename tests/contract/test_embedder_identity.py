"""The store records which embedder wrote it and refuses another one; ``reembed`` converts it, losing nothing.

Runs on FalkorDB and Neo4j (see conftest). The embedders are the deterministic hashing model at different widths
and renamed ones: what is checked is the identity bookkeeping and the re-embed path, not semantics.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from neusym import EmbedderMismatchError, NeuSymMemory
from neusym.embeddings import EmbedderIdentity, HashingEmbedder
from neusym.errors import DimensionMismatchError
from neusym.symbolic.convert import decode_embedding
from neusym.symbolic.executors.base import Executor

FACTS = [
    "Ana moved to Lisbon in March",
    "Ben adopted a grey cat called Miso",
    "The quarterly report is due on Friday",
    "Chloe is allergic to peanuts",
    "Dan plays the cello in a string quartet",
    "The office wifi password changed last week",
    "Eve is training for the Berlin marathon",
    "Farid prefers tea over coffee in the morning",
]


class Renamed:
    """The hashing model under another name/identity: same width, vectors counted as another model's (or as the
    same model on another runtime, when ``model`` is shared)."""

    def __init__(self, dim: int, name: str, model: str | None = None, runtime: str = "test", salt: str = "") -> None:
        self.inner = HashingEmbedder(dim)
        self._identity = EmbedderIdentity(name=name, model=model or name, dimension=dim, runtime=runtime)
        self.salt = salt
        self.calls = 0
        self.fail_after: int | None = None

    name = property(lambda self: self._identity.name)
    dimension = property(lambda self: self._identity.dimension)
    identity = property(lambda self: self._identity)

    def embed_documents(self, texts: list[str]) -> Any:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("model crashed")
        return self.inner.embed_documents([self.salt + t for t in texts])

    def embed_query(self, text: str) -> Any:
        return self.inner.embed_query(self.salt + text)


def _fill(mem: NeuSymMemory) -> list[str]:
    out = mem.add_batch([{"content": f, "user_id": "u1"} for f in FACTS[:5]]
                        + [{"content": f, "user_id": "u2"} for f in FACTS[5:]])
    ids = [r.id for r in out]
    assert len(ids) == len(FACTS)
    return ids


def _findable(mem: NeuSymMemory) -> None:
    for i, fact in enumerate(FACTS):
        user = "u1" if i < 5 else "u2"
        hits = mem.search(fact, user_id=user, k=3)
        assert hits and hits[0].content == fact, (fact, [h.content for h in hits])


def _snapshot(executor: Executor) -> list[dict[str, Any]]:
    """Everything about the memories except their vectors and sequence numbers, plus the audit and facts."""
    rows = executor.run("MATCH (m:Memory) RETURN m.id AS id, m.content AS content, m.status AS status, "
                        "m.version AS version, m.user_id AS user, m.entity_uids AS ents, m.created_at AS created "
                        "ORDER BY id", write=False)
    audit = executor.run("MATCH (a:Audit) RETURN count(a) AS n", write=False)
    facts = executor.run("MATCH (:Entity)-[r:RELATES]->(:Entity) RETURN count(r) AS n", write=False)
    return [dict(r) for r in rows] + [{"audit": audit[0]["n"], "facts": facts[0]["n"]}]


def _stored_dims(executor: Executor) -> set[int]:
    rows = executor.run("MATCH (m:Memory) RETURN m.embedding AS e", write=False)
    return {int(decode_embedding(r["e"]).shape[0]) for r in rows}


def test_identity_recorded_and_same_embedder_reopens(make_memory: Callable[..., NeuSymMemory],
                                                      executor: Executor) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    _fill(mem)
    assert mem.embedder_identity.name == "neusym-hashing-v1-256"
    rows = executor.run("MATCH (x:NeuSymMeta {key: 'embedder'}) RETURN x.identity AS i", write=False)
    assert len(rows) == 1 and EmbedderIdentity.from_json(rows[0]["i"]) == HashingEmbedder(256).identity
    mem.close()
    again = make_memory(embedder=HashingEmbedder(256))
    _findable(again)


@pytest.mark.parametrize("other", [
    pytest.param(lambda: HashingEmbedder(128), id="other-width"),
    pytest.param(lambda: Renamed(256, "acme/other-model"), id="same-width-other-model"),
])
def test_other_model_is_refused_with_a_typed_error(make_memory: Callable[..., NeuSymMemory],
                                                    other: Callable[[], Any]) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    _fill(mem)
    mem.close()
    with pytest.raises(EmbedderMismatchError) as info:
        make_memory(embedder=other())
    err = info.value
    assert isinstance(err, DimensionMismatchError)  # callers catching the older, wider type still catch it
    assert "neusym reindex --reembed" in str(err) and "neusym-hashing-v1-256" in str(err)
    assert isinstance(err.stored, EmbedderIdentity) and err.stored.name == "neusym-hashing-v1-256"
    # refusing did not touch the store: the original embedder still opens and finds everything
    _findable(make_memory(embedder=HashingEmbedder(256)))


def test_reembed_converts_everything_and_loses_nothing(make_memory: Callable[..., NeuSymMemory],
                                                       executor: Executor) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    ids = _fill(mem)
    mem.update(ids[0], content="Ana moved to Porto in May", user_id="u1")  # its current text is what counts
    facts_now = ["Ana moved to Porto in May", *FACTS[1:]]
    before = _snapshot(executor)
    history = mem.history(ids[0], user_id="u1")
    mem.close()

    make_memory(embedder=HashingEmbedder(128), reembed=True).close()
    reopened = make_memory(embedder=HashingEmbedder(128))  # a normal open now: identity is the new model
    assert reopened.embedder_identity.name == "neusym-hashing-v1-128"
    assert _stored_dims(executor) == {128}
    assert _snapshot(executor) == before
    assert reopened.history(ids[0], user_id="u1") == history
    assert len(reopened.derived.faiss) == len(FACTS)
    for i, fact in enumerate(facts_now):
        hits = reopened.search(fact, user_id="u1" if i < 5 else "u2", k=3)
        assert hits and hits[0].content == fact
    # the old model is now the stranger
    with pytest.raises(EmbedderMismatchError):
        make_memory(embedder=HashingEmbedder(256))
    # an explicit reembed() on an open memory re-embeds everything again, reporting progress per batch
    seen: list[tuple[int, int]] = []
    report = reopened.reembed(batch_size=3, progress=lambda done, total: seen.append((done, total)))
    assert report.reembedded == len(FACTS) and seen == [(3, 8), (6, 8), (8, 8)]
    assert _snapshot(executor) == before


def test_reembed_is_resumable_after_a_crash(make_memory: Callable[..., NeuSymMemory], executor: Executor) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    _fill(mem)
    mem.close()
    crashing = Renamed(128, "acme/new-model")
    crashing.fail_after = 1  # the first batch of 3 lands, the second call crashes
    from neusym.reembed import reembed_store
    from neusym.symbolic.store import SymbolicStore

    with pytest.raises(RuntimeError, match="model crashed"):
        reembed_store(SymbolicStore(executor), crashing, batch_size=3)
    assert _stored_dims(executor) == {256, 128}  # half-way: both widths in the graph

    # nobody opens a half-converted store by accident, with either model
    for emb in (HashingEmbedder(256), Renamed(128, "acme/new-model")):
        with pytest.raises(EmbedderMismatchError, match="did not finish"):
            make_memory(embedder=emb)
    resumed = Renamed(128, "acme/new-model")
    mem2 = make_memory(embedder=resumed, reembed=True)
    assert resumed.calls == 1  # resumed from the cursor: only the 5 memories after the first batch, one batch
    assert _stored_dims(executor) == {128}
    assert len(mem2.derived.faiss) == len(FACTS)
    for i, fact in enumerate(FACTS):
        hits = mem2.search(fact, user_id="u1" if i < 5 else "u2", k=3)
        assert hits and hits[0].content == fact


def test_same_model_other_runtime_opens_with_a_warning(make_memory: Callable[..., NeuSymMemory],
                                                       caplog: pytest.LogCaptureFixture) -> None:
    fp32 = Renamed(256, "acme/mini@fp32", model="acme/mini", runtime="torch-fp32")
    mem = make_memory(embedder=fp32)
    _fill(mem)
    mem.close()
    int8 = Renamed(256, "acme/mini@int8", model="acme/mini", runtime="onnxruntime-int8")
    with caplog.at_level(logging.WARNING, logger="neusym.reembed"):
        mem2 = make_memory(embedder=int8)
    assert "same model on another runtime" in caplog.text and "reindex --reembed" in caplog.text
    assert mem2.embedder_identity.name == "acme/mini@fp32"  # the record keeps saying what the vectors are
    _findable(mem2)
    report = mem2.reembed()
    assert report.reembedded == len(FACTS) and report.source is not None and report.source.name == "acme/mini@fp32"
    assert mem2.embedder_identity.name == "acme/mini@int8"
    _findable(mem2)


def test_store_from_before_identities_adopts_or_refuses(make_memory: Callable[..., NeuSymMemory],
                                                        executor: Executor,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    _fill(mem)
    mem.close()
    executor.run("MATCH (x:NeuSymMeta) DELETE x")  # what a store written by an older NeuSym looks like
    with pytest.raises(EmbedderMismatchError, match="did not record"):
        make_memory(embedder=HashingEmbedder(128))
    with caplog.at_level(logging.WARNING, logger="neusym.reembed"):
        adopted = make_memory(embedder=HashingEmbedder(256))
    assert "predates embedder identities" in caplog.text
    _findable(adopted)
    rows = executor.run("MATCH (x:NeuSymMeta {key: 'embedder'}) RETURN x.identity AS i", write=False)
    assert EmbedderIdentity.from_json(rows[0]["i"]).name == "neusym-hashing-v1-256"


@pytest.mark.parametrize("backend", [pytest.param("neo4j", marks=pytest.mark.neo4j)], indirect=True)
def test_reembed_rebuilds_the_graph_vector_index_at_the_new_width(
    backend: str, make_memory: Callable[..., NeuSymMemory], executor: Executor,
) -> None:
    """The native vector index (Neo4j only) has a fixed width: a re-embed to another width rebuilds it."""
    vec = {"neural_backend": "neo4j_vector"}
    mem = make_memory(embedder=HashingEmbedder(256), config_overrides=vec)
    _fill(mem)
    mem.close()
    new = make_memory(embedder=HashingEmbedder(128), config_overrides=vec, reembed=True)
    rows = executor.run("SHOW VECTOR INDEXES YIELD name, options WHERE name = 'neusym_memory_embedding' "
                        "RETURN options.indexConfig.`vector.dimensions` AS d", write=False)
    assert rows and int(rows[0]["d"]) == 128
    widths = executor.run("MATCH (m:Memory) RETURN DISTINCT size(m.embedding_vec) AS n", write=False)
    assert [int(r["n"]) for r in widths] == [128]
    q = np.asarray(new.embedder.embed_query(FACTS[2]))
    assert q.shape == (128,)
    _findable(new)
