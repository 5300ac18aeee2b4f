"""``FaissIndex.search_many`` answers exactly what a loop of ``search`` calls answers, on every code path."""

from __future__ import annotations

import numpy as np
import pytest

from neusym.errors import DimensionMismatchError, InvalidInputError
from neusym.neural.index import FaissIndex

DIM = 16


def _index(kind: str, n: int = 3000) -> tuple[FaissIndex, np.ndarray]:
    ix = FaissIndex(DIM, kind=kind)  # type: ignore[arg-type]
    v = np.random.default_rng(1).standard_normal((n, DIM)).astype(np.float32)
    ix.add(np.arange(n) * 3, v)  # ids are not positions
    ix.remove([0, 3, 6])  # tombstones
    return ix, v


@pytest.mark.parametrize("kind", ["flat", "hnsw"])
@pytest.mark.parametrize("allow", [None, "small", "large", "empty"])
def test_search_many_equals_a_loop_of_search(kind: str, allow: str | None) -> None:
    ix, v = _index(kind)
    allow_ids = {None: None, "small": np.arange(0, 600, 3), "large": np.arange(0, 9000, 6), "empty": []}[allow]
    queries = v[:7] + 0.01
    many = ix.search_many(queries, 5, allow_ids=allow_ids)
    assert len(many) == 7
    for q, (ids, scores) in zip(queries, many, strict=True):
        one_ids, one_scores = ix.search(q, 5, allow_ids=allow_ids)
        assert ids.tolist() == one_ids.tolist()
        np.testing.assert_allclose(scores, one_scores, rtol=1e-6)
    if allow == "empty":
        assert all(len(ids) == 0 for ids, _ in many)
    elif allow is not None:
        assert all(set(ids.tolist()) <= set(np.asarray(allow_ids).tolist()) for ids, _ in many)


def test_search_many_edge_cases() -> None:
    ix, v = _index("flat", 50)
    assert ix.search_many(np.zeros((0, DIM), np.float32), 3) == []
    assert all(len(ids) == 0 for ids, _ in ix.search_many(v[:2], 0))
    assert len(ix.search_many(v[0], 3)) == 1  # one vector is one query
    with pytest.raises(DimensionMismatchError):
        ix.search_many(np.ones((2, DIM + 1), np.float32), 3)
    with pytest.raises(InvalidInputError):
        ix.search_many(np.full((2, DIM), np.nan, np.float32), 3)
    with pytest.raises(InvalidInputError):
        ix.search_many(v[:2], -1)
