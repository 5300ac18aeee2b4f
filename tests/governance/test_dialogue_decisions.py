"""Decisions that must hold on ordinary dialogue (issue #29 item 3): a landmark never replaces where someone lives;
a restatement or a hypothetical never supersedes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from neusym import MemoryRecord, NeuSymMemory
from neusym.embeddings import MiniLMEmbedder
from neusym.extraction import RuleExtractor
from neusym.governance.updates import UpdateDetector

T0 = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize("landmark", [
    "I live near the castle of São Jorge.",
    "We live a few minutes from the beach.",
    "I live close to the old train station, which is handy.",
])
def test_a_landmark_never_replaces_the_city(mem: NeuSymMemory, landmark: str) -> None:
    home = mem.add("I live in Lisbon.", user_id="ana", valid_from=T0)
    later = mem.add(landmark, user_id="ana", valid_from=T0 + timedelta(days=20))
    assert all(not d.supersedes for d in later.decisions), [d.reason for d in later.decisions]
    rec = mem.get(home.decisions[0].record.id, user_id="ana")
    assert rec is not None and rec.status.value == "active"


def test_near_a_city_is_still_where_one_lives(mem: NeuSymMemory) -> None:
    """"Near Boston" names the area one lives in: after "I live in Lisbon" it is a move."""
    home = mem.add("I live in Lisbon.", user_id="ben", valid_from=T0)
    later = mem.add("I live near Boston now.", user_id="ben", valid_from=T0 + timedelta(days=20))
    assert home.decisions[0].record.id in later.decisions[0].supersedes


def test_extraction_reads_near_as_a_landmark() -> None:
    rules = RuleExtractor()
    [ext] = rules.extract("I live near the castle of São Jorge.")
    assert [(t.predicate, t.object) for t in ext.triples] == [("lives_near", "castle of São Jorge")]
    [ext] = rules.extract("I live in Lisbon.")
    assert [(t.predicate, t.object) for t in ext.triples] == [("lives_in", "Lisbon")]


def _rec(text: str, day: int) -> MemoryRecord:
    when = T0 + timedelta(days=day)
    return MemoryRecord(content=text, created_at=when, valid_from=when)


@pytest.mark.parametrize("later", [
    "Still three mornings a week at the lido, whatever the weather.",
    "Band practice is on Thursdays as usual.",
    "Ich schwimme immer noch dreimal pro Woche im Freibad.",
    "If I lived closer to the sea I would swim every single day.",
])
def test_restatements_and_hypotheticals_never_reach_the_update_model(later: str) -> None:
    """The pair model reads meaning; a restatement or a hypothetical states no new value, whatever it reads."""
    assert UpdateDetector.pair_gate(_rec(later, 30), _rec("I swim at the lido three mornings a week.", 0)) is None


def test_a_stated_change_still_reaches_it() -> None:
    old = _rec("I swim at the lido three mornings a week.", 0)
    assert UpdateDetector.pair_gate(_rec("I stopped swimming, I run three mornings a week now.", 30), old) is not None


@pytest.mark.minilm
def test_a_restated_routine_is_not_superseded(make_memory: Callable[..., NeuSymMemory],
                                              minilm_model: MiniLMEmbedder) -> None:
    mem = make_memory(embedder=minilm_model)
    first = mem.add("We have pancakes every Sunday morning, the kids love it.", user_id="pete", valid_from=T0)
    again = mem.add("Sunday pancakes still happen every week.", user_id="pete", valid_from=T0 + timedelta(days=40))
    assert all(not d.supersedes for d in again.decisions), [d.reason for d in again.decisions]
    assert {mem.get(d.record.id, user_id="pete").status.value for d in first.decisions} == {"active"}  # type: ignore[union-attr]
