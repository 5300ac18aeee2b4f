"""The candidate-pool geometry components (``distinct``, ``contrast``): what they reward, their edge cases, and that
the offline re-scorer computes them exactly like the engine."""

from __future__ import annotations

import numpy as np

from neusym.retrieval.geometry import pool_geometry


def _unit(*rows: list[float]) -> np.ndarray:
    v = np.asarray(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_a_generic_candidate_is_less_distinct_than_a_specific_one() -> None:
    # axis 0: what every candidate shares (the person); 1-3: specific topics. Row 0 is "generic": it leans on the
    # shared axis and a bit of every topic, so it sits close to all the others
    v = _unit([1.0, 0.3, 0.3, 0.3], [1.0, 1.0, 0, 0], [1.0, 0, 1.0, 0], [1.0, 0, 0, 1.0])
    distinct, _ = pool_geometry(v, _unit([1.0, 1.0, 0, 0])[0], k=2)
    assert distinct[0] < min(distinct[1:])
    assert np.all((distinct >= 0) & (distinct <= 1))


def test_contrast_keeps_what_the_query_asks_beyond_what_every_candidate_shares() -> None:
    # axis 0: the person every candidate (and the query) names; the query asks about topic 2. The candidate that
    # only names the person still has a raw cosine of 0.71, and the ones about other topics 0.5: centred on the
    # pool, only the topic match is left
    q = _unit([1.0, 0, 1.0, 0, 0, 0])[0]
    v = _unit([1.0, 0, 0, 0, 0, 0], [1.0, 0, 1.0, 0, 0, 0], [1.0, 1.0, 0, 0, 0, 0], [1.0, 0, 0, 1.0, 0, 0],
              [1.0, 0, 0, 0, 1.0, 0], [1.0, 0, 0, 0, 0, 1.0])
    raw = v @ q
    _, contrast = pool_geometry(v, q, k=3)
    assert raw[0] > 0.7 and min(raw[2:]) > 0.49
    assert contrast[1] > 0.99
    assert np.allclose(np.delete(contrast, 1), 0.0)
    assert np.all((contrast >= 0) & (contrast <= 1))


def test_missing_vectors_and_tiny_pools_score_zero() -> None:
    v = _unit([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0])
    v[1] = 0.0  # a candidate without a stored vector
    distinct, contrast = pool_geometry(v, _unit([1.0, 1.0, 0])[0], k=10)  # k larger than the pool
    assert distinct[1] == 0.0 and contrast[1] == 0.0
    assert distinct[0] > 0 and distinct[2] > 0
    one_d, one_c = pool_geometry(v[:1], v[0], k=5)
    assert one_d.tolist() == [0.0] and one_c.tolist() == [0.0]
    empty = pool_geometry(np.zeros((0, 3), np.float32), v[0], k=5)
    assert empty[0].shape == (0,) and empty[1].shape == (0,)
    wrong_dim = pool_geometry(v, np.ones(4, np.float32), k=5)
    assert not wrong_dim[0].any() and not wrong_dim[1].any()


def test_the_density_averages_the_k_nearest_others_not_itself() -> None:
    v = _unit([1.0, 0, 0], [1.0, 0.01, 0], [0, 1.0, 0], [0, 0, 1.0])
    distinct, _ = pool_geometry(v, v[0], k=1)
    # rows 0 and 1 are each other's nearest neighbour (cosine ~1): distinct ~0; rows 2, 3 have nothing close
    assert distinct[0] < 0.01 and distinct[1] < 0.01
    assert distinct[2] > 0.9 and distinct[3] > 0.9
