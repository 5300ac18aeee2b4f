"""The context builder: what goes into a prompt, within a token budget.

Three sources compete for one budget: reflection summaries (dense, cheap per fact), the most relevant raw memories
(exact wording, dates) and the short-term window (the last messages, which the model needs verbatim). Each gets a
share; whatever one leaves unused flows to the others, so a small window does not waste budget. The memories are
rendered by :mod:`neusym.prompting` - framed as stored records (data, not instructions), each quoted on one line,
with careful-use marks (low confidence, superseded history, conflicting) and a legend of the marks used; records
awaiting review (pending, flagged suspicious) are withheld unless ``include_unreviewed``. The final text is
re-counted as a whole (token counts of joined lines are not always the sum of the parts), and items are dropped
until it fits: the budget is never exceeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from neusym.errors import InvalidInputError
from neusym.ingest import normalize_messages
from neusym.prompting import careful_use_marks, frame, memory_line, neutralize, withheld_reason
from neusym.record import MemoryRecord, MemoryType, Scope, SearchResult
from neusym.reflection.extractive import find_triple_conflicts
from neusym.reflection.tokens import TokenCounter, get_token_counter

__all__ = ["BuiltContext", "ContextBuilder", "ContextItem", "marks_for"]

_H_REFLECT = "Reflections (consolidated from past memories)"
_H_MEMORY = "Relevant memories"
_H_WINDOW = "## Recent conversation"
_RAW_TYPES = [t.value for t in MemoryType if t is not MemoryType.REFLECTION]


@dataclass(eq=False)
class ContextItem:
    kind: str  # reflection | memory | message
    text: str
    tokens: int
    priority: float
    memory_id: str | None = None
    marks: list[str] = field(default_factory=list)
    order: int = 0  # position inside its section


@dataclass
class BuiltContext:
    """The assembled context. ``str(ctx)`` is the prompt text; ``tokens <= budget`` always holds."""

    text: str
    tokens: int
    budget: int
    items: list[ContextItem]
    omitted: int = 0
    counter: str = ""
    withheld: int = 0  # records left out because they await review (see neusym.prompting)

    def __str__(self) -> str:
        return self.text

    @property
    def memory_ids(self) -> list[str]:
        return [i.memory_id for i in self.items if i.memory_id]

    def marked(self, mark: str) -> list[ContextItem]:
        """Items carrying ``mark`` (prefix match, so "superseded" finds "superseded until ...")."""
        return [i for i in self.items if any(m.startswith(mark) for m in i.marks)]

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "budget": self.budget, "omitted": self.omitted,
                "counter": self.counter, "withheld": self.withheld,
                "items": [{"kind": i.kind, "memory_id": i.memory_id, "marks": list(i.marks), "tokens": i.tokens}
                          for i in self.items]}


def marks_for(record: MemoryRecord, conflicting: set[str], superseded: set[str]) -> list[str]:
    """The careful-use marks of ``record`` (see :func:`neusym.prompting.careful_use_marks`)."""
    return careful_use_marks(record, conflicting, superseded)


class ContextBuilder:
    """Builds prompt context from a :class:`~neusym.NeuSymMemory` (duck-typed: ``search`` and ``store``).

    Shares are fractions of the budget left after headers; unused share is redistributed. ``header`` is a line
    shown inside the memory block (e.g. "Relevant memories about the user:"); ``include_unreviewed`` shows records
    awaiting review (marked) instead of withholding them.
    """

    def __init__(self, *, counter: TokenCounter | None = None, reflection_share: float = 0.3,
                 memory_share: float = 0.45, window_share: float = 0.25, k_reflections: int = 5,
                 k_memories: int = 20, include_history: bool = True, header: str = "",
                 include_unreviewed: bool = False) -> None:
        if min(reflection_share, memory_share, window_share) < 0 or (reflection_share + memory_share
                                                                     + window_share) <= 0:
            raise InvalidInputError("context shares must be non-negative and not all zero")
        total = reflection_share + memory_share + window_share
        self.shares = {"reflection": reflection_share / total, "memory": memory_share / total,
                       "message": window_share / total}
        self.counter = counter or get_token_counter()
        self.k_reflections = k_reflections
        self.k_memories = k_memories
        self.include_history = include_history
        self.header = header
        self.include_unreviewed = include_unreviewed

    # ------------------------------------------------------------------ candidates
    def _memory_items(self, mem: Any, results: Sequence[SearchResult], kind: str,
                      scope: Scope) -> tuple[list[ContextItem], int]:
        """The results that may be shown, as items; and how many were withheld (awaiting review)."""
        ids = [r.memory.id for r in results]
        conflicting: set[str] = set()
        superseded: set[str] = set()
        if ids:  # links among everything found, so a shown value is marked even when its rival is withheld
            for src, rel, dst in mem.store.relations_among(ids, {"CONFLICTS_WITH", "SUPERSEDES"}, scope):
                if rel == "CONFLICTS_WITH":
                    conflicting.update((src, dst))
                else:
                    superseded.add(dst)
            for note in find_triple_conflicts([r.memory for r in results]):
                conflicting.update(note.ids)
        items: list[ContextItem] = []
        withheld = 0
        for r in results:
            rec = r.memory
            if withheld_reason(rec, include_unreviewed=self.include_unreviewed) is not None:
                withheld += 1
                continue
            # a reflection carries its sources' careful-use flags (reflection/sources.py): marked like a memory
            marks = careful_use_marks(rec, conflicting, superseded) if kind == "memory" else careful_use_marks(rec)
            text = memory_line(rec, marks, reflection=kind == "reflection")
            items.append(ContextItem(kind, text, self.counter.count(text) + 1, float(r.score), rec.id, marks,
                                     len(items)))
        return items, withheld

    def _message_items(self, recent_messages: Sequence[Any] | None) -> list[ContextItem]:
        if not recent_messages:
            return []
        turns = normalize_messages(list(recent_messages))
        items = []
        for i, t in enumerate(turns):
            who = neutralize(t.speaker or t.role)
            text = f"{who}: {neutralize(t.content)}"
            # newer messages first in priority: the window keeps the latest turns
            items.append(ContextItem("message", text, self.counter.count(text) + 1, float(i), None, [], i))
        return items

    # ------------------------------------------------------------------ assembly
    def _render(self, chosen: Sequence[ContextItem], withheld: int = 0) -> str:
        def rows(kind: str) -> list[str]:
            return [c.text for c in sorted((c for c in chosen if c.kind == kind), key=lambda c: c.order)]

        parts = [frame([(_H_REFLECT, rows("reflection")), (_H_MEMORY, rows("memory"))], header=self.header,
                       marks=[m for c in chosen for m in c.marks], withheld=withheld)]
        window = rows("message")
        if window:
            parts.extend([_H_WINDOW, *window])
        return "\n".join(p for p in parts if p)

    def _frame_tokens(self, pools: dict[str, list[ContextItem]], withheld: int) -> int:
        """What the text costs besides its items: the memory block's frame (delimiters, preamble, header, headings,
        the legend of the marks the candidates carry, the withheld note) and the window's heading."""
        probe = frame([(_H_REFLECT, ["-"] if pools["reflection"] else []),
                       (_H_MEMORY, ["-"] if pools["memory"] else [])], header=self.header,
                      marks=[m for c in [*pools["reflection"], *pools["memory"]] for m in c.marks], withheld=withheld)
        return self.counter.count("\n".join(p for p in (probe, _H_WINDOW if pools["message"] else "") if p)) + 4

    def build(self, mem: Any, query: str, scope: Scope, budget_tokens: int,
              recent_messages: Sequence[Any] | None = None) -> BuiltContext:
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
            raise InvalidInputError("budget_tokens must be a non-negative int")
        cnt = self.counter
        statuses = ["active", "pending", *(["superseded"] if self.include_history else [])]
        # unreviewed records come back from search so that this builder can withhold them itself and say so
        refl = mem.search(query, scope=scope, k=self.k_reflections, types=["reflection"], touch=False,
                          include_unreviewed=True) \
            if self.k_reflections else []
        raw = mem.search(query, scope=scope, k=self.k_memories, types=_RAW_TYPES, statuses=statuses,
                         touch=False, include_unreviewed=True) if self.k_memories else []
        refl_items, refl_withheld = self._memory_items(mem, refl, "reflection", scope)
        raw_items, raw_withheld = self._memory_items(mem, raw, "memory", scope)
        withheld = refl_withheld + raw_withheld
        pools = {"reflection": refl_items, "memory": raw_items, "message": self._message_items(recent_messages)}
        candidates = sum(len(p) for p in pools.values())
        room = max(budget_tokens - self._frame_tokens(pools, withheld), 0)
        chosen: list[ContextItem] = []
        used = 0
        # pass 1: each kind within its share; pass 2: leftovers in order reflection, memory, message
        for pass_no in (1, 2):
            for kind in ("reflection", "memory", "message"):
                cap = int(room * self.shares[kind]) if pass_no == 1 else room
                spent = sum(c.tokens for c in chosen if c.kind == kind) if pass_no == 1 else used
                pool = pools[kind]
                ordered = sorted(pool, key=lambda c: -c.priority) if kind != "message" else list(reversed(pool))
                for item in ordered:
                    if item in chosen:
                        continue
                    if spent + item.tokens > cap:
                        if kind == "message":
                            break  # the window is contiguous: never skip a newer turn for an older one
                        continue
                    chosen.append(item)
                    spent += item.tokens
                    used += item.tokens
                if pass_no == 1 and kind != "memory" and pool and cap - spent > 24 and not any(
                        c.kind == kind for c in chosen):
                    # one long top reflection / latest turn: show its start within the share rather than nothing
                    top = ordered[0]
                    cut = cnt.truncate(top.text, cap - spent - 6)
                    # a cut record stays a closed quotation (a dangling escape dropped), a cut turn just ends
                    cut = cut.rstrip("\\") + '…"' if kind == "reflection" else cut + " …"
                    chosen.append(ContextItem(kind, cut, cnt.count(cut) + 1, top.priority, top.memory_id,
                                              top.marks, top.order))
                    used += chosen[-1].tokens
        text = self._render(chosen, withheld)
        total = cnt.count(text)
        while total > budget_tokens and chosen:
            chosen.remove(_drop_candidate(chosen))
            text = self._render(chosen, withheld)
            total = cnt.count(text)
        if total > budget_tokens:  # pragma: no cover - empty text counts 0
            text, total = "", 0
        section = {"reflection": 0, "memory": 1, "message": 2}
        chosen.sort(key=lambda c: (section[c.kind], c.order))  # items in the order the text shows them
        return BuiltContext(text=text, tokens=total, budget=budget_tokens, items=chosen,
                            omitted=candidates - len(chosen), counter=cnt.name, withheld=withheld)


def _drop_candidate(chosen: Sequence[ContextItem]) -> ContextItem:
    """Lowest-value item first: weakest raw memory, then oldest message, then weakest reflection."""
    for kind in ("memory", "message", "reflection"):
        pool = [c for c in chosen if c.kind == kind]
        if pool:
            return min(pool, key=lambda c: c.priority)
    return chosen[-1]
