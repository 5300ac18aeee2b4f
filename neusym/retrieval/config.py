"""Retrieval as data: which channels run, how they fuse, what stage 2 does, and the score weights."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_TYPE_WEIGHTS", "DEFAULT_WEIGHTS", "RetrievalConfig"]

# Tuned on the LoCoMo dev half only (benchmarks/RESULTS.md); every component is general, none is per question.
DEFAULT_WEIGHTS: dict[str, float] = {
    "similarity": 1.0,
    "recency": 0.05,
    "importance": 0.05,
    "confidence": 0.05,
    "strength": 0.05,
    "entity": 0.05,
    "graph": 0.05,
    "neighbour": 0.25,  # best fused score among the memory's conversation neighbours (NEXT)
    "temporal": 0.1,
    "dense": 0.0,  # extra weight on the raw cosine (linear fusion already puts it in the similarity)
    "lexical": 0.0,  # BM25 / best BM25 of the query
    "speaker": 0.2,  # the memory's speaker is named in the query
    "predicate": 0.3,  # the memory states the kind of fact the query asks about (lives_in for "where ... live")
}

# Durable statements outrank passing ones at equal similarity; reflections summarise many memories.
DEFAULT_TYPE_WEIGHTS: dict[str, float] = {
    "fact": 1.0,
    "preference": 1.0,
    "instruction": 1.0,
    "plan": 1.0,
    "knowledge": 1.0,
    "observation": 1.0,
    "reflection": 1.05,
    "emotion": 0.9,
}


class RetrievalConfig(BaseModel):
    """How :meth:`NeuSymMemory.search` retrieves. Use a named recipe from :mod:`neusym.retrieval.recipes`
    or build one; ``name`` shows up in explanations and benchmark reports."""

    model_config = ConfigDict(frozen=True)

    name: str = "custom"
    dense: bool = True
    lexical: bool = True
    candidates: int = Field(default=50, ge=1, le=10_000)  # stage-1 depth per channel
    rrf_k: int = Field(default=20, ge=1)
    fusion: Literal["linear", "rrf"] = "linear"  # how stage 1 fuses dense and BM25 (see pipeline.stage1)
    lexical_weight: float = Field(default=0.6, ge=0)  # BM25 share in linear fusion (dense = 1)
    graph_expand: bool = True
    neighbours: bool = True
    expand_limit: int = Field(default=20, ge=0)
    hop_limit: int = Field(default=10, ge=0)
    hub_degree: int = Field(default=50, ge=0)  # entities mentioned more often do not seed expansion
    hub_fraction: float = Field(default=0.2, ge=0)  # ... nor entities that this share of the scope mentions
    temporal: bool = True  # parse time expressions in the query into an event-time boost
    half_life_days: float = Field(default=90.0, gt=0)
    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    type_weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_TYPE_WEIGHTS))
    min_score: float = 0.0
    catch_up_on_search: bool = True  # check the graph's write sequence first (multi-process sharing)

    def with_(self, **changes: Any) -> RetrievalConfig:
        return self.model_copy(update=changes)
