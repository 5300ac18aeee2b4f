"""The thin layer every scenario uses to talk to NeuSym: public API calls only, one fresh ``user_id`` per case.

Nothing here reaches into the engine: a step is added with ``add`` exactly as an application would (plain text with
an ``origin``, or a list of chat messages whose roles carry the origin), and reads go through ``get``/``search``/
``review_queue``/``history``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from neusym import MemoryRecord, NeuSymMemory, RecordNotFoundError

ALL_STATUSES = ("active", "pending", "superseded", "archived", "quarantined", "deleted")
CONFLICT_FLAGS = frozenset({"contradiction", "conflict_pending"})
REVIEW_CONFLICT_KINDS = frozenset({"contradiction", "conflict"})
REVIEW_SUSPECT_KINDS = frozenset({"quarantine", "suspicious"})


def now() -> datetime:
    return datetime.now(UTC)


def status_of(record: MemoryRecord | None) -> str | None:
    return None if record is None else str(getattr(record.status, "value", record.status))


def action_of(decision: Any) -> str:
    return str(getattr(decision.action, "value", decision.action))


def step_query_text(step: dict[str, Any]) -> str:
    """The text a user would search for to find what a step stored (the last non-user message of a chat)."""
    if "text" in step:
        return str(step["text"])
    msgs = step["messages"]
    others = [m["content"] for m in msgs if m["role"] != "user"]
    return str((others or [msgs[-1]["content"]])[-1])


class Harness:
    """One open memory shared by every case; each case gets its own tenant."""

    def __init__(self, mem: NeuSymMemory, prefix: str = "gov") -> None:
        self.mem = mem
        self.prefix = prefix

    def uid(self, case_id: str, suffix: str = "") -> str:
        return f"{self.prefix}-{case_id}{suffix}"

    def add(self, step: dict[str, Any], user_id: str, **kwargs: Any) -> Any:
        if "messages" in step:
            return self.mem.add(list(step["messages"]), user_id=user_id, **kwargs)
        return self.mem.add(step["text"], user_id=user_id, origin=step.get("origin", "user"), **kwargs)

    def add_text(self, text: str, user_id: str, **kwargs: Any) -> Any:
        return self.mem.add(text, user_id=user_id, **kwargs)

    def get(self, memory_id: str, user_id: str) -> MemoryRecord | None:
        try:
            return self.mem.get(memory_id, user_id=user_id)
        except RecordNotFoundError:
            return None

    def search_ids(self, query: str, user_id: str, k: int = 10, **kwargs: Any) -> list[str]:
        return [h.memory.id for h in self.mem.search(query, user_id=user_id, k=k, touch=False, **kwargs)]

    def suspect_ids(self, user_id: str, kinds: Sequence[str] | frozenset[str]) -> set[str]:
        """Ids the review queue lists under one of ``kinds`` (the item and the memories it relates to)."""
        out: set[str] = set()
        for item in self.mem.governance.review_queue(user_id=user_id, limit=1000):
            if item.kind in kinds:
                out.add(item.memory_id)
                out.update(getattr(item, "related", None) or [])
        return out
