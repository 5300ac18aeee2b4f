"""The geometry of stage 1's candidate pool: two score components computed from the candidates' own vectors.

Why: on a scope about one or two people (a user's memories, a conversation), every memory and every query share
the people's names, so the raw cosine is dominated by what ALL candidates have in common and the part that tells
them apart (the activity, the book, the event the question asks about) is a small difference on top. Two
classic corrections, both bounded by the candidate count (one ``n x n`` Gram matrix of the ``n`` candidates,
never the store):

- ``distinct`` (hubness reduction, as in CSLS, Conneau et al. 2018): ``1 - the mean cosine of a candidate to its
  k most similar other candidates``. A generic statement ("X values her friends' support") sits close to many
  other candidates and matches many queries while answering few; a specific fact stands apart.
- ``contrast`` (centring, as in "all-but-the-top", Mu & Viswanath 2018, but on the pool): the cosine between the
  query and the candidate after removing the pool's centroid from both, i.e. how well the candidate matches what
  the query asks beyond what every candidate shares. Clipped at 0.

Both are 0 for a memory that is not a stage-1 candidate (graph expansion, activation) and for a candidate without
a stored vector. The offline re-scorer (``benchmarks/locomo_offline.py``) calls the same function on the same
vectors in the same order, so its rankings match the engine's.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["pool_geometry"]

FloatArray = npt.NDArray[np.float64]


def pool_geometry(vectors: npt.ArrayLike, query: npt.ArrayLike, k: int) -> tuple[FloatArray, FloatArray]:
    """``(distinct, contrast)`` of each candidate (rows of ``vectors``, unit length; a zero row = no vector).

    ``k``: how many nearest other candidates the density averages over (fewer when the pool is smaller). One
    Gram matrix of the candidates and the query, then element-wise arithmetic only:
    the centred cosine follows from the inner products, ``(x - c).(q - c) = x.q - x.c - q.c + c.c`` with ``c`` the
    candidates' centroid, so no centred copy of the vectors is made.
    """
    v = np.asarray(vectors, dtype=np.float32)
    q = np.asarray(query, dtype=np.float32).ravel()
    n = v.shape[0] if v.ndim == 2 else 0
    distinct = np.zeros(n)
    contrast = np.zeros(n)
    if n == 0 or q.shape[0] != v.shape[1]:
        return distinct, contrast
    # einsum, not ``@``: a 100 x 384 product is big enough for OpenBLAS to wake its thread pool, which on a busy
    # 2-core box cost ~11 ms of wall time against ~2 ms for einsum's single-threaded loop (and einsum's result does
    # not depend on the BLAS build, so the offline re-scorer reproduces it exactly)
    ip = np.einsum("id,jd->ij", v, np.vstack([v, q[None, :]])).astype(np.float64)
    gram_all, qdot_all = ip[:, :n], ip[:, n]
    idx = np.flatnonzero(np.diagonal(gram_all) > 0)  # candidates with a vector
    m = len(idx)
    if m < 2:
        return distinct, contrast
    gram = gram_all[np.ix_(idx, idx)]
    qdot = qdot_all[idx]
    qq = float(np.dot(q.astype(np.float64), q.astype(np.float64)))
    self_sim = np.diagonal(gram).copy()
    # the k most similar OTHER candidates: the diagonal (a candidate's cosine to itself) never counts
    others = gram.copy()
    np.fill_diagonal(others, -np.inf)
    kk = max(1, min(int(k), m - 1))
    top = -np.partition(-others, kk - 1, axis=1)[:, :kk]
    distinct[idx] = np.clip(1.0 - top.mean(axis=1), 0.0, 1.0)
    xc = gram.mean(axis=1)  # x . c
    qc = float(qdot.mean())  # q . c
    cc = float(xc.mean())  # c . c
    num = qdot - xc - qc + cc
    xn2 = self_sim - 2.0 * xc + cc
    qn2 = qq - 2.0 * qc + cc
    ok = (xn2 > 1e-12) & (qn2 > 1e-12)
    cos = np.zeros(m)
    cos[ok] = num[ok] / np.sqrt(xn2[ok] * qn2)
    contrast[idx] = np.clip(cos, 0.0, 1.0)
    return distinct, contrast
