"""``mem.export`` / ``mem.restore`` on both backends: exact round trip, and all or nothing.

A restore is staged under labels no read path matches and made visible by one statement (see
``neusym.symbolic.transfer``). These tests break it at every point that can break (the embedder mid-way, a
concurrent writer taking a restored id before the commit, the file changing under the restore, the process dying
mid-way) and check that the store is exactly as it was: every node label, every relationship type, the write
counter, the tenant's export. Then the retry works.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from neusym import BackendError, EmbeddingError, InvalidInputError, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic import transfer
from neusym.symbolic.transfer import StagedRestore, sweep_stale


class FlakyEmbedder(HashingEmbedder):
    """The hashing embedder, failing on the ``fail_on``-th ``embed_documents`` call (a model that dies mid-way)."""

    def __init__(self, dim: int = 256) -> None:
        super().__init__(dim)
        self.calls = 0
        self.fail_on: int | None = None

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_on is not None and self.calls == self.fail_on:
            raise EmbeddingError("the embedding model died")
        return super().embed_documents(texts)


def _seed(mem: NeuSymMemory, n: int = 250) -> None:
    mem.add("I live in Porto.", user_id="ana", session_id="s1")
    mem.add("I moved to Lisbon.", user_id="ana", session_id="s2")
    mem.add([{"role": "user", "name": "Ana", "content": "My sister Marta lives in Braga."},
             {"role": "assistant", "content": "Braga has the best bakeries."}], user_id="ana",
            session_id="s3")
    mem.add_batch([f"Parcel {i} left the Porto warehouse on day {i}." for i in range(n)], user_id="ana",
                  infer=False)
    mem.add("Bob keeps bees in Ghent.", user_id="bob")


def _wipe(mem: NeuSymMemory) -> None:
    mem.executor.run("MATCH (n) DETACH DELETE n")
    mem.store.setup()


def _state(mem: NeuSymMemory) -> dict[str, Any]:
    run = mem.executor.run
    return {
        "nodes": sorted((str(r["l"]), r["n"]) for r in run("MATCH (n) RETURN labels(n) AS l, count(*) AS n")),
        "edges": sorted((r["t"], r["n"]) for r in run("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")),
        "counter": mem.store.counter(),
        "bob": [json.dumps(x, sort_keys=True) for x in _export(mem, "bob") if x["kind"] != "header"],
    }


def _export(mem: NeuSymMemory, user: str, **kw: Any) -> list[dict[str, Any]]:
    buf = io.StringIO()
    mem.export(buf, user_id=user, **kw)
    return [json.loads(x) for x in buf.getvalue().splitlines()]


def _body(lines: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(x, sort_keys=True) for x in lines if x["kind"] != "header"]


def _fresh_target(make_memory: Callable[..., NeuSymMemory], source: NeuSymMemory, **kw: Any) -> NeuSymMemory:
    """The same graph emptied, with Bob written again: the restore target (one Neo4j database per test)."""
    _wipe(source)
    target = make_memory(**kw)
    target.add("Bob keeps bees in Ghent.", user_id="bob")
    return target


def test_round_trip_is_exact_and_searchable(make_memory: Callable[..., NeuSymMemory], tmp_path: Path) -> None:
    mem = make_memory()
    _seed(mem, n=20)
    path = tmp_path / "ana.jsonl.gz"
    report = mem.export(path, user_id="ana")
    assert report.counts["memory"] >= 24 and report.scope == {"user_id": "ana", "agent_id": None, "session_id": None}
    assert (path.stat().st_mode & 0o777) == 0o600  # a backup holds every memory of the tenant: private
    original = _export(mem, "ana")
    ids = [x["id"] for x in original if x["kind"] == "memory"]
    before = {r.id: r.model_dump(exclude={"nid", "seq"}) for r in mem.get_many(ids, user_id="ana")}

    target = _fresh_target(make_memory, mem)
    out = target.restore(path, user_id="ana")
    assert (out.memories, out.skipped, out.dry_run) == (report.counts["memory"], 0, False)
    assert (out.edges, out.audit) == (report.counts["edge"], report.counts["audit"])
    assert _body(_export(target, "ana")) == _body(original)
    assert {r.id: r.model_dump(exclude={"nid", "seq"}) for r in target.get_many(ids, user_id="ana")} == before
    hits = target.search("where does Ana live now?", user_id="ana", k=3, touch=False)
    assert hits and any("Lisbon" in h.content for h in hits)  # the derived indexes caught up from the graph
    assert not target.search("bees", user_id="ana", touch=False) or all(
        h.memory.scope.user_id == "ana" for h in target.search("bees", user_id="ana", touch=False))


def test_a_failure_mid_restore_leaves_the_store_as_it_was_and_a_retry_works(
        make_memory: Callable[..., NeuSymMemory], tmp_path: Path) -> None:
    mem = make_memory()
    _seed(mem)
    path = tmp_path / "ana.jsonl"
    mem.export(path, user_id="ana", embeddings=False)  # the restore embeds, batch by batch
    original = _export(mem, "ana")
    flaky = FlakyEmbedder(256)
    target = _fresh_target(make_memory, mem, embedder=flaky)
    before = _state(target)
    flaky.calls, flaky.fail_on = 0, 2  # the second batch of 200 memories: after the first one was staged
    with pytest.raises(EmbeddingError):
        target.restore(path, user_id="ana")
    assert flaky.calls == 2
    assert _state(target) == before
    assert target.query(user_id="ana") == [] and target.stats(user_id="ana")["memories"] == 0
    flaky.fail_on = None
    out = target.restore(path, user_id="ana")
    assert out.memories == sum(1 for x in original if x["kind"] == "memory") and out.reembedded == out.memories
    assert _body(_export(target, "ana")) == _body(original)


def test_a_concurrent_writer_taking_a_restored_id_aborts_the_commit(
        make_memory: Callable[..., NeuSymMemory], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = make_memory()
    _seed(mem, n=5)
    path = tmp_path / "ana.jsonl"
    mem.export(path, user_id="ana")
    original = _export(mem, "ana")
    target = _fresh_target(make_memory, mem)
    taken = next(x["id"] for x in original if x["kind"] == "memory")
    commit = StagedRestore.commit

    def racing_commit(self: StagedRestore, **kw: Any) -> dict[str, int]:  # another process takes that id first
        self.store.executor.run("CREATE (:Memory {id: $id, user_id: 'ana', content: 'x', nid: -1, seq: -1})",
                                {"id": taken})
        return commit(self, **kw)

    before = _state(target)
    monkeypatch.setattr(StagedRestore, "commit", racing_commit)
    with pytest.raises(BackendError, match="nothing was restored"):
        target.restore(path, user_id="ana")
    target.executor.run("MATCH (m:Memory {id: $id}) DELETE m", {"id": taken})
    assert _state(target) == before
    monkeypatch.setattr(StagedRestore, "commit", commit)
    target.restore(path, user_id="ana")
    assert _body(_export(target, "ana")) == _body(original)


def test_a_file_changed_during_the_restore_is_not_restored(make_memory: Callable[..., NeuSymMemory],
                                                           tmp_path: Path) -> None:
    mem = make_memory()
    _seed(mem)
    path = tmp_path / "ana.jsonl"
    mem.export(path, user_id="ana")
    text = path.read_text()
    target = _fresh_target(make_memory, mem)
    before = _state(target)

    def tamper(done: int, total: int) -> None:  # called while writing, after the validation pass
        path.write_text(text.replace("Porto", "Paris"))

    with pytest.raises(InvalidInputError, match="changed while it was being restored"):
        target.restore(path, user_id="ana", progress=tamper)
    assert _state(target) == before


def test_a_killed_restore_stays_invisible_and_is_swept(make_memory: Callable[..., NeuSymMemory],
                                                       tmp_path: Path) -> None:
    mem = make_memory()
    _seed(mem, n=5)
    path = tmp_path / "ana.jsonl"
    mem.export(path, user_id="ana")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    target = _fresh_target(make_memory, mem)
    before = _state(target)
    dead = StagedRestore(target.store).begin()  # a process that staged and then died: never committed or aborted
    dead.memories([{"props": x["props"], "embedding": x["embedding"]} for x in lines if x["kind"] == "memory"])
    dead.entities([{"uid": x["uid"], "props": x["props"]} for x in lines if x["kind"] == "entity"])
    staged = target.executor.run(f"MATCH (n:{transfer.STAGED_MEMORY}) RETURN count(n) AS n")
    assert staged[0]["n"] == sum(1 for x in lines if x["kind"] == "memory")
    assert target.query(user_id="ana") == [] and target.stats(user_id="ana")["memories"] == 0
    assert target.search("Porto", user_id="ana", touch=False) == []
    assert [x for x in _export(target, "ana") if x["kind"] == "memory"] == []
    target.rebuild_index()
    assert target.search("Porto", user_id="ana", touch=False) == []
    # a restore while the dead one's items are still there (not yet stale) is not disturbed by them
    out = target.restore(path, user_id="ana")
    assert out.memories == sum(1 for x in lines if x["kind"] == "memory")
    assert sweep_stale(target.store, older_than=0) == 1
    leftovers = target.executor.run(f"MATCH (n:{transfer.STAGED_MEMORY}) RETURN count(n) AS n")
    assert leftovers[0]["n"] == 0
    after = _state(target)
    assert after["bob"] == before["bob"]
    assert _body(_export(target, "ana")) == _body(lines)


def test_restore_reads_a_non_seekable_stream_twice(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    _seed(mem, n=3)
    text = "".join(json.dumps(x, sort_keys=True) + "\n" for x in _export(mem, "ana"))
    target = _fresh_target(make_memory, mem)

    class Pipe(io.StringIO):
        def seekable(self) -> bool:
            return False

    dry = target.restore(Pipe(text), user_id="ana", dry_run=True)
    assert dry.dry_run and dry.memories > 0 and target.stats(user_id="ana")["memories"] == 0
    out = target.restore(Pipe(text), user_id="ana")
    assert out.memories == dry.memories and target.stats(user_id="ana")["memories"] == out.memories
