"""What a read may filter on, as one value: :class:`SearchFilters`, and the keywords that stand for it.

``mem.search(q, user_id="ana", filters=SearchFilters(types=["plan"], valid_at=march))`` is the long form; the
filter fields may also be given as keywords (``mem.search(q, user_id="ana", types=["plan"])``), folded into the
same value, keywords winning. The engine checks every value (one place, typed errors), so a filter built here is
only a typed container: ``SearchFilters(types=["nope"])`` fails at the search, as a keyword would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from neusym.errors import InvalidInputError
from neusym.record import SCOPE_KEYS, MemoryStatus, MemoryType, PlanState, ScopeIds

__all__ = ["QUERY_FIELDS", "QueryKeywords", "SearchFilters", "SearchKeywords", "split_keywords"]

Times = datetime | float | None


@dataclass(frozen=True, kw_only=True)
class SearchFilters:
    """Which memories a search may return (every field optional; unset means no restriction).

    Attributes:
        types: only these memory types (``fact``, ``preference``, ``plan`` ...).
        tags: only memories carrying one of these tags.
        entities: only memories mentioning one of these entities (names as written).
        plan_states: only plans in these states (``open``, ``done`` ...).
        statuses: these statuses instead of the current ones (active, pending): e.g. ``["archived"]``.
        valid_at: what was true at this time (includes superseded memories, which hold the history).
        time_from, time_to: only memories valid (or created) within this window.
        min_score: drop results scoring below this.
        include_unreviewed: also return memories screening withheld for review (``suspicious``).
    """

    types: Sequence[MemoryType | str] | None = None
    tags: Sequence[str] | None = None
    entities: Sequence[str] | None = None
    plan_states: Sequence[PlanState | str] | None = None
    statuses: Sequence[MemoryStatus | str] | None = None
    valid_at: Times = None
    time_from: Times = None
    time_to: Times = None
    min_score: float | None = None
    include_unreviewed: bool = False

    def with_(self, **changes: Any) -> SearchFilters:
        """A copy with ``changes`` (unknown names are an :class:`InvalidInputError`)."""
        unknown = sorted(set(changes) - _FIELDS)
        if unknown:
            raise InvalidInputError(f"unknown search filter(s) {unknown}; use {sorted(_FIELDS)}")
        return dataclasses.replace(self, **changes)

    def as_kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments (the engine's read parameters have the same names)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_FIELDS = frozenset(f.name for f in dataclasses.fields(SearchFilters))
QUERY_FIELDS = _FIELDS - {"min_score", "include_unreviewed"}
"""The filter fields ``query()`` shares with ``search()`` (it has no score; ``entities`` is its ``entity``)."""


class QueryKeywords(ScopeIds, total=False):
    """``query``'s keywords beyond its own parameters: the scope ids and the filter fields it shares."""

    types: Sequence[MemoryType | str] | None
    tags: Sequence[str] | None
    plan_states: Sequence[PlanState | str] | None
    statuses: Sequence[MemoryStatus | str] | None
    valid_at: Times
    time_from: Times
    time_to: Times


class SearchKeywords(QueryKeywords, total=False):
    """``search``'s keywords beyond its own parameters: the scope ids and every :class:`SearchFilters` field."""

    entities: Sequence[str] | None
    min_score: float | None
    include_unreviewed: bool


def split_keywords(call: str, keywords: Mapping[str, Any], filters: SearchFilters | None,
                   allowed: frozenset[str] = _FIELDS) -> tuple[dict[str, Any], SearchFilters]:
    """A call's extra keywords split into its scope ids and its filters (``filters`` with the keywords set on it).

    Raises:
        TypeError: a keyword that is neither a scope id nor a filter (as Python says it for a signature).
        InvalidInputError: ``filters`` is not a :class:`SearchFilters`, or sets a field this call cannot use.
    """
    if filters is not None and not isinstance(filters, SearchFilters):
        raise InvalidInputError(f"filters must be a SearchFilters, got {type(filters).__name__}")
    base = filters or SearchFilters()
    for name in sorted(_FIELDS - allowed):
        if getattr(base, name) != getattr(SearchFilters(), name):
            raise InvalidInputError(f"{call}() does not filter on {name}")
    ids = {k: v for k, v in keywords.items() if k in SCOPE_KEYS}
    rest = {k: v for k, v in keywords.items() if k not in SCOPE_KEYS}
    unknown = sorted(set(rest) - allowed)
    if unknown:
        raise TypeError(f"{call}() got an unexpected keyword argument {unknown[0]!r}")
    return ids, base.with_(**rest) if rest else base
