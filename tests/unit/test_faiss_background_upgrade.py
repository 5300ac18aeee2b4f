"""kind="auto" becomes HNSW by itself, off the hot path: a background build from a snapshot, writes made meanwhile
replayed by id, and the swap under the lock. Builds are paused at a known point (a patched ``_Shadow.put``) so the
interleavings are deterministic, not timed."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from neusym.neural import FaissIndex
from neusym.neural import index as index_mod
from neusym.retrieval.derived import DerivedIndexes

DIM = 16


def _vecs(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


class Pause:
    """Blocks the background build right after its first batch, until released."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reached = threading.Event()
        self.release = threading.Event()
        original = index_mod._Shadow.put

        def put(shadow: index_mod._Shadow, ids: np.ndarray, vecs: np.ndarray) -> None:
            original(shadow, ids, vecs)
            if not self.reached.is_set():
                self.reached.set()
                assert self.release.wait(30), "test never released the build"

        monkeypatch.setattr(index_mod._Shadow, "put", put)


@pytest.fixture
def pause(monkeypatch: pytest.MonkeyPatch) -> Iterator[Pause]:
    p = Pause(monkeypatch)
    yield p
    p.release.set()


def _auto(n: int, threshold: int = 100, seed: int = 0) -> tuple[FaissIndex, np.ndarray, np.ndarray]:
    idx = FaissIndex(DIM, kind="auto", hnsw_threshold=threshold)
    ids = np.arange(n, dtype=np.int64)
    vecs = _vecs(n, seed)
    idx.add(ids, vecs)
    return idx, ids, vecs


def _finds_itself(idx: FaissIndex, ids: np.ndarray, vecs: np.ndarray) -> None:
    for i, v in zip(ids.tolist(), vecs, strict=True):
        got, scores = idx.search(v, 1)
        assert got.tolist() == [i]
        assert scores[0] == pytest.approx(1.0, abs=1e-5)


def test_not_due_below_threshold_or_for_fixed_kinds() -> None:
    idx, _, _ = _auto(99)
    assert not idx.upgrade_due and idx.upgrade_in_background() is None and idx.structure == "flat"
    for kind in ("flat", "hnsw"):
        fixed = FaissIndex(DIM, kind=kind, hnsw_threshold=10)  # type: ignore[arg-type]
        fixed.add(np.arange(50), _vecs(50, 1))
        assert not fixed.upgrade_due and fixed.upgrade_in_background() is None


def test_background_upgrade_swaps_in_an_equivalent_hnsw() -> None:
    idx, ids, vecs = _auto(300)
    assert idx.upgrade_due
    builder = idx.upgrade_in_background()
    assert builder is not None and builder.daemon
    assert idx.wait_upgrade(30)
    assert idx.structure == "hnsw" and idx.kind == "auto" and len(idx) == 300 and idx.tombstones == 0
    assert not idx.upgrade_due and not idx.upgrading and idx.upgrade_in_background() is None
    _finds_itself(idx, ids, vecs)


def test_writes_during_the_build_are_replayed(pause: Pause) -> None:
    idx, ids, vecs = _auto(300)
    assert idx.upgrade_in_background() is not None
    assert pause.reached.wait(30)
    assert idx.upgrading and idx.structure == "flat"
    # the flat index keeps serving reads and writes meanwhile
    _finds_itself(idx, ids[:5], vecs[:5])
    new_ids = np.arange(1000, 1040, dtype=np.int64)
    new_vecs = _vecs(40, 7)
    idx.add(new_ids, new_vecs)
    moved = _vecs(10, 8)
    idx.add(ids[:10], moved)  # overwrite: the old vectors must not survive in the graph
    assert idx.remove(ids[10:30]) == 20
    assert idx.upgrade_in_background() is None  # one build at a time
    pause.release.set()
    assert idx.wait_upgrade(30)
    assert idx.structure == "hnsw" and len(idx) == 300 + 40 - 20
    _finds_itself(idx, new_ids, new_vecs)
    _finds_itself(idx, ids[:10], moved)
    _finds_itself(idx, ids[30:], vecs[30:])
    live = set(idx.ids().tolist())
    assert live.isdisjoint(ids[10:30].tolist())
    for v in vecs[10:30]:  # removed ids never come back
        assert set(idx.search(v, 5)[0].tolist()).isdisjoint(ids[10:30].tolist())


def test_many_writes_during_the_build_are_replayed_outside_the_lock(pause: Pause,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "_SWAP_REPLAY", 5)
    idx, ids, vecs = _auto(200)
    idx.upgrade_in_background()
    assert pause.reached.wait(30)
    extra = np.arange(5000, 5100, dtype=np.int64)
    extra_vecs = _vecs(100, 9)
    idx.add(extra, extra_vecs)
    pause.release.set()
    assert idx.wait_upgrade(30)
    assert idx.structure == "hnsw" and len(idx) == 300
    _finds_itself(idx, extra, extra_vecs)
    _finds_itself(idx, ids, vecs)


def test_clear_during_the_build_voids_it(pause: Pause) -> None:
    idx, _, _ = _auto(200)
    idx.upgrade_in_background()
    assert pause.reached.wait(30)
    idx.clear()
    idx.add(np.arange(3), _vecs(3, 2))
    pause.release.set()
    assert idx.wait_upgrade(30)
    assert idx.structure == "flat" and len(idx) == 3


def test_synchronous_upgrade_waits_for_the_background_one() -> None:
    idx, ids, vecs = _auto(300)
    idx.upgrade_in_background()
    assert idx.maybe_upgrade()  # joins the running build rather than building twice
    assert idx.structure == "hnsw" and not idx.upgrading and len(idx) == 300
    _finds_itself(idx, ids[:20], vecs[:20])


def test_a_failed_build_leaves_the_flat_index_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    idx, ids, vecs = _auto(200)

    def broken(self: index_mod._Shadow, ids: np.ndarray, vecs: np.ndarray) -> None:
        raise MemoryError("simulated")

    monkeypatch.setattr(index_mod._Shadow, "put", broken)
    idx.upgrade_in_background()
    assert idx.wait_upgrade(30)
    assert idx.structure == "flat" and not idx.upgrading and len(idx) == 200
    _finds_itself(idx, ids[:10], vecs[:10])
    idx.add(np.asarray([999]), _vecs(1, 3))  # writes are no longer journalled for a dead build
    assert idx._touched is None


def _rows(start: int, n: int, vecs: np.ndarray) -> list[dict[str, object]]:
    return [{"nid": start + i, "id": f"m{start + i}", "content": f"memory number {start + i}", "status": "active",
             "user_id": "u", "embedding": vecs[i]} for i in range(n)]


def test_derived_indexes_upgrade_on_apply_and_on_load(tmp_path: Path) -> None:
    d = DerivedIndexes(DIM, tmp_path, model="test")
    d.faiss = FaissIndex(DIM, kind="auto", hnsw_threshold=100)
    vecs = _vecs(150, 4)
    d.apply(_rows(1, 90, vecs))
    assert not d.faiss.upgrading and d.faiss.structure == "flat"
    d.apply(_rows(91, 60, vecs[90:]))  # crosses the threshold: the build starts, the apply returns
    assert d.faiss.wait_upgrade(30) and d.faiss.structure == "hnsw"
    d.save()
    again = DerivedIndexes(DIM, tmp_path, model="test")
    assert again.load() and again.faiss.structure == "hnsw" and len(again.faiss) == 150

    # a flat "auto" file saved past the threshold (the process ended before the build finished) upgrades on load
    flat = DerivedIndexes(DIM, tmp_path / "flat", model="test", background_upgrade=False)
    flat.faiss = FaissIndex(DIM, kind="auto", hnsw_threshold=100)
    flat.apply(_rows(1, 150, vecs))
    assert flat.faiss.structure == "flat"
    flat.save()
    loaded = DerivedIndexes(DIM, tmp_path / "flat", model="test")
    assert loaded.load()
    assert loaded.faiss.wait_upgrade(30) and loaded.faiss.structure == "hnsw" and len(loaded.faiss) == 150


def test_interpreter_exit_stops_a_running_build(pause: Pause) -> None:
    idx, ids, vecs = _auto(200)
    idx.upgrade_in_background()
    assert pause.reached.wait(30)
    assert idx in index_mod._BUILDING
    stopper = threading.Thread(target=index_mod._stop_background_builds)
    stopper.start()  # blocks until the paused step returns
    pause.release.set()
    stopper.join(30)
    assert not stopper.is_alive() and not idx.upgrading and idx not in index_mod._BUILDING
    assert idx.structure == "flat" and len(idx) == 200
    _finds_itself(idx, ids[:5], vecs[:5])


def test_writes_to_steps_not_yet_copied(pause: Pause, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "_BACKGROUND_BATCH", 50)
    idx, ids, vecs = _auto(300)
    idx.upgrade_in_background()
    assert pause.reached.wait(30)  # the first 50 are in the new graph, the other steps not copied yet
    moved = _vecs(20, 11)
    idx.add(ids[200:220], moved)
    assert idx.remove(ids[250:260]) == 10
    pause.release.set()
    assert idx.wait_upgrade(30)
    assert idx.structure == "hnsw" and len(idx) == 290
    _finds_itself(idx, ids[200:220], moved)
    _finds_itself(idx, ids[:200], vecs[:200])
    assert set(idx.ids().tolist()).isdisjoint(ids[250:260].tolist())


def test_cancel_stops_the_build_without_waiting(pause: Pause) -> None:
    idx, _, _ = _auto(200)
    idx.upgrade_in_background()
    assert pause.reached.wait(30)
    idx.cancel_upgrade()  # returns at once, the build is paused
    assert idx.upgrading
    pause.release.set()
    assert idx.wait_upgrade(30)
    assert idx.structure == "flat" and len(idx) == 200
    idx.cancel_upgrade()  # nothing running: a no-op


def test_closing_a_memory_abandons_a_running_build(pause: Pause, tmp_path: Path) -> None:
    """``NeuSymMemory.close`` must not wait minutes for an HNSW build (nor leave a thread inside faiss at exit): the
    build is cancelled at its next step, the flat index is saved, and the next open starts the build again."""
    from neusym import NeuSymConfig, NeuSymMemory
    from neusym.embeddings import HashingEmbedder

    mem = NeuSymMemory(config=NeuSymConfig(data_dir=tmp_path, graph_name="close_build", appendfsync="everysec"),
                       embedder=HashingEmbedder(DIM))
    try:
        mem.add_batch([f"note {i} about topic {i % 7}" for i in range(40)], user_id="u", infer=False)
        faiss = mem.derived.faiss
        faiss._hnsw_threshold = 10  # due now; upgrade_due only looks at the size
        assert faiss.upgrade_in_background() is not None
        assert pause.reached.wait(30)
        closer = threading.Thread(target=mem.close)
        closer.start()
        pause.release.set()  # the paused step returns; the cancelled build stops before the next one
        closer.join(60)
        assert not closer.is_alive()
        assert not faiss.upgrading and faiss.structure == "flat" and faiss not in index_mod._BUILDING
    finally:
        mem.close()
