"""What a store must know about the model that embedded it, and when two models' vectors may share an index.

Vectors from different models live in unrelated spaces: a query embedded by one model against memories embedded
by another returns confident nonsense, with no error anywhere. So a store records the identity of the embedder that
wrote it (see :mod:`neusym.reembed`) and every open compares against it.

Three outcomes, decided here and nowhere else:

* ``same``: the same embedder (same name and dimension).
* ``compatible``: the same model weights run another way (e.g. the torch fp32 all-MiniLM-L6-v2 and its int8 ONNX
  export). Measured on 2,000 LoCoMo turns: cosine between the two runtimes' vectors of the same text 0.9994 mean,
  0.9985 at the 1st percentile, 0.994 minimum; 97% of each text's 10 nearest neighbours agree, and LoCoMo recall
  moves by well under a point. Mixing them costs less than the int8 quantisation itself, so the store opens, with a
  warning that suggests re-embedding to make it uniform.
* ``different``: another model, or another dimension. Refused with :class:`~neusym.errors.EmbedderMismatchError`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = ["Compatibility", "EmbedderIdentity", "identity_of"]

Compatibility = Literal["same", "compatible", "different"]
UNKNOWN = "unknown"


@dataclass(frozen=True)
class EmbedderIdentity:
    """``name`` is the embedder's own name (cache keys, FAISS metadata); ``model`` the model family it runs;
    ``runtime`` how (``onnxruntime-int8``, ``torch-fp32``, ``langchain``...); ``dimension`` its vector width."""

    name: str
    model: str
    dimension: int
    runtime: str = UNKNOWN

    def compare(self, other: EmbedderIdentity) -> Compatibility:
        """How vectors of ``other`` relate to vectors of this identity (symmetric)."""
        if self.dimension != other.dimension:
            return "different"
        if self.name == other.name:
            return "same"
        if self.model == other.model and self.model != UNKNOWN:
            return "compatible"
        return "different"

    def describe(self) -> str:
        runtime = f", {self.runtime}" if self.runtime != UNKNOWN else ""
        model = f" [{self.model}]" if self.model not in (self.name, UNKNOWN) else ""
        return f"{self.name}{model} ({self.dimension}-d{runtime})"

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, raw: str) -> EmbedderIdentity:
        data = json.loads(raw)
        return cls(name=str(data["name"]), model=str(data.get("model") or UNKNOWN),
                   dimension=int(data["dimension"]), runtime=str(data.get("runtime") or UNKNOWN))


def identity_of(embedder: Any) -> EmbedderIdentity:
    """The identity of any embedder: its own ``identity`` when it declares one, else derived from its name.

    Wrappers (the LRU cache, benchmark caches) are looked through via their ``inner`` attribute, but only while
    they keep the inner model's name: a wrapper that renames the model is a different embedder as far as a store
    is concerned (its name is what the index files record).
    """
    name = str(embedder.name)
    dimension = int(embedder.dimension)
    current: Any = embedder
    for _ in range(8):  # wrappers nest a few levels at most; bounded against a cycle of .inner references
        ident = getattr(current, "identity", None)
        if isinstance(ident, EmbedderIdentity):
            if ident.name == name and ident.dimension == dimension:
                return ident
            break
        current = getattr(current, "inner", None)
        if current is None or str(getattr(current, "name", "")) != name:
            break
    return EmbedderIdentity(name=name, model=name, dimension=dimension, runtime=UNKNOWN)
