"""Baselines for the LoCoMo benchmark, each indexing exactly the strings and vectors NeuSym stores.

dense-only FAISS, BM25-only (bm25s), RRF of both (k=60), LangChain's community ``FAISS`` vector store retriever, and
mem0 OSS 2.2.1 in its LLM-free mode (``infer=False``). Each takes ``{conversation: [Doc]}`` and returns a search
function ``(conversation, query, k) -> [memory key]``; one index (collection) per conversation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.locomo_data import Doc

__all__ = ["SearchFn", "bm25_system", "dense_system", "langchain_system", "mem0_system", "rrf_system"]

SearchFn = Callable[[str, str, int], list[str]]
"""(conversation id, query, k) -> memory keys, best first."""


def dense_system(docs: dict[str, list[Doc]], emb: Any) -> SearchFn:
    import faiss

    idx: dict[str, tuple[Any, list[str]]] = {}
    for conv, ds in docs.items():
        vecs = emb.embed_documents([d.content for d in ds])
        ix = faiss.IndexFlatIP(vecs.shape[1])
        ix.add(np.ascontiguousarray(vecs, dtype=np.float32))
        idx[conv] = (ix, [d.key for d in ds])

    def search(conv: str, q: str, k: int) -> list[str]:
        ix, refs = idx[conv]
        _, ids = ix.search(emb.embed_query(q).reshape(1, -1), min(k, len(refs)))
        return [refs[i] for i in ids[0] if i >= 0]

    return search


def bm25_system(docs: dict[str, list[Doc]]) -> SearchFn:
    import bm25s

    idx: dict[str, tuple[Any, list[str]]] = {}
    for conv, ds in docs.items():
        model = bm25s.BM25()
        model.index(bm25s.tokenize([d.content for d in ds], stopwords="en", show_progress=False),
                    show_progress=False)
        idx[conv] = (model, [d.key for d in ds])

    def search(conv: str, q: str, k: int) -> list[str]:
        model, refs = idx[conv]
        toks = bm25s.tokenize([q], stopwords="en", show_progress=False)
        if not toks.vocab:  # only stopwords
            return []
        res, scores = model.retrieve(toks, k=min(k, len(refs)), show_progress=False)
        return [refs[int(i)] for i, s in zip(res[0], scores[0], strict=True) if s > 0]

    return search


def rrf_system(dense: SearchFn, bm25: SearchFn, depth: int = 50, rrf_k: int = 60) -> SearchFn:
    def search(conv: str, q: str, k: int) -> list[str]:
        fused: dict[str, float] = {}
        for ranked in (dense(conv, q, depth), bm25(conv, q, depth)):
            for r, ref in enumerate(ranked):
                fused[ref] = fused.get(ref, 0.0) + 1.0 / (rrf_k + 1 + r)
        return sorted(fused, key=lambda x: -fused[x])[:k]

    return search


def langchain_system(docs: dict[str, list[Doc]], emb: Any) -> SearchFn:
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    class _Emb(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return emb.embed_documents(texts).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return emb.embed_query(text).tolist()  # type: ignore[no-any-return]

    stores = {conv: FAISS.from_texts([d.content for d in ds], _Emb(), metadatas=[{"ref": d.key} for d in ds])
              for conv, ds in docs.items()}

    def search(conv: str, q: str, k: int) -> list[str]:
        docs = stores[conv].as_retriever(search_kwargs={"k": k}).invoke(q)
        return [d.metadata["ref"] for d in docs]

    return search


def mem0_system(docs: dict[str, list[Doc]], emb: Any, workdir: Path, stats: dict[str, Any]) -> SearchFn:
    """mem0 OSS, LLM-free: ``add(..., infer=False)`` stores each message verbatim, ``search`` is its own scoring.

    mem0 is configured with its huggingface embedder (the same local MiniLM files work offline, checked while
    building this harness); here its ``embedding_model`` is then pointed at this run's shared vectors so every
    system indexes identical vectors and the run does not encode the store a second time. One collection per
    conversation: mem0's FAISS store filters by user_id after an only-2x over-fetch, which would cost it recall in a
    shared collection. The LLM entry is a placeholder mem0's constructor requires; with ``infer=False`` it is never
    called (its base URL is a closed local port, so an accidental call would fail, not reach a network)."""
    import os

    os.environ["MEM0_TELEMETRY"] = "False"
    from mem0 import Memory

    class _SharedEmb:
        def embed(self, text: str, memory_action: str | None = None) -> list[float]:
            if memory_action == "search":
                return emb.embed_query(text).tolist()  # type: ignore[no-any-return]
            return emb.embed_documents([text])[0].tolist()  # type: ignore[no-any-return]

        def embed_batch(self, texts: list[str], memory_action: str = "add") -> list[list[float]]:
            return emb.embed_documents(texts).tolist()  # type: ignore[no-any-return]

    mems: dict[str, Any] = {}
    t_add, n_add = 0.0, 0
    for conv, ds in docs.items():
        cfg = {
            "vector_store": {"provider": "faiss", "config": {
                "collection_name": re.sub(r"\W", "_", conv), "path": str(workdir / "mem0" / conv),
                "embedding_model_dims": emb.dimension, "distance_strategy": "cosine"}},
            # base_url: construct without loading a second copy of the model; replaced by _SharedEmb below
            "embedder": {"provider": "huggingface", "config": {"huggingface_base_url": "http://127.0.0.1:9/v1",
                                                               "embedding_dims": emb.dimension}},
            "llm": {"provider": "openai", "config": {"api_key": "unused-offline",
                                                     "openai_base_url": "http://127.0.0.1:9/v1"}},
            "history_db_path": str(workdir / "mem0" / f"{conv}.db"),
        }
        m = Memory.from_config(cfg)
        m.embedding_model = _SharedEmb()
        t0 = time.perf_counter()
        for d in ds:
            msg = {"role": "user", "content": d.content} | ({"name": d.speaker} if d.speaker else {})
            m.add([msg], user_id=conv, metadata={"ref": d.key}, infer=False)
        t_add += time.perf_counter() - t0
        n_add += len(ds)
        mems[conv] = m
    stats["mem0_add_per_s"] = round(n_add / t_add, 1) if t_add else None

    def search(conv: str, q: str, k: int) -> list[str]:
        res = mems[conv].search(q, filters={"user_id": conv}, top_k=k, threshold=0.0)
        return [(r.get("metadata") or {}).get("ref", "") for r in res.get("results", [])]

    return search
