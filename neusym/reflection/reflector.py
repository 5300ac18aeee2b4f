"""Reflectors: many raw memories in, one reflection draft out, within token budgets.

Two batch reflectors share one hierarchical driver (:func:`reflect_records`):

* :class:`LLMReflector` asks a chat model for :class:`~neusym.reflection.prompts.ReflectionOutput` (structured
  output where the model supports it, validated JSON otherwise, bounded retries) and raises
  :class:`ReflectionError` when the model never produces valid output. Nothing is written before the draft is
  complete, so a failure loses nothing.
* :class:`ExtractiveReflector` needs no model: it groups statements by entity/topic, drops near-duplicates and keeps
  each group's representative and most recent statements (with their dates and numbers), so reflection works with
  no LLM configured.

Budgets: a batch's prompt never exceeds ``input_tokens`` and a summary never exceeds ``output_tokens``. More
memories than one prompt holds are split into batches whose summaries are summarised again (a summary tree), so
every source stays accounted for instead of being silently dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from neusym.errors import ExtractionError, InvalidInputError
from neusym.llm import ChatModel, as_chat_model, complete_json
from neusym.record import MemoryRecord, MemoryType, Scope
from neusym.reflection.extractive import ExtractiveReflector
from neusym.reflection.prompts import (
    PROMPT_VERSION,
    REFLECT_SYSTEM,
    ConflictNote,
    ReflectionOutput,
    reflect_user_prompt,
    render_memory,
)
from neusym.reflection.tokens import ReflectionBudget, TokenCounter, get_token_counter

__all__ = [
    "BatchReflector",
    "ExtractiveReflector",
    "LLMReflector",
    "ReflectionBudget",
    "ReflectionDraft",
    "ReflectionError",
    "ask_structured",
    "reflect_records",
]

log = logging.getLogger(__name__)

_SYNTH_PREFIX = "partial:"


class ReflectionError(ExtractionError):
    """The model never produced a valid reflection within its retries. No memory was written or changed."""


@dataclass
class ReflectionDraft:
    """A reflection ready to be stored; ids are real memory ids (never aliases or partial summaries)."""

    summary: str
    source_ids: list[str]
    cited_ids: list[str] = field(default_factory=list)
    covered_ids: list[str] = field(default_factory=list)
    goal: str | None = None
    goal_relevance: str = ""
    importance: float = 0.5
    tags: list[str] = field(default_factory=list)
    conflicts: list[ConflictNote] = field(default_factory=list)
    method: str = "extractive"
    levels: int = 1
    calls: int = 0
    max_prompt_tokens: int = 0
    summary_tokens: int = 0
    truncated_ids: list[str] = field(default_factory=list)
    prompt_version: str = PROMPT_VERSION

    def metadata(self) -> dict[str, Any]:
        """What is stored under ``metadata["reflection"]`` (sources live on DERIVED_FROM edges, not here)."""
        return {
            "prompt_version": self.prompt_version,
            "method": self.method,
            "goal": self.goal,
            "goal_relevance": self.goal_relevance,
            "conflicts": [c.model_dump() for c in self.conflicts],
            "source_count": len(self.source_ids),
            "cited_count": len(self.cited_ids),
            "covered_count": len(self.covered_ids),
            "levels": self.levels,
            "calls": self.calls,
            "max_prompt_tokens": self.max_prompt_tokens,
            "summary_tokens": self.summary_tokens,
            "truncated_ids": list(self.truncated_ids),
        }


class BatchReflector(Protocol):
    """Summarises one batch that already fits the input budget. Ids in the output are the records' ids."""

    name: str

    def prompt_overhead(self, goal: str | None, budget: ReflectionBudget, counter: TokenCounter) -> int: ...

    def render(self, alias: str, record: MemoryRecord) -> str: ...

    def run_batch(self, records: Sequence[MemoryRecord], lines: Sequence[str], goal: str | None,
                  budget: ReflectionBudget, counter: TokenCounter) -> tuple[ReflectionOutput, int]: ...


# ---------------------------------------------------------------------------------------------- LLM


def ask_structured(llm: Any, system: str, user: str, schema: type[Any], *, retries: int = 2,
                   structured: bool = True) -> Any:
    """Structured output when the model offers it (LangChain ``with_structured_output``), JSON otherwise.

    Any failure of the structured path falls through to :func:`~neusym.llm.complete_json`, which validates and
    re-asks up to ``retries`` times, then raises :class:`~neusym.errors.ExtractionError`.
    """
    chat = as_chat_model(llm)
    if chat is None:
        raise InvalidInputError("no model configured")
    raw = getattr(chat, "model", llm)
    if structured and hasattr(raw, "with_structured_output"):
        try:
            out = raw.with_structured_output(schema).invoke([("system", system), ("human", user)])
            if isinstance(out, schema):
                return out
            if isinstance(out, dict):
                return schema.model_validate(out)
            if hasattr(out, "model_dump"):
                return schema.model_validate(out.model_dump())
        except Exception as err:  # noqa: BLE001 - NotImplementedError, provider errors: use the JSON path
            log.debug("structured output unavailable (%s: %s); using JSON", type(err).__name__, err)
    return complete_json(chat, system, user, schema, retries=retries)


class LLMReflector:
    """Reflection by a chat model (LangChain chat model, LlamaIndex LLM, ``ChatModel`` or ``str -> str``)."""

    name = "llm"

    def __init__(self, llm: Any, *, retries: int = 2, structured: bool = True) -> None:
        chat = as_chat_model(llm)
        if chat is None:
            raise InvalidInputError("LLMReflector needs a model")
        self.llm = llm
        self.chat: ChatModel = chat
        self.retries = retries
        self.structured = structured

    def prompt_overhead(self, goal: str | None, budget: ReflectionBudget, counter: TokenCounter) -> int:
        return counter.count(REFLECT_SYSTEM) + counter.count(reflect_user_prompt([], goal, budget.output_tokens)) + 8

    def render(self, alias: str, record: MemoryRecord) -> str:
        return render_memory(alias, record)

    def run_batch(self, records: Sequence[MemoryRecord], lines: Sequence[str], goal: str | None,
                  budget: ReflectionBudget, counter: TokenCounter) -> tuple[ReflectionOutput, int]:
        lines = list(lines)
        user = reflect_user_prompt(lines, goal, budget.output_tokens)
        prompt_tokens = counter.count(REFLECT_SYSTEM) + counter.count(user)
        while prompt_tokens > budget.input_tokens and lines:  # joined text can tokenise a little differently
            i = max(range(len(lines)), key=lambda j: len(lines[j]))
            lines[i] = counter.truncate(lines[i], max(counter.count(lines[i]) - (prompt_tokens - budget.input_tokens)
                                                      - 2, 1)) + " …"
            user = reflect_user_prompt(lines, goal, budget.output_tokens)
            prompt_tokens = counter.count(REFLECT_SYSTEM) + counter.count(user)
        try:
            out: ReflectionOutput = ask_structured(self.llm, REFLECT_SYSTEM, user, ReflectionOutput,
                                                   retries=self.retries, structured=self.structured)
        except ExtractionError as err:
            raise ReflectionError(f"reflection failed after {self.retries + 1} attempts; nothing was changed: "
                                  f"{err}") from err
        alias_to_id = {f"m{i + 1}": r.id for i, r in enumerate(records)}

        def real(aliases: Sequence[str]) -> list[str]:
            return list(dict.fromkeys(alias_to_id[a.strip()] for a in aliases if a.strip() in alias_to_id))

        summary = out.summary
        if counter.count(summary) > budget.output_tokens:
            summary = _trim_to_sentence(counter.truncate(summary, budget.output_tokens))
        mapped = out.model_copy(update={
            "summary": summary,
            "cited": real(out.cited),
            "covered": real(out.covered),
            "conflicts": [ConflictNote(ids=real(c.ids), description=c.description) for c in out.conflicts
                          if len(real(c.ids)) >= 1],
        })
        return mapped, prompt_tokens


def _trim_to_sentence(text: str) -> str:
    cut = max(text.rfind(". "), text.rfind(".\n"), text.rfind("; "))
    return text[: cut + 1].rstrip() if cut > len(text) // 2 else text.rstrip()


# ---------------------------------------------------------------------------------------------- driver


@dataclass
class _Node:
    record: MemoryRecord
    leaves: list[str]
    cited: list[str]
    covered: list[str]


def _synthetic(index: int, level: int, out: ReflectionOutput, scope: Scope) -> MemoryRecord:
    return MemoryRecord(id=f"{_SYNTH_PREFIX}{level}.{index}", content=out.summary, type=MemoryType.REFLECTION,
                        scope=scope, importance=out.importance, tags=list(out.tags))


def _pack(reflector: BatchReflector, nodes: Sequence[_Node], capacity: int, counter: TokenCounter,
          truncated: list[str]) -> list[tuple[list[_Node], list[str]]]:
    """Split nodes (in order) into batches whose rendered lines fit ``capacity`` tokens; an oversized single
    memory is shown truncated (and reported) rather than dropped."""
    batches: list[tuple[list[_Node], list[str]]] = []
    cur: list[_Node] = []
    cur_lines: list[str] = []
    used = 0
    for node in nodes:
        alias = f"m{len(cur) + 1}"
        line = reflector.render(alias, node.record)
        cost = counter.count(line) + 1
        if cur and used + cost > capacity:
            batches.append((cur, cur_lines))
            cur, cur_lines, used = [], [], 0
            alias = "m1"
            line = reflector.render(alias, node.record)
            cost = counter.count(line) + 1
        if cost > capacity:
            line = counter.truncate(line, capacity - 2) + " …"
            while counter.count(line) + 1 > capacity:
                line = line[: max(1, len(line) - 8)]
            cost = counter.count(line) + 1
            truncated.extend(node.leaves if not node.record.id.startswith(_SYNTH_PREFIX) else [])
        cur.append(node)
        cur_lines.append(line)
        used += cost
    if cur:
        batches.append((cur, cur_lines))
    return batches


def reflect_records(
    records: Sequence[MemoryRecord],
    reflector: BatchReflector,
    *,
    goal: str | None = None,
    budget: ReflectionBudget | None = None,
    counter: TokenCounter | None = None,
) -> ReflectionDraft:
    """Reflect ``records`` (oldest first is best) into one draft, batching hierarchically beyond the input budget.

    Raises:
        InvalidInputError: no records, or budgets too small to ever converge.
        ReflectionError: the model failed (LLM reflector); nothing has been written.
    """
    if not records:
        raise InvalidInputError("nothing to reflect: no memories")
    budget = budget or ReflectionBudget()
    counter = counter or get_token_counter()
    overhead = reflector.prompt_overhead(goal, budget, counter)
    capacity = budget.input_tokens - overhead
    # a summary line = alias/date/type prefix (~16 tokens) + the summary; two must fit one prompt
    if capacity < 2 * (budget.output_tokens + 24):
        raise InvalidInputError(
            f"input budget {budget.input_tokens} leaves {capacity} tokens for memories after the prompt; it must "
            f"hold two summaries of {budget.output_tokens} tokens (raise input_tokens or lower output_tokens)")
    scope = records[0].scope
    nodes = [_Node(r, [r.id], [], []) for r in records]
    truncated: list[str] = []
    conflicts: list[ConflictNote] = []
    goal_bits: list[str] = []
    calls = 0
    max_prompt = 0
    level = 0
    final: ReflectionOutput | None = None
    while True:
        level += 1
        if level > budget.max_levels:
            raise InvalidInputError(f"reflection did not converge within {budget.max_levels} levels")
        batches = _pack(reflector, nodes, capacity, counter, truncated)
        next_nodes: list[_Node] = []
        for bi, (batch, lines) in enumerate(batches):
            out, prompt_tokens = reflector.run_batch([n.record for n in batch], lines, goal, budget, counter)
            calls += 1
            max_prompt = max(max_prompt, prompt_tokens)
            by_id = {n.record.id: n for n in batch}
            cited = _expand(out.cited, by_id, "cited")
            covered = _expand(out.covered, by_id, "covered")
            for c in out.conflicts:
                ids = _expand(c.ids, by_id, "cited")
                if ids:
                    conflicts.append(ConflictNote(ids=ids, description=c.description))
            if out.goal_relevance:
                goal_bits.append(out.goal_relevance)
            leaves = [leaf for n in batch for leaf in n.leaves]
            next_nodes.append(_Node(_synthetic(bi, level, out, scope), leaves, cited, covered))
            final = out
        nodes = next_nodes
        if len(nodes) == 1:
            break
    assert final is not None
    root = nodes[0]
    summary = root.record.content
    return ReflectionDraft(
        summary=summary,
        source_ids=[r.id for r in records],
        cited_ids=[i for i in dict.fromkeys(root.cited) if not i.startswith(_SYNTH_PREFIX)],
        covered_ids=[i for i in dict.fromkeys(root.covered) if not i.startswith(_SYNTH_PREFIX)],
        goal=goal,
        goal_relevance=final.goal_relevance or " ".join(dict.fromkeys(goal_bits))[:2000],
        importance=final.importance,
        tags=list(final.tags),
        conflicts=_dedupe_conflicts(conflicts),
        method=reflector.name,
        levels=level,
        calls=calls,
        max_prompt_tokens=max_prompt,
        summary_tokens=counter.count(summary),
        truncated_ids=list(dict.fromkeys(truncated)),
    )


def _expand(ids: Sequence[str], by_id: dict[str, _Node], what: str) -> list[str]:
    """Map ids from one batch's output to leaf ids: a cited/covered partial summary passes on what *it* cited or
    covered (a leaf is only "covered" if every level kept it)."""
    out: list[str] = []
    for i in ids:
        node = by_id.get(i)
        if node is None:
            continue
        if not i.startswith(_SYNTH_PREFIX):
            out.append(i)
        else:
            out.extend(node.cited if what == "cited" else node.covered)
    return list(dict.fromkeys(out))


def _dedupe_conflicts(conflicts: Sequence[ConflictNote]) -> list[ConflictNote]:
    seen: set[frozenset[str]] = set()
    out: list[ConflictNote] = []
    for c in conflicts:
        key = frozenset(c.ids)
        if key and key not in seen:
            seen.add(key)
            out.append(c)
    return out
