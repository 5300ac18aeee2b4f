"""A re-embed never leaves a store of two vector widths (issue #27 item 4).

* It refuses to start while another process holds the embedded server, naming it (``StoreInUseError``): a real
  second process (``memory_worker.py``) keeps the store open.
* Every write that carries a vector checks, in its own statement, the embedder the graph records: a memory left
  open with the old embedder after a re-embed (or during one) writes nothing and says why
  (``EmbedderMismatchError``). On both backends: for a remote graph this is the whole protection, since its other
  clients cannot be seen.
* ``reembed=True`` repairs a store that already holds two widths (what such a writer left before these checks).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_multiprocess import Worker

from neusym import EmbedderMismatchError, NeuSymConfig, NeuSymMemory, StoreInUseError
from neusym.embeddings import HashingEmbedder
from neusym.errors import DimensionMismatchError
from neusym.symbolic.convert import decode_embedding, encode_embedding
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.meta import MetaStore

FACTS = ["Ana moved to Lisbon in March", "Ben adopted a grey cat called Miso", "Chloe is allergic to peanuts",
         "Dan plays the cello in a string quartet"]


def _dims(executor: Executor) -> set[int]:
    rows = executor.run("MATCH (m:Memory) RETURN m.embedding AS e", write=False)
    return {int(decode_embedding(r["e"]).shape[0]) for r in rows}


def _fill(mem: NeuSymMemory) -> list[str]:
    return [r.id for r in mem.add_batch([{"content": f, "user_id": "u1"} for f in FACTS])]


def test_a_reembed_refuses_while_another_process_holds_the_store(tmp_path: Path) -> None:
    cfg = NeuSymConfig(data_dir=tmp_path / "fk", graph_name="g", appendfsync="everysec")
    mem = NeuSymMemory(config=cfg, embedder=HashingEmbedder(256))
    try:
        _fill(mem)
        other = Worker(cfg.model_copy(update={"index_path": tmp_path / "worker-index"}))
        try:
            other("add", text="Eve is training for the Berlin marathon", user_id="u1")
            with pytest.raises(StoreInUseError) as err:
                mem.admin.reembed()
            assert err.value.holders and f"pid {other.proc.pid} " in err.value.holders[0]
            assert "memory_worker" in err.value.holders[0]
            with pytest.raises(StoreInUseError):  # the same check when the re-embed is asked for at open
                NeuSymMemory(config=cfg, embedder=HashingEmbedder(128), reembed=True)
            assert _dims(mem._engine.executor) == {256}  # nothing was converted
            assert MetaStore(mem._engine.executor).read().reembed_to is None  # nor recorded as started
        finally:
            other.close()
        report = mem.admin.reembed()  # alone now
        assert report.reembedded == len(FACTS) + 1
    finally:
        mem.close()


def test_a_writer_left_behind_by_a_reembed_writes_nothing(make_memory: Callable[..., NeuSymMemory],
                                                          executor: Executor) -> None:
    old = make_memory(embedder=HashingEmbedder(256))
    ids = _fill(old)
    new = make_memory(embedder=HashingEmbedder(128), reembed=True)  # another memory of this process: no holder
    assert _dims(executor) == {128}
    for write in (lambda: old.add("Farid prefers tea over coffee", user_id="u1", infer=False),
                  lambda: old.add_batch(["Gus fixed the bike", "Hana paints"], user_id="u1"),
                  lambda: old.update(ids[0], content="Ana moved to Porto in May", user_id="u1")):
        with pytest.raises(EmbedderMismatchError, match="re-embedded"):
            write()
    assert _dims(executor) == {128}
    assert new.get(ids[0], user_id="u1").content == FACTS[0]
    assert len(new.query(user_id="u1", limit=50)) == len(FACTS)
    # while a re-embed is recorded as running, nobody writes vectors (the re-embedder's batches excepted)
    meta = MetaStore(executor)
    state = meta.read()
    assert state is not None and state.identity is not None
    meta.start_reembed(state.identity)
    with pytest.raises(EmbedderMismatchError, match="under way"):
        new.add("Ivy runs the book club", user_id="u1", infer=False)
    meta.replace(state.identity)
    new.add("Ivy runs the book club", user_id="u1", infer=False)
    assert _dims(executor) == {128}


def test_reembed_repairs_a_store_of_two_widths(make_memory: Callable[..., NeuSymMemory], executor: Executor) -> None:
    mem = make_memory(embedder=HashingEmbedder(256))
    ids = _fill(mem)
    index_dir = mem.config.index_dir
    mem.close()
    # what a writer with another embedder left before writes checked the identity: one 128-d vector
    vec = np.ones(128, dtype=np.float32) / np.sqrt(128)
    executor.run("MATCH (m:Memory {id: $id}) SET m.embedding = $e", {"id": ids[1], "e": encode_embedding(vec)})
    shutil.rmtree(index_dir)  # the indexes are rebuilt from the graph on the next open
    assert _dims(executor) == {256, 128}
    with pytest.raises(DimensionMismatchError, match="reembed=True"):
        make_memory(embedder=HashingEmbedder(256))
    fixed = make_memory(embedder=HashingEmbedder(256), reembed=True)
    assert _dims(executor) == {256}
    assert fixed.admin.last_reembed is not None and fixed.admin.last_reembed.reembedded == len(FACTS)
    for fact in FACTS:
        hits = fixed.search(fact, user_id="u1", k=2)
        assert hits and hits[0].content == fact


def test_a_restore_by_a_writer_left_behind_writes_nothing(make_memory: Callable[..., NeuSymMemory],
                                                         executor: Executor, tmp_path: Path) -> None:
    """A restore carries vectors too: its one commit statement checks the recorded embedder like every write."""
    old = make_memory(embedder=HashingEmbedder(256))
    _fill(old)
    old.add_batch([{"content": "Kai keeps bees", "user_id": "u2"}])
    old.admin.export(tmp_path / "u2.jsonl", user_id="u2")
    old.governance.forget_tenant("u2")
    make_memory(embedder=HashingEmbedder(128), reembed=True)
    with pytest.raises(EmbedderMismatchError, match="re-embedded"):
        old.admin.restore(tmp_path / "u2.jsonl", user_id="u2")
    assert executor.run("MATCH (m:Memory {user_id: 'u2'}) RETURN count(m) AS n", write=False) == [{"n": 0}]
    assert _dims(executor) == {128}
