"""Extraction: free text in, typed candidate memories (entities, triples, times) out.

:class:`RuleExtractor` is the fast LLM-free default; :class:`LLMExtractor` asks a chat model and falls back to the
rules. Both satisfy the :class:`Extractor` protocol. :func:`entity_key` is how entity names are keyed in the graph,
and :data:`FUNCTIONAL_PREDICATES` / :func:`is_functional` tell governance which facts hold one value at a time.
"""

from neusym.extraction.base import Extraction, Extractor, entity_key
from neusym.extraction.llm import LLMExtractor
from neusym.extraction.rules import RuleExtractor
from neusym.extraction.vocabulary import (
    FUNCTIONAL_PREDICATES,
    PREDICATES,
    canonical_predicate,
    is_functional,
)

__all__ = [
    "FUNCTIONAL_PREDICATES",
    "PREDICATES",
    "Extraction",
    "Extractor",
    "LLMExtractor",
    "RuleExtractor",
    "canonical_predicate",
    "entity_key",
    "is_functional",
]
