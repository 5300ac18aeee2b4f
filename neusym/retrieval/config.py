"""Retrieval as data: which channels run, how they fuse, what stage 2 does, and the score weights."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from neusym.symbolic.scoring import COMPONENTS, default_weights

__all__ = ["DEFAULT_TYPE_WEIGHTS", "DEFAULT_WEIGHTS", "FrozenMap", "RetrievalConfig", "ScoreWeights"]

class FrozenMap(Mapping[str, float]):
    """A read-only name -> number mapping that pickles (``MappingProxyType`` does not): recipes are shared
    process-wide, so their maps must not be changed in place."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, float] | None = None) -> None:
        self._data = dict(data or {})

    def __getitem__(self, key: str) -> float:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def __reduce__(self) -> tuple[type[FrozenMap], tuple[dict[str, float]]]:
        return type(self), (self._data,)


DEFAULT_WEIGHTS: Mapping[str, float] = FrozenMap(default_weights())
"""The full recipe's weights, from the component registry (:mod:`neusym.symbolic.scoring`). Read-only."""

# Durable statements outrank passing ones at equal similarity; reflections summarise many memories.
DEFAULT_TYPE_WEIGHTS: Mapping[str, float] = FrozenMap({
    "fact": 1.0,
    "preference": 1.0,
    "instruction": 1.0,
    "plan": 1.0,
    "knowledge": 1.0,
    "observation": 1.0,
    "reflection": 1.05,
    "emotion": 0.9,
})


class ScoreWeights(BaseModel):
    """One weight per registered score component (:data:`neusym.symbolic.scoring.COMPONENTS`), frozen.

    ``ScoreWeights(recency=0.2)`` keeps every other weight at its default; an unknown name (``recencey``) is an
    error instead of a silently ignored key; ``ScoreWeights.only(similarity=1.0)`` sets every unnamed weight to 0
    (a recipe without boosts). Instances cannot be changed in place: a recipe's weights are shared by every search
    that uses the recipe, so ``RECIPE.weights["x"] = 0`` must not change them for the whole process; derive a
    new recipe with :meth:`RetrievalConfig.with_weights` instead.
    """

    model_config = ConfigDict(frozen=True)

    values: Mapping[str, float] = Field(default_factory=lambda: FrozenMap(default_weights()))

    @model_validator(mode="before")
    @classmethod
    def _from_names(cls, data: Any) -> Any:
        """``ScoreWeights(recency=0.2)`` or ``ScoreWeights(values={...})``: names are checked against the registry
        and the unnamed weights take their defaults."""
        if isinstance(data, ScoreWeights):
            return {"values": dict(data.values)}
        if not isinstance(data, Mapping):
            return data
        given = data["values"] if set(data) == {"values"} and isinstance(data["values"], Mapping) else data
        known = {c.name for c in COMPONENTS}
        unknown = sorted(str(k) for k in given if k not in known)
        if unknown:
            raise ValueError(f"unknown score component(s) {unknown}; known: {sorted(known)}")
        return {"values": {**default_weights(), **given}}

    @field_validator("values", mode="after")
    @classmethod
    def _check(cls, v: Mapping[str, float]) -> Mapping[str, float]:
        for name, w in v.items():
            if not math.isfinite(w) or w < 0:
                raise ValueError(f"weight {name!r} must be a finite number >= 0, got {w!r}")
        return FrozenMap(dict(v))

    @model_serializer
    def _dump(self) -> dict[str, float]:
        """Serialised flat (``{"recency": 0.05, ...}``), which the constructor reads back."""
        return dict(self.values)

    @classmethod
    def only(cls, **weights: float) -> ScoreWeights:
        """Every weight not named is 0: ``ScoreWeights.only(similarity=1.0)`` scores by stage 1 alone."""
        return cls.model_validate({**{c.name: 0.0 for c in COMPONENTS}, **weights})

    def replace(self, **changes: float) -> ScoreWeights:
        """A validated copy with ``changes`` applied (names checked like the constructor)."""
        return ScoreWeights.model_validate({**self.values, **changes})

    def __getitem__(self, name: str) -> float:
        return self.values[name]

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # iterate names like a mapping
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def get(self, name: str, default: float = 0.0) -> float:
        return self.values.get(name, default)

    def items(self) -> Iterator[tuple[str, float]]:
        return iter(self.values.items())

    def as_dict(self) -> dict[str, float]:
        return dict(self.values)


class RetrievalConfig(BaseModel):
    """How :meth:`NeuSymMemory.search` retrieves. Use a named recipe from :mod:`neusym.retrieval.recipes`
    or build one; ``name`` shows up in explanations and benchmark reports."""

    model_config = ConfigDict(frozen=True)

    name: str = "custom"
    dense: bool = True
    lexical: bool = True
    lexical_context: bool = True  # BM25 also matches a conversation turn's session neighbours' words (see lexical)
    candidates: int = Field(default=50, ge=1, le=10_000)  # stage-1 depth per channel
    # stage-1 depth when the scope holds standalone facts (most of the channels' best hits have no speaker); None:
    # ``candidates``. Why a depth per shape: stage 2 only reorders what stage 1 proposed, and on facts its boosts
    # (a time window, the pool geometry) lift evidence from ranks 50-100 that a depth of 50 never shows it, while
    # on conversation turns a deeper pool bought nothing in cross-validation and costs stage-2 time
    fact_candidates: int | None = Field(default=None, ge=1, le=10_000)
    rrf_k: int = Field(default=20, ge=1)
    fusion: Literal["linear", "rrf"] = "linear"  # how stage 1 fuses dense and BM25 (see pipeline.stage1)
    lexical_weight: float = Field(default=0.6, ge=0)  # BM25 share in linear fusion (dense = 1)
    graph_expand: bool = True
    neighbours: bool = True
    expand_limit: int = Field(default=20, ge=0)
    hop_limit: int = Field(default=10, ge=0)
    hop_discount: float = Field(default=0.5, ge=0, le=1)  # graph component of a memory reached through one hop
    hub_degree: int = Field(default=50, ge=0)  # entities mentioned more often do not seed expansion
    hub_fraction: float = Field(default=0.2, ge=0)  # ... nor entities that this share of the scope mentions
    hub_slack: float = Field(default=2.0, ge=0)  # ... plus this many mentions (a tiny scope has no hubs)
    activation_seeds: int = Field(default=5, ge=0)  # candidates in either channel's top this many spread activation
    activation_limit: int = Field(default=10, ge=0)  # memories activation may bring in beyond stage 1's
    activation_support: int = Field(default=2, ge=1)  # sources (seeds + the query) that must share an entity
    activation_query: float = Field(default=1.0, ge=0)  # activation a query entity starts with
    distinct_k: int = Field(default=10, ge=1)  # nearest other candidates the ``distinct`` density averages over
    strength_max: float = Field(default=5.0, gt=0)  # strength where the strength component saturates (policy max)
    temporal: bool = True  # parse time expressions in the query into an event-time boost
    half_life_days: float = Field(default=90.0, gt=0)
    weights: ScoreWeights = Field(default_factory=ScoreWeights)
    # Weights for a memory without a speaker, i.e. a standalone fact rather than a conversation turn (see
    # :meth:`weights_for`); None: the same as ``weights``. Why two sets: the same signal means different things on
    # the two shapes (a turn's NEXT neighbour is the reply to it, a fact's is an unrelated fact of the same
    # session), and on LoCoMo several components help on one shape and hurt on the other in cross-validation.
    # The shape is read off each memory in stage 2 (``m.speaker``), so a store mixing both is scored per memory.
    fact_weights: ScoreWeights | None = None
    type_weights: Mapping[str, float] = Field(default_factory=lambda: DEFAULT_TYPE_WEIGHTS)
    min_score: float = 0.0
    catch_up_on_search: bool = True  # check the graph's write sequence first (multi-process sharing)

    @field_validator("weights", mode="before")
    @classmethod
    def _weights(cls, v: Any) -> Any:
        return v if isinstance(v, ScoreWeights) else ScoreWeights.model_validate(v)

    @field_validator("fact_weights", mode="before")
    @classmethod
    def _fact_weights(cls, v: Any) -> Any:
        return v if v is None or isinstance(v, ScoreWeights) else ScoreWeights.model_validate(v)

    @field_validator("type_weights", mode="after")
    @classmethod
    def _type_weights(cls, v: Mapping[str, float]) -> Mapping[str, float]:
        return FrozenMap(dict(v))

    @field_serializer("type_weights")
    def _dump_types(self, v: Mapping[str, float]) -> dict[str, float]:
        return dict(v)

    def with_(self, **changes: Any) -> RetrievalConfig:
        """A validated copy with ``changes`` (a ``weights`` mapping replaces the weights: unnamed ones take their
        defaults; use :meth:`with_weights` to change some and keep the rest). A ``candidates`` given without
        ``fact_candidates`` is the depth for both shapes: ``with_(candidates=2)`` means two candidates, not two for
        conversation turns and the recipe's 100 for facts."""
        data = {name: getattr(self, name) for name in type(self).model_fields}
        if "candidates" in changes and "fact_candidates" not in changes:
            data["fact_candidates"] = None  # an explicit depth is the depth for both shapes
        data.update(changes)
        return type(self).model_validate(data)

    def with_weights(self, **weights: float) -> RetrievalConfig:
        """A copy with these weights changed and the recipe's others kept, for BOTH shapes (conversation turns
        and, when the recipe has its own ``fact_weights``, standalone facts)."""
        fw = self.fact_weights.replace(**weights) if self.fact_weights is not None else None
        return self.with_(weights=self.weights.replace(**weights), fact_weights=fw)

    def with_turn_weights(self, **weights: float) -> RetrievalConfig:
        """A copy with these weights changed for conversation turns only (facts keep theirs)."""
        return self.with_(weights=self.weights.replace(**weights), fact_weights=self.facts)

    def with_fact_weights(self, **weights: float) -> RetrievalConfig:
        """A copy with these weights changed for standalone facts only (memories without a speaker)."""
        return self.with_(fact_weights=self.facts.replace(**weights))

    @property
    def facts(self) -> ScoreWeights:
        """The weights a memory without a speaker is scored with."""
        return self.fact_weights if self.fact_weights is not None else self.weights

    def weights_for(self, speaker: str | None) -> ScoreWeights:
        """The weights stage 2 scored a memory with: ``weights`` for a conversation turn (it has a speaker),
        :attr:`facts` for a standalone fact."""
        return self.weights if speaker is not None else self.facts

    def depth_for(self, turns: bool) -> int:
        """The stage-1 depth for a scope of conversation turns (``turns``) or of standalone facts."""
        return self.candidates if turns or self.fact_candidates is None else self.fact_candidates

    def uses(self, name: str) -> bool:
        """Whether component ``name`` has a non-zero weight on either shape (stage 2 computes it then)."""
        return self.weights[name] > 0 or self.facts[name] > 0
