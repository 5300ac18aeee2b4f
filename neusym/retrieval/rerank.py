"""Optional stage 3: rerank stage-2 results with a model the user already has.

Accepted: a ``(query, results) -> results`` callable, a cross-encoder-like object with ``predict(pairs)``
(sentence-transformers ``CrossEncoder``), or a LangChain document compressor (wrapped by ``langchain_neusym``).
The reranker's score is blended with the stage-2 score rather than replacing it, so governance signals
(confidence, supersession, type) still count.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from neusym.errors import InvalidInputError
from neusym.record import SearchResult

__all__ = ["CrossEncoderReranker", "as_reranker"]

Reranker = Callable[[str, list[SearchResult]], list[SearchResult]]


class CrossEncoderReranker:
    """Wraps any object with ``predict(list[tuple[str, str]]) -> scores`` (e.g. a sentence-transformers
    ``CrossEncoder``). ``blend`` is the weight of the cross-encoder's (sigmoid-squashed) score."""

    def __init__(self, model: Any, *, blend: float = 0.7) -> None:
        if not hasattr(model, "predict"):
            raise InvalidInputError("a cross-encoder reranker needs a predict(pairs) method")
        self.model = model
        self.blend = blend

    def __call__(self, query: str, results: list[SearchResult]) -> list[SearchResult]:
        if not results:
            return results
        raw = np.asarray(self.model.predict([(query, r.content) for r in results]), dtype=np.float64).reshape(-1)
        squashed = 1.0 / (1.0 + np.exp(-raw))
        top = max(r.score for r in results) or 1.0
        out = []
        for r, s in zip(results, squashed.tolist(), strict=True):
            expl = r.explanation.model_copy(update={"rerank": float(s)})
            score = (1 - self.blend) * (r.score / top) + self.blend * float(s)
            out.append(r.model_copy(update={"score": score, "explanation": expl}))
        return sorted(out, key=lambda r: -r.score)


def as_reranker(obj: Any) -> Reranker | None:
    if obj is None:
        return None
    if hasattr(obj, "predict"):
        return CrossEncoderReranker(obj)
    if callable(obj):
        return obj  # type: ignore[no-any-return]
    raise InvalidInputError(f"cannot use {type(obj).__name__} as a reranker")
