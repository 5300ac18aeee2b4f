"""Versioned prompts and the response schemas the model's output is validated against.

The prompt version is stored on every reflection (``metadata.reflection.prompt_version``) so a later change in
wording can be told apart when auditing or re-reflecting. Memories are shown to the model under short aliases
(``m1``, ``m2`` ...) rather than their 32-character ids: fewer tokens, and an alias the model invents maps to
nothing instead of to a wrong memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from neusym.record import MemoryRecord

__all__ = [
    "PROMPT_VERSION",
    "QUALITY_SYSTEM",
    "REFLECT_SYSTEM",
    "REWRITE_SYSTEM",
    "ConflictNote",
    "QualityVerdict",
    "ReflectionOutput",
    "RewriteOutput",
    "quality_user_prompt",
    "reflect_user_prompt",
    "render_memory",
    "rewrite_user_prompt",
]

PROMPT_VERSION = "reflect-v1"


class ConflictNote(BaseModel):
    """Two or more memories that cannot all be true now."""

    model_config = ConfigDict(extra="ignore")

    ids: list[str] = Field(default_factory=list)
    description: str = ""


class ReflectionOutput(BaseModel):
    """What the model must return for one reflection (also the structured-output schema)."""

    model_config = ConfigDict(extra="ignore")

    summary: str = Field(min_length=1, description="De-duplicated summary; keep names, dates and numbers.")
    goal_relevance: str = Field(default="", description="What in these memories matters for the goal, if any.")
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    tags: list[str] = Field(default_factory=list)
    conflicts: list[ConflictNote] = Field(default_factory=list)
    cited: list[str] = Field(default_factory=list, description="Aliases of memories the summary relies on.")
    covered: list[str] = Field(default_factory=list,
                               description="Aliases whose whole content the summary preserves.")

    @field_validator("summary")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("summary is blank")
        return v.strip()

    @field_validator("tags")
    @classmethod
    def _clean_tags(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(t.strip().lower() for t in v if isinstance(t, str) and t.strip()))[:12]


class QualityVerdict(BaseModel):
    """Answer to "what did the reflection lose for this question?"."""

    model_config = ConfigDict(extra="ignore")

    lost_key_fact: bool
    missing: list[str] = Field(default_factory=list)


class RewriteOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(min_length=1)


REFLECT_SYSTEM = f"""You consolidate an AI assistant's long-term memories ({PROMPT_VERSION}).
Given numbered memories (alias, date, type, confidence, text) and an optional goal, write ONE reflection:
- summary: merge duplicates, keep every distinct fact; keep names, dates and numbers exactly; when memories
  disagree, say which is newer and keep both sides; never invent facts.
- goal_relevance: what in the memories matters for the goal ("" if there is no goal).
- importance: 0..1, how useful this reflection will be later.
- tags: a few lowercase topic words.
- conflicts: groups of aliases that contradict each other, with a short description.
- cited: aliases the summary relies on; covered: aliases whose whole content the summary preserves.
Reply with one JSON object with exactly these keys: summary, goal_relevance, importance, tags, conflicts
(list of {{"ids": [...], "description": "..."}}), cited, covered. No prose outside the JSON."""

QUALITY_SYSTEM = f"""You audit a memory summary ({PROMPT_VERSION}). Compare the summary with the original memories
and decide whether the summary lost a fact that is needed to answer the question. Reply with JSON only:
{{"lost_key_fact": true|false, "missing": ["facts the summary lost that the question needs"]}}"""

REWRITE_SYSTEM = f"""You rewrite a follow-up question into a self-contained search query ({PROMPT_VERSION}).
Resolve pronouns and vague references ("that", "it", "there") using the recent conversation; keep the user's
intent; do not answer. Reply with JSON only: {{"query": "..."}}"""


def render_memory(alias: str, record: MemoryRecord, text: str | None = None) -> str:
    """One memory line as the model sees it: alias, event date, type, confidence flag, status flag, text."""
    when = (record.valid_from or record.created_at).strftime("%Y-%m-%d")
    flags = []
    if record.confidence < 0.5 or "low_confidence" in record.flags:
        flags.append("low-confidence")
    if record.status.value == "superseded" or record.valid_to is not None:
        flags.append("superseded")
    if "conflict_pending" in record.flags:
        flags.append("conflicting")
    extra = f" [{', '.join(flags)}]" if flags else ""
    body = " ".join((text if text is not None else record.content).split())
    return f"{alias} ({when}, {record.type.value}){extra}: {body}"


def reflect_user_prompt(lines: Sequence[str], goal: str | None, output_tokens: int) -> str:
    goal_text = goal.strip() if goal and goal.strip() else "(none: summarise for general future use)"
    return (
        f"Goal: {goal_text}\n"
        f"Keep the summary under {output_tokens} tokens.\n"
        "Memories:\n" + "\n".join(lines)
    )


def quality_user_prompt(summary: str, lines: Sequence[str], question: str) -> str:
    return f"Question: {question}\n\nSummary:\n{summary}\n\nOriginal memories:\n" + "\n".join(lines)


def rewrite_user_prompt(query: str, recent: Sequence[str]) -> str:
    convo = "\n".join(recent) if recent else "(no recent conversation)"
    return f"Recent conversation:\n{convo}\n\nFollow-up: {query}"
