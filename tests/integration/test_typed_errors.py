"""Issue 14 section 7: each repro gets an InvalidInputError with a clear message (or, for a broken embedder, an
EmbeddingError), and nothing is written."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import numpy as np
import pytest

from neusym import EmbeddingError, InvalidInputError, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.record import MAX_ENTITY_CHARS


@pytest.mark.parametrize("offset", ["5", None, 2.5, -1, 100_001])
def test_query_offset(memory: NeuSymMemory, offset: object) -> None:
    with pytest.raises(InvalidInputError, match="offset"):
        memory.query(user_id="u", offset=offset)  # type: ignore[arg-type]
    assert memory.query(user_id="u", offset=5000) == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "high"])
def test_search_min_score(memory: NeuSymMemory, bad: object) -> None:
    memory.add("I like tea", user_id="u", infer=False)
    with pytest.raises(InvalidInputError, match="min_score"):
        memory.search("tea", user_id="u", min_score=bad)  # type: ignore[arg-type]


def test_huge_vectors(memory: NeuSymMemory) -> None:
    dim = memory.embedder.dimension
    with pytest.raises(InvalidInputError, match="scale the vectors down"):
        memory.add_batch(["a", "b"], vectors=np.full((2, dim), 3e38), user_id="u", infer=False)
    with pytest.raises(InvalidInputError, match="scale the vectors down"):
        memory.add_batch(["a"], vectors=np.full((1, dim), 1e39), user_id="u", infer=False)  # inf as float32
    with pytest.raises(InvalidInputError, match="NaN or infinite"):
        memory.add_batch(["a"], vectors=np.full((1, dim), np.nan), user_id="u", infer=False)
    assert memory.stats(user_id="u")["memories"] == 0


def test_a_broken_embedder_is_an_embedding_error(make_memory: Callable[..., NeuSymMemory]) -> None:
    class Overflowing(HashingEmbedder):
        def embed_documents(self, texts: list[str]) -> np.ndarray:
            return np.full((len(texts), self.dimension), 3e38, dtype=np.float32)

    mem = make_memory(embedder=Overflowing(256))
    with pytest.raises(EmbeddingError, match="beyond what float32 can normalise"):
        mem.add("anything", user_id="u", infer=False)
    assert mem.stats(user_id="u")["memories"] == 0


def test_deeply_nested_json_import(memory: NeuSymMemory) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for text in ('{"content": "x", "metadata": ' + deep + "}\n", deep + "\n", '{"content": "ok"}\n' + deep):
        with pytest.raises(InvalidInputError, match="nested too deeply"):
            memory.import_file(io.StringIO(text), user_id="u")
    assert memory.stats(user_id="u")["memories"] == 0
    fine = json.loads("[" * 500 + "]" * 500)
    assert memory.add("nested but fine", user_id="u", metadata={"a": fine}, infer=False)


def test_entity_names_are_capped(memory: NeuSymMemory) -> None:
    rec = memory.add("Ana lives here", user_id="u", infer=False)[0]
    with pytest.raises(InvalidInputError, match=f"at most {MAX_ENTITY_CHARS} characters"):
        memory.update(rec.id, user_id="u", entities=["x" * 99_000])
    with pytest.raises(InvalidInputError, match=f"at most {MAX_ENTITY_CHARS} characters"):
        memory.update(rec.id, user_id="u", triples=[{"subject": "a" * 500, "predicate": "is", "object": "b"}])
    assert memory.get(rec.id, user_id="u").version == 1
    ok = memory.update(rec.id, user_id="u", entities=["A" * MAX_ENTITY_CHARS])
    assert ok.entities == ["A" * MAX_ENTITY_CHARS]
    long_name = "Zorblax" + "x" * 300
    stored = memory.add(f"{long_name} visited Porto.", user_id="u")
    assert stored and all(len(e) <= MAX_ENTITY_CHARS for r in stored for e in r.entities)
