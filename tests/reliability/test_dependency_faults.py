"""Dependency faults: the graph server dies mid-operation, the disk fills up (simulated), the FAISS / BM25 files
are truncated. Each must give a clear typed error, recover on reopen, and lose nothing that was acknowledged."""

from __future__ import annotations

import errno
import os
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reliability_support import (
    SEED,
    Expected,
    Model,
    alive,
    check_consistency,
    check_model,
    check_searchable,
    count,
    embedded_server_pid,
    kill,
    stop_embedded_server,
)

from neusym import (
    BackendError,
    BackendUnavailableError,
    NeuSymConfig,
    NeuSymError,
    NeuSymMemory,
)
from neusym.embeddings import HashingEmbedder

pytestmark = pytest.mark.slow


def _open(data_dir: Path, **cfg: Any) -> NeuSymMemory:
    config = NeuSymConfig(data_dir=data_dir, graph_name="g", appendfsync="always", **cfg)
    return NeuSymMemory(config=config, embedder=HashingEmbedder(256))


def _wait_new_server(data_dir: Path, old: int, timeout: float = 120.0) -> int:
    """Poll until falkordb.lock names a live server other than ``old`` (a sync point, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = embedded_server_pid(data_dir)
        if pid is not None and pid != old and alive(pid):
            return pid
        time.sleep(0.05)
    raise AssertionError(f"no new server for {data_dir} after {timeout}s")


def test_graph_server_dies_mid_operation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A writer thread adds continuously; the embedded server (redis-server + FalkorDB, ``appendfsync=always``) is
    SIGKILLed under it. The memory restarts it once from its AOF: the write in flight either completes on the new
    server or fails with ``BackendUnavailableError`` (never a hang, never a raw driver error), and later calls work.
    Killed again right away, the server is not restarted a second time: every call is a ``BackendUnavailableError``
    and ``close()`` still works. The next open starts it from its AOF with every acknowledged write present,
    indexed and searchable."""
    data_dir = tmp_path / "fk"
    rng = random.Random(SEED + 6)
    model = Model()
    errors: list[str] = []
    rounds = count(3, 10)
    try:
        for rnd in range(rounds):
            mem = _open(data_dir)
            stop = threading.Event()
            failure: list[BaseException] = []
            acked_after_kill: list[int] = []
            killed = threading.Event()

            def writer(mem: NeuSymMemory = mem, rnd: int = rnd, stop: threading.Event = stop,
                       failure: list[BaseException] = failure, killed: threading.Event = killed,
                       acked_after_kill: list[int] = acked_after_kill) -> None:
                i = 0
                while not stop.is_set():
                    i += 1
                    text = f"Server fault round {rnd} note {i}: the {rng.choice(['red', 'blue', 'green'])} key."
                    try:
                        res = mem.add(text, user_id=f"u{i % 3}", infer=False)
                    except BaseException as err:  # noqa: BLE001 - the test asserts its type
                        failure.append(err)
                        if not isinstance(err, BackendUnavailableError):
                            return
                        continue  # a write cut by the restart: reported, and the next one goes to the new server
                    for r in res:
                        model.items[r.id] = Expected(r.scope.user_id or "", r.content, [r.content])
                    model.acked_ops += 1
                    if killed.is_set():
                        acked_after_kill.append(i)

            t = threading.Thread(target=writer)
            t.start()
            time.sleep(rng.uniform(0.2, 1.0))
            pid = embedded_server_pid(data_dir)
            assert pid is not None and kill(pid)
            killed.set()
            new_pid = _wait_new_server(data_dir, pid)
            deadline = time.monotonic() + 120
            while len(acked_after_kill) < 5 and t.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            t.join(timeout=120)
            assert not t.is_alive(), "a write hung after the graph server died"
            bad = [f for f in failure if not isinstance(f, BackendUnavailableError)]
            if bad:
                errors.append(f"round {rnd}: {type(bad[0]).__name__}: {bad[0]}")
            assert len(acked_after_kill) >= 5, "writes did not resume on the restarted server"
            assert mem.search("key", user_id="u0", k=3)  # reads work on the restarted server
            assert kill(new_pid)  # stuck again within the cooldown: reported, not restarted again
            with pytest.raises(BackendUnavailableError):
                mem.search("key", user_id="u0")
            with pytest.raises(BackendUnavailableError):
                mem.add("After the second crash.", user_id="u0")
            mem.close()  # must not raise or hang with the server gone
            reopened = _open(data_dir)
            try:
                problems = check_consistency(reopened) + check_model(reopened, model, None)
                problems += check_searchable(reopened, model, rng.sample(list(model.items),
                                                                         min(len(model.items), 15)))
            finally:
                reopened.close()
            assert not problems, f"round {rnd}:\n" + "\n".join(problems)
    finally:
        stop_embedded_server(data_dir)
    assert not errors, errors
    with capsys.disabled():
        print(f"\n[faults/server killed] {rounds} server SIGKILLs under a writer: restarted once each, "
              f"{model.acked_ops} acknowledged writes all recovered from the AOF; every failure was "
              "BackendUnavailableError")


def test_server_restarted_under_an_open_memory(tmp_path: Path) -> None:
    """Automatic recovery without reopening: the server dies between two calls; the next call restarts it from its
    AOF and succeeds, with the writes acknowledged before the crash there."""
    data_dir = tmp_path / "fk"
    mem = _open(data_dir)
    try:
        kept = mem.add("Before the crash: the spare key is under the mat.", user_id="u", infer=False)[0]
        old = embedded_server_pid(data_dir) or -1
        assert kill(old)
        while alive(old):  # the kill has landed (a zombie counts as gone)
            time.sleep(0.01)
        assert mem.get(kept.id, user_id="u").content == kept.content  # a read: transparently retried
        assert _wait_new_server(data_dir, old) != old
        after = mem.add("After the restart: the boiler is serviced.", user_id="u", infer=False)[0]
        assert {h.id for h in mem.search("spare key boiler", user_id="u", k=5)} >= {kept.id, after.id}
    finally:
        mem.close()
        stop_embedded_server(data_dir)


def _enospc(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_disk_full_while_saving_the_indexes(make_memory: Callable[..., NeuSymMemory], falkordb_dir: Path,
                                            graph_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The derived indexes cannot be written (ENOSPC on FAISS save, then on the BM25 file): the operation reports
    a typed error that says the graph has the change, the graph does have it, the memory keeps serving it, and a
    reopen after the disk is freed is complete and consistent."""
    from neusym import IndexPersistenceError
    from neusym.neural.index import FaissIndex

    mem = make_memory(config=NeuSymConfig(data_dir=falkordb_dir, graph_name=graph_name, appendfsync="everysec",
                                          save_every=1))
    keep = mem.add("Stored before the disk filled up: passport in the top drawer.", user_id="u", infer=False)[0]
    monkeypatch.setattr(FaissIndex, "save", _enospc)
    with pytest.raises(IndexPersistenceError) as info:
        mem.add("Written while the disk is full: the bike lock code is 2231.", user_id="u", infer=False)
    assert info.value.errno == errno.ENOSPC and "graph" in str(info.value)
    # the add IS stored: the error says so (attribute and message), so a caller does not retry it into a duplicate
    assert info.value.graph_committed and "IS committed" in str(info.value)
    in_graph = mem.query(user_id="u", limit=10)
    full = next(r for r in in_graph if "bike lock" in r.content)
    assert {h.id for h in mem.search("bike lock code", user_id="u", k=3)} >= {full.id}  # served from memory
    with pytest.raises(IndexPersistenceError) as info:
        mem.delete(keep.id, user_id="u")  # the graph delete is done; only the index file is stale
    assert info.value.graph_committed
    assert mem.get_many([keep.id], user_id="u") == []
    monkeypatch.setattr(os, "replace", _enospc)  # now the BM25 file cannot be renamed into place either
    with pytest.raises(IndexPersistenceError):
        mem.close()
    monkeypatch.undo()
    reopened = make_memory(config=mem.config)
    assert check_consistency(reopened) == []
    assert {h.id for h in reopened.search("bike lock code", user_id="u", k=3)} >= {full.id}
    assert reopened.get_many([keep.id], user_id="u") == []  # the delete was not lost either
    leftovers = [p.name for p in reopened.config.index_dir.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers  # failed saves leave no temp files behind


def test_disk_full_for_the_graph(make_memory: Callable[..., NeuSymMemory],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The graph refuses writes (what Redis answers when its AOF cannot be written): a typed BackendError, nothing
    half-applied in the derived indexes, reads still served, and writing works again once the disk is freed."""
    mem = make_memory()
    kept = mem.add("Before the graph filled up: the cat eats at 7.", user_id="u", infer=False)[0]
    before = (mem.derived.watermark, len(mem.derived.faiss), mem.store.counter())
    real_run = mem.executor.run

    def full(cypher: str, params: Any = None, *, write: bool = True) -> Any:
        if write:
            raise BackendError("FalkorDB error: MISCONF Errors writing to the AOF file: No space left on device")
        return real_run(cypher, params, write=write)

    monkeypatch.setattr(mem.executor, "run", full)
    for call in (lambda: mem.add("During the outage: water the plants.", user_id="u", infer=False),
                 lambda: mem.update(kept.id, "Edited during the outage.", user_id="u"),
                 lambda: mem.forget(kept.id, user_id="u"),
                 lambda: mem.delete(kept.id, user_id="u")):
        with pytest.raises(NeuSymError) as info:
            call()
        assert isinstance(info.value, BackendError) and "No space left" in str(info.value)
    assert (mem.derived.watermark, len(mem.derived.faiss)) == before[:2]
    assert [h.id for h in mem.search("cat eats", user_id="u", k=1, touch=False)] == [kept.id]
    monkeypatch.undo()
    assert mem.store.counter() == before[2]
    assert mem.get(kept.id, user_id="u").content == kept.content
    mem.add("After the disk was freed: water the plants.", user_id="u", infer=False)
    assert check_consistency(mem) == []


@pytest.mark.parametrize("victim", ["vectors.faiss", "lexical.npz", "both", "garbage"])
def test_truncated_index_files_are_rebuilt(make_memory: Callable[..., NeuSymMemory], victim: str) -> None:
    """Truncate the persisted FAISS and/or BM25 file at many cut points: every reopen detects it, rebuilds from
    the graph, and every memory is searchable again."""
    mem = make_memory()
    texts = [f"Truncation note {i}: the {w} is in the {p}." for i, (w, p) in enumerate(
        [("torch", "van"), ("ladder", "shed"), ("passport", "drawer"), ("charger", "bag"), ("umbrella", "hall")] * 4)]
    recs = mem.add_batch(texts, user_id="u", infer=False)
    config = mem.config
    mem.close()
    index_dir = config.index_dir
    files = {"vectors.faiss": [index_dir / "vectors.faiss"], "lexical.npz": [index_dir / "lexical.npz"],
             "both": [index_dir / "vectors.faiss", index_dir / "lexical.npz"],
             "garbage": [index_dir / "vectors.faiss"]}[victim]
    originals = {f: f.read_bytes() for f in files}
    rng = random.Random(SEED + len(victim))
    cuts = count(4, 25)
    for _ in range(cuts):
        for f, data in originals.items():
            if victim == "garbage":
                f.write_bytes(bytes(rng.randrange(256) for _ in range(len(data))))
            else:
                f.write_bytes(data[: rng.randrange(len(data))])
        reopened = make_memory(config=config)
        try:
            assert len(reopened.derived.faiss) == len(recs)
            assert check_consistency(reopened) == []
            hits = reopened.search("passport drawer", user_id="u", k=5)
            assert hits and "passport" in hits[0].content
        finally:
            reopened.close()
