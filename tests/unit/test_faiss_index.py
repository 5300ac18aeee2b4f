"""FaissIndex: writes, tombstones, allow-lists, structure switches and crash-safe persistence, for flat and HNSW."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from neusym.errors import DimensionMismatchError, IndexCorruptionError, InvalidInputError, RecordNotFoundError
from neusym.neural import FaissIndex

DIM = 16
KINDS = ["flat", "hnsw"]


def _vecs(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def _brute(vecs: np.ndarray, ids: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    scores = vecs @ (q / np.linalg.norm(q))
    return [int(ids[i]) for i in np.argsort(-scores, kind="stable")[:k]]


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _filled(kind: str, n: int = 200, seed: int = 0) -> tuple[FaissIndex, np.ndarray, np.ndarray]:
    idx = FaissIndex(DIM, kind=kind)  # type: ignore[arg-type]
    ids = np.arange(1000, 1000 + n, dtype=np.int64)
    vecs = _vecs(n, seed)
    idx.add(ids, vecs)
    return idx, ids, vecs


def test_add_search_returns_self_first_and_cosine_scores(kind: str) -> None:
    idx, ids, vecs = _filled(kind)
    assert len(idx) == 200 and idx.structure == kind
    for row in (0, 57, 199):
        got, scores = idx.search(vecs[row], 5)
        assert got.dtype == np.int64 and scores.dtype == np.float32
        assert got[0] == ids[row]
        assert scores[0] == pytest.approx(1.0, abs=1e-5)
        assert np.all(np.diff(scores) <= 1e-6)  # best first
    # unnormalised input is normalised: the score is still a cosine
    got, scores = idx.search(vecs[3] * 7.5, 1)
    assert got[0] == ids[3] and scores[0] == pytest.approx(1.0, abs=1e-5)
    q = _vecs(1, 99)[0]
    got, _ = idx.search(q, 10)
    expected = _brute(vecs, ids, q, 10)
    if kind == "flat":
        assert got.tolist() == expected
    else:
        assert len(set(got.tolist()) & set(expected)) >= 8  # approximate


def test_overwrite_same_id_replaces_vector(kind: str) -> None:
    idx, ids, vecs = _filled(kind, n=50)
    new = _vecs(1, 77)[0]
    idx.add(np.array([ids[10]]), new[None, :])
    assert len(idx) == 50
    got, scores = idx.search(new, 1)
    assert got[0] == ids[10] and scores[0] == pytest.approx(1.0, abs=1e-5)
    got, _ = idx.search(vecs[10], 50)
    assert got.tolist().count(ids[10]) == 1  # the old vector is gone, not a second hit
    np.testing.assert_allclose(idx.reconstruct([ids[10]])[0], new, atol=1e-6)
    if kind == "flat":
        assert idx.tombstones == 0  # flat overwrites in place
    else:
        assert idx.tombstones == 1


def test_duplicate_ids_in_one_batch_keep_the_last_vector(kind: str) -> None:
    idx = FaissIndex(DIM, kind=kind)  # type: ignore[arg-type]
    v = _vecs(3, 5)
    idx.add(np.array([7, 8, 7], dtype=np.int64), v)
    assert len(idx) == 2 and idx.ids().tolist() == [7, 8]
    np.testing.assert_allclose(idx.reconstruct([7])[0], v[2], atol=1e-6)


def test_remove_is_idempotent_and_counts(kind: str) -> None:
    idx, ids, vecs = _filled(kind, n=100)
    assert idx.remove(np.array([ids[0], ids[1], 999_999_999], dtype=np.int64)) == 2
    assert idx.remove(np.array([ids[0], ids[1]], dtype=np.int64)) == 0
    assert idx.remove([]) == 0
    assert idx.remove(np.array([-5], dtype=np.int64)) == 0  # never valid, so never present
    assert idx.remove(np.array([ids[2], ids[2]])) == 1
    assert len(idx) == 97
    assert not idx.contains(int(ids[0])) and idx.contains(int(ids[3])) and int(ids[3]) in idx
    got, _ = idx.search(vecs[0], 100)
    assert ids[0] not in got and ids[1] not in got and ids[2] not in got
    assert len(got) == 97 or kind == "hnsw"
    assert idx.ids().tolist() == ids[3:].tolist()
    with pytest.raises(RecordNotFoundError):
        idx.reconstruct([ids[0]])


def test_readding_a_removed_id(kind: str) -> None:
    idx, ids, vecs = _filled(kind, n=20)
    idx.remove([ids[5]])
    idx.add([ids[5]], vecs[5][None, :])
    got, _ = idx.search(vecs[5], 1)
    assert got[0] == ids[5] and len(idx) == 20


def test_flat_compacts_itself_hnsw_asks_for_compaction() -> None:
    flat, ids, vecs = _filled("flat", n=100)
    flat.remove(ids[:30])  # > 25% dead triggers an automatic rebuild
    assert flat.tombstones == 0 and flat.ntotal == 70 and len(flat) == 70
    got, _ = flat.search(vecs[50], 1)
    assert got[0] == ids[50]

    hnsw, ids, vecs = _filled("hnsw", n=100)
    hnsw.remove(ids[:30])
    assert hnsw.tombstones == 30 and hnsw.ntotal == 100 and hnsw.needs_compaction
    hnsw.compact()
    assert hnsw.tombstones == 0 and hnsw.ntotal == 70 and not hnsw.needs_compaction
    assert hnsw.structure == "hnsw"
    got, _ = hnsw.search(vecs[50], 1)
    assert got[0] == ids[50]


def test_search_with_allow_list_exact_path(kind: str) -> None:
    idx, ids, vecs = _filled(kind, n=300)
    allow = ids[100:110]
    q = vecs[5]  # its own id is not allowed
    got, scores = idx.search(q, 5, allow_ids=allow)
    assert set(got.tolist()) <= set(allow.tolist())
    assert got.tolist() == _brute(vecs[100:110], allow, q, 5)
    # allowed ids that are unknown or removed are ignored; k larger than the allowed set
    idx.remove([ids[100]])
    got, _ = idx.search(q, 50, allow_ids=np.concatenate([allow, [123456789]]))
    assert sorted(got.tolist()) == sorted(allow[1:].tolist())
    got, _ = idx.search(q, 5, allow_ids=np.array([], dtype=np.int64))
    assert got.size == 0
    got, _ = idx.search(q, 5, allow_ids=[424242])
    assert got.size == 0
    got, _ = idx.search(q, 3, allow_ids={int(i) for i in allow[1:4]})  # any iterable of ints
    assert sorted(got.tolist()) == sorted(allow[1:4].tolist())


def test_search_with_medium_allow_list_is_exact_for_both_structures(kind: str) -> None:
    """Between the direct-lookup size and 5% of an HNSW index, results come from an exact filtered scan."""
    idx, ids, vecs = _filled(kind, n=3000, seed=4)
    allow = ids[::3]  # 1000 ids: above the direct-lookup limit, a third of the index
    idx.remove(allow[:7])
    q = _vecs(1, 42)[0]
    got, _ = idx.search(q, 25, allow_ids=allow)
    mask = np.isin(ids, allow[7:])
    assert got.tolist() == _brute(vecs[mask], ids[mask], q, 25)  # HNSW too: 993 matches < 4096 -> exact scan
    small_allow = ids[::20]  # 150 + a few: direct lookup
    got, _ = idx.search(q, 10, allow_ids=np.concatenate([small_allow, allow[:7]]))
    live_small = small_allow[~np.isin(small_allow, allow[:7])]
    m2 = np.isin(ids, live_small)
    assert got.tolist() == _brute(vecs[m2], ids[m2], q, 10)


def test_hnsw_selective_allow_list_uses_exact_storage_scan() -> None:
    idx, ids, vecs = _filled("hnsw", n=20_000, seed=6)
    allow = ids[::10]  # 2000 ids: > direct-lookup limit, < max(4096, 5%) -> exact scan of the flat storage
    q = _vecs(1, 43)[0]
    got, scores = idx.search(q, 30, allow_ids=allow)
    assert idx.structure == "hnsw"
    assert got.tolist() == _brute(vecs[::10], allow, q, 30)
    np.testing.assert_allclose(scores, np.sort(vecs[::10] @ q)[::-1][:30], atol=1e-5)


@pytest.mark.parametrize("n", [12_000])
def test_search_with_broad_allow_list_uses_faiss_selector(kind: str, n: int) -> None:
    """Allow-lists larger than the exact-scoring limit go through faiss' IDSelector (flat and HNSW)."""
    idx = FaissIndex(DIM, kind=kind)  # type: ignore[arg-type]
    ids = np.arange(n, dtype=np.int64) * 3 + 1
    vecs = _vecs(n, 3)
    idx.add(ids, vecs)
    allow = ids[ids % 2 == 1]  # half of them, well above 4096 and above n/4
    assert allow.size > 4096
    idx.remove(allow[:10])  # tombstones must stay excluded through the selector path too
    q = vecs[0]
    got, _ = idx.search(q, 20, allow_ids=allow)
    allowed = set(allow[10:].tolist())
    assert len(got) == 20 and set(got.tolist()) <= allowed
    mask = np.isin(ids, allow[10:])
    expected = _brute(vecs[mask], ids[mask], q, 20)
    overlap = len(set(got.tolist()) & set(expected))
    assert overlap == 20 if kind == "flat" else overlap >= 15


def test_tombstones_hidden_in_unfiltered_hnsw_search() -> None:
    idx, ids, vecs = _filled("hnsw", n=100)
    idx.remove(ids[:10])
    for row in range(10):
        got, _ = idx.search(vecs[row], 20)
        assert not set(got.tolist()) & set(ids[:10].tolist())


def test_empty_index_k_zero_and_k_larger_than_n(kind: str) -> None:
    idx = FaissIndex(DIM, kind=kind)  # type: ignore[arg-type]
    got, scores = idx.search(_vecs(1)[0], 5)
    assert got.shape == (0,) and scores.shape == (0,)
    idx.add(np.array([1, 2, 3]), _vecs(3))
    got, scores = idx.search(_vecs(1, 1)[0], 0)
    assert got.size == 0 and scores.size == 0
    got, scores = idx.search(_vecs(1, 1)[0], 100)
    assert sorted(got.tolist()) == [1, 2, 3] and scores.shape == (3,)
    assert -1 not in got.tolist()
    idx.remove([1, 2, 3])
    got, _ = idx.search(_vecs(1, 1)[0], 5)
    assert got.size == 0 and len(idx) == 0


def test_input_validation() -> None:
    idx = FaissIndex(DIM, kind="flat")
    with pytest.raises(DimensionMismatchError):
        idx.add([1], np.ones((1, DIM + 1), dtype=np.float32))
    with pytest.raises(DimensionMismatchError):
        idx.search(np.ones(DIM - 1), 3)
    with pytest.raises(InvalidInputError):
        idx.add([1, 2], _vecs(1))  # row count
    with pytest.raises(InvalidInputError):
        idx.add([-1], _vecs(1))  # -1 is faiss' "no result"
    with pytest.raises(InvalidInputError):
        idx.add([1.5], _vecs(1))
    with pytest.raises(InvalidInputError):
        idx.add([1], np.zeros((1, DIM)))
    bad = _vecs(1)
    bad[0, 0] = np.nan
    with pytest.raises(InvalidInputError):
        idx.add([1], bad)
    with pytest.raises(InvalidInputError):
        idx.search(_vecs(1)[0], -1)
    with pytest.raises(InvalidInputError):
        FaissIndex(DIM, kind="ivf")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        FaissIndex(0)
    idx.add(np.array([], dtype=np.int64), np.zeros((0, DIM), dtype=np.float32))
    assert len(idx) == 0


def test_auto_starts_flat_and_upgrades_only_when_asked() -> None:
    idx = FaissIndex(DIM, kind="auto", hnsw_threshold=150)
    ids = np.arange(200, dtype=np.int64)
    vecs = _vecs(200, 8)
    idx.add(ids[:100], vecs[:100])
    assert idx.structure == "flat" and not idx.maybe_upgrade() and not idx.needs_compaction
    idx.add(ids[100:], vecs[100:])
    assert idx.structure == "flat"  # never switches in the middle of a write
    assert idx.needs_compaction
    assert idx.maybe_upgrade() and idx.structure == "hnsw" and idx.kind == "auto"
    assert len(idx) == 200 and not idx.maybe_upgrade()
    got, _ = idx.search(vecs[123], 1)
    assert got[0] == 123
    # shrinking far below the threshold goes back to flat on the next compaction (hysteresis at half)
    idx.remove(ids[:140])
    idx.compact()
    assert idx.structure == "flat" and len(idx) == 60
    got, _ = idx.search(vecs[190], 1)
    assert got[0] == 190


@pytest.mark.parametrize("with_tombstones", [False, True])
def test_save_load_round_trip(kind: str, tmp_path: Path, with_tombstones: bool) -> None:
    idx, ids, vecs = _filled(kind, n=120)
    if with_tombstones:
        idx.remove(ids[:5])
        idx.add([ids[6]], vecs[7][None, :])
    path = tmp_path / "vectors.faiss"
    meta = {"model": "neusym-hashing-v1-16", "dimension": DIM, "nested": {"a": [1, 2]}}
    idx.save(path, watermark=4242, meta=meta)
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.faiss"]  # no temp file left behind

    loaded, watermark, meta2 = FaissIndex.load(path)
    assert watermark == 4242 and meta2 == meta
    assert loaded.structure == idx.structure and loaded.kind == idx.kind and loaded.dimension == DIM
    assert len(loaded) == len(idx) and loaded.tombstones == idx.tombstones
    assert loaded.ids().tolist() == idx.ids().tolist()
    for row in (10, 50, 119):
        a_ids, a_scores = idx.search(vecs[row], 7)
        b_ids, b_scores = loaded.search(vecs[row], 7)
        assert a_ids.tolist() == b_ids.tolist()
        np.testing.assert_allclose(a_scores, b_scores, atol=1e-6)
    got, _ = loaded.search(vecs[3], 3, allow_ids=ids[50:60])
    assert set(got.tolist()) <= set(ids[50:60].tolist())
    # the loaded index is fully writable
    loaded.add([5], _vecs(1, 55))
    loaded.remove([ids[100]])
    assert len(loaded) == len(idx)


def test_save_overwrites_atomically_and_validates_meta(tmp_path: Path) -> None:
    idx, _, _ = _filled("flat", n=10)
    path = tmp_path / "v.faiss"
    idx.save(path, watermark=1, meta={})
    idx.add([1], _vecs(1, 2))
    idx.save(str(path), watermark=2, meta={"m": "x"})
    loaded, wm, meta = FaissIndex.load(str(path))
    assert wm == 2 and meta == {"m": "x"} and len(loaded) == 11
    with pytest.raises(InvalidInputError):
        idx.save(path, watermark=3, meta={"bad": object()})
    with pytest.raises(InvalidInputError):
        idx.save(path, watermark="3", meta={})  # type: ignore[arg-type]
    assert FaissIndex.load(path)[1] == 2  # a failed save leaves the previous file intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v.faiss"]


def test_empty_index_round_trip(tmp_path: Path) -> None:
    idx = FaissIndex(DIM, kind="hnsw")
    idx.save(tmp_path / "e", watermark=0, meta={})
    loaded, wm, _ = FaissIndex.load(tmp_path / "e")
    assert len(loaded) == 0 and wm == 0 and loaded.search(_vecs(1)[0], 3)[0].size == 0


@pytest.mark.parametrize("cut", [0, 10, 40, -33, -1, 0.5])
def test_truncated_file_is_index_corruption(kind: str, tmp_path: Path, cut: float) -> None:
    idx, _, _ = _filled(kind, n=60)
    path = tmp_path / "v.faiss"
    idx.save(path, watermark=9, meta={"model": "m"})
    data = path.read_bytes()
    size = int(len(data) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(data) + cut)
    path.write_bytes(data[:size])
    with pytest.raises(IndexCorruptionError):
        FaissIndex.load(path)


def test_garbage_and_bit_flips_are_index_corruption(tmp_path: Path) -> None:
    path = tmp_path / "v.faiss"
    path.write_bytes(os.urandom(5000))
    with pytest.raises(IndexCorruptionError):
        FaissIndex.load(path)
    path.write_bytes(b"NSYMFAIS" + os.urandom(5000))  # right magic, garbage body
    with pytest.raises(IndexCorruptionError):
        FaissIndex.load(path)

    idx, _, _ = _filled("hnsw", n=60)
    idx.save(path, watermark=1, meta={})
    good = bytearray(path.read_bytes())
    for pos in (9, 30, len(good) // 2, len(good) - 40):
        flipped = bytearray(good)
        flipped[pos] ^= 0x40
        path.write_bytes(bytes(flipped))
        with pytest.raises(IndexCorruptionError):
            FaissIndex.load(path)
    with pytest.raises(FileNotFoundError):
        FaissIndex.load(tmp_path / "missing.faiss")


def test_concurrent_reads_and_writes_do_not_crash(kind: str) -> None:
    idx, ids, vecs = _filled(kind, n=300)
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            rng = np.random.default_rng(1)
            for i in range(200):
                sel = rng.choice(ids, size=3, replace=False)
                if i % 2:
                    idx.remove(sel)
                else:
                    idx.add(sel, _vecs(3, i))
        except BaseException as err:
            errors.append(err)

    def reader() -> None:
        try:
            for i in range(300):
                got, _ = idx.search(vecs[i % 300], 5, allow_ids=ids[:50] if i % 3 == 0 else None)
                assert -1 not in got.tolist()
        except BaseException as err:
            errors.append(err)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    live = set(idx.ids().tolist())
    assert len(live) == len(idx)
