"""Map verbs the lexicon does not know onto the predicate vocabulary by embedding similarity.

The lexicon (:mod:`neusym.extraction._lexicon`) maps the common verbs; users say "relocated to", "am employed by",
"took a position with", "ditched", and the long tail never ends. :class:`SemanticPredicateMapper` embeds each
vocabulary predicate's *description* once, embeds the unknown verb phrase ("relocate to"), and maps it to the
closest predicate when the cosine similarity clears a threshold; below it the open lemma predicate is kept.

It is optional (``RuleExtractor(predicate_mapper=SemanticPredicateMapper(embedder))``) because an embedding call per
new verb phrase is not free; results are cached per phrase, and verb phrases repeat heavily (a few hundred cover
most text), so after warm-up the cost is a dict lookup. Any :class:`~neusym.embeddings.Embedder` works; the
default model is the MiniLM the memory already runs.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from neusym.extraction.vocabulary import PREDICATE_SPECS

__all__ = ["PredicateMapper", "SemanticPredicateMapper"]


@runtime_checkable
class PredicateMapper(Protocol):
    """Maps a verb phrase ("relocate to") to a vocabulary predicate, or ``None`` to keep the open lemma."""

    def map(self, phrase: str) -> str | None: ...


# Phrases describing each mappable predicate in the words people use with verbs; the description alone
# ("current home town/city/country") embeds far from "relocate to".
_EXTRA: Mapping[str, str] = {
    "lives_in": "live in, move to, relocate to, settle in, reside in",
    "works_at": "work at, work for, be employed by, take a job at",
    "job_title": "work as, serve as, be employed as",
    "studies": "study, major in, learn, take courses in",
    "studies_at": "study at, enroll at, attend university",
    "member_of": "join, become a member of, sign up for",
    "likes": "like, love, enjoy, be fond of",
    "dislikes": "hate, dislike, can't stand",
    "visited": "visit, travel to, tour, go on a trip to",
    "attended": "attend, participate in, take part in",
    "met": "meet, meet up with, hang out with",
    "bought": "buy, purchase, order",
    "created": "make, create, paint, write, build, design",
    "founded": "found, start, launch, set up a business",
    "runs": "run, manage, lead, organise",
    "helps": "help, support, mentor, encourage",
    "teaches": "teach, give lessons in, lecture on",
    "received": "receive, win, earn, be awarded",
    "owns": "own, possess",
    "plays": "play a sport, game or instrument",
    "speaks": "speak a language",
    "uses": "use, switch to, rely on",
    "avoids": "avoid, quit, give up, stop consuming",
    "married_to": "marry, be married to",
    "partner_of": "date, be engaged to, be in a relationship with",
    "volunteers_at": "volunteer at, volunteer for",
    "graduated_from": "graduate from, finish school at",
    "fears": "be afraid of, fear, be scared of",
    "practises": "practise, train, do regularly, take up a hobby",
    "reads": "read, watch, listen to, follow",
}


class SemanticPredicateMapper:
    """Nearest vocabulary predicate by cosine similarity of MiniLM-style embeddings, cached per phrase.

    Args:
        embedder: any object with ``embed_documents(list[str])`` returning unit-normalised rows (a neusym
            :class:`~neusym.embeddings.Embedder`); ``None`` uses :func:`neusym.embeddings.default_embedder`.
        threshold: minimum cosine similarity to map; below it the phrase keeps its open predicate. 0.55 keeps
            "relocate to" -> ``lives_in`` and rejects "eat at" -> anything (measured in
            ``benchmarks/extraction.py --extractor semantic``).
        max_cache: phrases remembered (each entry is a string and a predicate name).
    """

    def __init__(self, embedder: Any = None, *, threshold: float = 0.55, max_cache: int = 50_000) -> None:
        self._embedder = embedder
        self.threshold = threshold
        self.max_cache = max_cache
        self._names: list[str] = []
        self._matrix: np.ndarray | None = None
        self._cache: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def _prepare(self) -> np.ndarray:
        if self._matrix is None:
            if self._embedder is None:
                from neusym.embeddings import default_embedder  # loads the model only when first needed

                self._embedder = default_embedder()
            names = [n for n in PREDICATE_SPECS if n in _EXTRA]
            texts = [f"{_EXTRA[n]}; {PREDICATE_SPECS[n].description}" for n in names]
            matrix = np.asarray(self._embedder.embed_documents(texts), dtype=np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-9
            self._names, self._matrix = names, matrix
        return self._matrix

    def map(self, phrase: str) -> str | None:
        """The vocabulary predicate closest to ``phrase`` (e.g. "relocate to"), or ``None``."""
        key = " ".join(phrase.lower().replace("_", " ").split())
        if not key:
            return None
        if key in self._cache:
            return self._cache[key]
        with self._lock:
            matrix = self._prepare()
            assert self._embedder is not None
            vec = np.asarray(self._embedder.embed_documents([key]), dtype=np.float32)[0]
            vec /= np.linalg.norm(vec) + 1e-9
            scores = matrix @ vec
            best = int(np.argmax(scores))
            found = self._names[best] if float(scores[best]) >= self.threshold else None
            if len(self._cache) >= self.max_cache:
                self._cache.clear()
            self._cache[key] = found
            return found
