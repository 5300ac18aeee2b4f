"""The hand-written retrieval dev sets stay valid: every item passes its checker, and the checkers catch what they
promise to catch (a shared content word, a tied turn that names its value, an answer that disagrees with values)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "retrieval"


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DATA / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def test_implicit_cues_pass_their_checker() -> None:
    cues = _module("check_cues")
    items = _rows("implicit_cues.jsonl")
    assert len(items) >= 150
    assert cues.check(items) == []
    assert {it["kind"] for it in items} == set(cues.KINDS)
    assert {it["split"] for it in items} == {"dev", "test"}


def test_cue_checker_catches_a_shared_word_through_inflection() -> None:
    cues = _module("check_cues")
    item = copy.deepcopy(_rows("implicit_cues.jsonl")[0])
    item["cue"][0]["text"] = "I went running by the canal every day."
    item["trigger"] = "Which shoes do runners like for a canal path?"
    errors = cues.check([item])
    assert any("shares content words" in e for e in errors)
    assert cues.shared_words(["We ran there."], "Should I run again?")


def test_state_changes_pass_their_checker() -> None:
    states = _module("check_states")
    cases = _rows("state_changes.jsonl")
    assert len(cases) >= 40
    assert states.check(cases) == []


def test_state_checker_catches_a_tied_turn_naming_its_value_and_a_wrong_answer() -> None:
    states = _module("check_states")
    case = copy.deepcopy(_rows("state_changes.jsonl")[0])
    tied = case["tied"][0]
    turn = next(s for s in case["sessions"] if s["session_id"] == tied["session_id"])["turns"][tied["turn"]]
    turn["text"] += f" (in {tied['value']})"
    next(q for q in case["questions"] if q["kind"] == "current")["answer"] = case["values"][0]
    errors = states.check_case(case)
    assert any("names its value" in e for e in errors)
    assert any("current answer" in e for e in errors)
