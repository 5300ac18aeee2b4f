"""Loading and validating the case files.

The JSONL files are the source of truth: one case per line with a stable ``id``, its ``split``, ``lang``, ``origin``
and everything its category's scenario needs. Validation is strict so that a typo in a case fails loudly instead of
silently scoring as a miss.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"
SPLITS = ("train", "test")
CATEGORIES = ("update", "contradiction", "ttl", "forget", "poisoning", "hard_forget")

_REQUIRED: dict[str, tuple[str, ...]] = {
    "update": ("before", "update", "probe", "new", "old"),
    "contradiction": ("label", "constraint", "event"),
    "ttl": ("label", "step", "probe", "expect"),
    "forget": ("memories", "request", "forget", "keep"),
    "poisoning": ("label", "step", "kind"),
    "hard_forget": ("ops", "forget", "secrets"),
}


class CaseError(ValueError):
    """A case file line that does not describe a runnable case."""


def _check_step(case_id: str, step: Any) -> None:
    if not isinstance(step, dict) or not (("text" in step) ^ ("messages" in step)):
        raise CaseError(f"{case_id}: a step needs exactly one of 'text' or 'messages': {step!r}")
    if "messages" in step:
        for m in step["messages"]:
            if set(m) != {"role", "content"}:
                raise CaseError(f"{case_id}: a message needs 'role' and 'content': {m!r}")


def validate(case: dict[str, Any]) -> dict[str, Any]:
    cid = case.get("id")
    if not isinstance(cid, str) or not cid:
        raise CaseError(f"case without id: {case!r}"[:200])
    for key in ("split", "category", "lang", "origin"):
        if not case.get(key):
            raise CaseError(f"{cid}: missing {key!r}")
    if case["split"] not in SPLITS:
        raise CaseError(f"{cid}: unknown split {case['split']!r}")
    cat = case["category"]
    if cat not in _REQUIRED:
        raise CaseError(f"{cid}: unknown category {cat!r}")
    for key in _REQUIRED[cat]:
        if key not in case:
            raise CaseError(f"{cid}: category {cat} needs {key!r}")
    for key in ("before", "update", "constraint", "event"):
        for step in case.get(key, []):
            _check_step(cid, step)
    if "step" in case:
        _check_step(cid, case["step"])
    if cat == "forget":
        keys = {m["key"] for m in case["memories"]}
        for k in (*case["forget"], *case["keep"], *case.get("maybe", [])):
            if k not in keys:
                raise CaseError(f"{cid}: unknown memory key {k!r}")
    return case


def load(splits: Iterable[str], data_dir: Path = DATA_DIR, categories: Iterable[str] | None = None,
         limit_per_category: int | None = None) -> list[dict[str, Any]]:
    """Cases of the given splits, in file order (deterministic), optionally only some categories and only the first N
    of each (category, label) stratum, so a small smoke run still has attacks and benign look-alikes, TTLs and
    controls."""
    wanted = set(categories) if categories else set(CATEGORIES)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    per_cat: dict[str, int] = {}
    for split in splits:
        path = data_dir / f"{split}.jsonl"
        with path.open(encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    case = validate(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise CaseError(f"{path}:{n}: {exc}") from exc
                if case["split"] != split:
                    raise CaseError(f"{path}:{n}: case {case['id']} says split {case['split']!r}")
                if case["id"] in seen:
                    raise CaseError(f"duplicate case id {case['id']}")
                seen.add(case["id"])
                if case["category"] not in wanted:
                    continue
                stratum = f"{case['category']}/{case.get('label', '')}"
                if limit_per_category is not None and per_cat.get(stratum, 0) >= limit_per_category:
                    continue
                per_cat[stratum] = per_cat.get(stratum, 0) + 1
                out.append(case)
    return out
