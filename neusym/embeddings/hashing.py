"""A model-free embedder for tests and synthetic benchmarks.

It exists so that the whole engine (index, graph sync, retrieval fusion) can be exercised in milliseconds and with
bit-for-bit reproducible vectors on any machine, without loading a 90 MB transformer. **It is not semantic**: two
texts are close only when they share words, word pairs or spelling fragments ("car" and "automobile" are unrelated).
Never use it to judge retrieval quality.
"""

from __future__ import annotations

import unicodedata
import zlib
from collections.abc import Iterator, Sequence

import numpy as np

from neusym.embeddings.base import FloatMatrix, check_texts, first_row, to_unit_matrix
from neusym.embeddings.identity import EmbedderIdentity
from neusym.errors import InvalidInputError
from neusym.language import regex as rx

__all__ = ["HashingEmbedder"]

_WORD = rx.compile(r"\w+")
# Whole words carry the most signal, word pairs add a little order sensitivity, and character trigrams give
# robustness to inflection and typos ("runs" ~ "running") without dominating exact word overlap.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.7
_TRIGRAM_WEIGHT = 0.35
_EMPTY_FEATURE = "e:\x00"
_VERSION = 1  # bump when the feature scheme changes: ``name`` must change with the vectors


class HashingEmbedder:
    """Signed feature hashing of word unigrams, word bigrams and per-word character trigrams, L2-normalised.

    Uses CRC32 rather than :func:`hash` because Python's string hash is salted per process, which would make
    vectors (and a persisted index) differ between runs. The hash's top bit picks the sign so collisions cancel out
    on average instead of piling up positive mass in popular buckets.
    """

    def __init__(self, dimension: int = 256) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InvalidInputError(f"dimension must be a positive int, got {dimension!r}")
        self._dimension = dimension
        self._name = f"neusym-hashing-v{_VERSION}-{dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def name(self) -> str:
        return self._name

    @property
    def identity(self) -> EmbedderIdentity:
        return EmbedderIdentity(name=self._name, model=self._name, dimension=self._dimension, runtime="numpy")

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._dimension})"

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        items = check_texts(texts)
        out = np.zeros((len(items), self._dimension), dtype=np.float32)
        for row, text in enumerate(items):
            self._fill(out[row], text)
        return to_unit_matrix(out, rows=len(items), dimension=self._dimension, source=self._name)

    def embed_query(self, text: str) -> FloatMatrix:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a str, got {type(text).__name__}")
        return first_row(self.embed_documents([text]))

    def _fill(self, vec: FloatMatrix, text: str) -> None:
        dim = self._dimension
        seen = False
        for feature, weight in _features(text):
            h = zlib.crc32(feature.encode("utf-8"))
            sign = -1.0 if h & 0x80000000 else 1.0
            vec[(h & 0x7FFFFFFF) % dim] += sign * weight
            seen = True
        if not seen or not vec.any():
            # Text without word characters (or whose features cancelled exactly) still needs a unit vector; a
            # fixed feature makes all such texts identical, which is the honest answer for a lexical embedder.
            h = zlib.crc32(_EMPTY_FEATURE.encode("utf-8"))
            vec[(h & 0x7FFFFFFF) % dim] += 1.0


def _features(text: str) -> Iterator[tuple[str, float]]:
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    for word in words:
        yield "w:" + word, _UNIGRAM_WEIGHT
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            yield "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT
    for first, second in zip(words, words[1:], strict=False):
        yield f"b:{first} {second}", _BIGRAM_WEIGHT
