"""What a reflection returns (:class:`Reflection`) and the scope it is written in.

The reflection service itself (``mem.reflection``: ``reflect``, ``session_end``, ``build_context``, background
triggers) is :mod:`neusym.services.reflection`; it writes reflections through the engine's write path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.errors import ScopeError
from neusym.record import MemoryRecord, Scope
from neusym.reflection.quality import QualityReport
from neusym.reflection.reflector import ReflectionDraft

__all__ = ["Reflection", "common_scope"]


@dataclass
class Reflection:
    """The outcome of one reflection: the stored memory (None if governance refused it) and how it was made."""

    memory: MemoryRecord | None
    draft: ReflectionDraft
    scope: Scope
    decision: Any = None
    quality: QualityReport | None = None
    reinforced: list[str] = field(default_factory=list)
    cooled: list[str] = field(default_factory=list)

    @property
    def id(self) -> str | None:
        return self.memory.id if self.memory is not None else None

    @property
    def summary(self) -> str:
        return self.draft.summary

    @property
    def source_ids(self) -> list[str]:
        return list(self.draft.source_ids)

    @property
    def stored(self) -> bool:
        return self.memory is not None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly report (what a Runnable or a tool returns)."""
        return {"id": self.id, "stored": self.stored, "summary": self.summary, "scope": self.scope.as_params(),
                "source_ids": self.source_ids, "reinforced": list(self.reinforced), "cooled": list(self.cooled),
                "reflection": self.draft.metadata(),
                "quality": None if self.quality is None else {"question": self.quality.question,
                                                              "lost_key_fact": self.quality.lost_key_fact,
                                                              "missing": list(self.quality.missing)}}


def common_scope(request: Scope, sources: Sequence[MemoryRecord]) -> Scope:
    """The narrowest scope every source shares (a session's reflection stays in the session)."""
    tenants = {s.scope.user_id for s in sources}
    if len(tenants) > 1:
        raise ScopeError(f"a reflection never mixes tenants; sources belong to {len(tenants)} users")
    if request.user_id is not None and tenants != {request.user_id}:
        raise ScopeError("reflection sources are outside the requested tenant")
    fields: dict[str, str | None] = {}
    for name in ("user_id", "agent_id", "session_id"):
        vals = {getattr(s.scope, name) for s in sources}
        fields[name] = vals.pop() if len(vals) == 1 else None
    target = Scope(**fields)
    return target if not target.is_empty else request
