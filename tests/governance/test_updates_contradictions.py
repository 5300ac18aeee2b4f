"""Updates found by slot similarity, contradictions by meaning, rollback and the habitual past (issues 17, 18).

These need the real MiniLM model: what they check is that *meaning* (not a shared word or triple) links two
memories, which a hashing embedder cannot show. Sentences are not taken from the governance benchmark.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from neusym import NeuSymMemory
from neusym.embeddings import MiniLMEmbedder
from neusym.governance.contradictions import ContradictionFinder, constraint_of
from neusym.governance.updates import change_cue, past_framed

pytestmark = pytest.mark.minilm

JAN = datetime(2024, 1, 10, tzinfo=UTC)
JUN = datetime(2024, 6, 10, tzinfo=UTC)


def _status(mem: NeuSymMemory, mid: str, uid: str) -> str:
    return mem.get(mid, user_id=uid).status.value


def test_update_without_an_extracted_triple_supersedes_a_single_valued_slot(sem: NeuSymMemory) -> None:
    old = sem.add("My dentist is Dr. Okoro.", user_id="u1", valid_from=JAN)[0]
    res = sem.add("I changed dentists, Dr. Lindqvist looks after my teeth now.", user_id="u1", valid_from=JUN)
    assert res.decisions[0].supersedes == [old.id]
    assert "candidate update" in res.decisions[0].reason
    assert _status(sem, old.id, "u1") == "superseded"
    audit = [h for h in sem.history(old.id, user_id="u1") if h["action"] == "supersede"]
    assert audit and audit[-1]["details"].get("why") and "similarity" in audit[-1]["details"]
    # rollback restores exactly one current value: the old one, and the newer becomes history (audited)
    sem.rollback(old.id, user_id="u1")
    assert _status(sem, old.id, "u1") == "active"
    assert _status(sem, res[0].id, "u1") == "superseded"
    assert any(h["action"] == "rollback" for h in sem.history(old.id, user_id="u1"))


def test_unrelated_memories_of_one_person_are_not_updates(sem: NeuSymMemory) -> None:
    a = sem.add("My dentist is Dr. Okoro.", user_id="u2", valid_from=JAN)[0]
    b = sem.add("I adopted a tabby cat called Miso.", user_id="u2", valid_from=JAN)[0]
    res = sem.add("I now bake sourdough every weekend.", user_id="u2", valid_from=JUN)
    assert not res.decisions[0].supersedes and not res.decisions[0].conflicts_with
    assert _status(sem, a.id, "u2") == "active" and _status(sem, b.id, "u2") == "active"


def test_another_speaker_does_not_update_my_value(sem: NeuSymMemory) -> None:
    mine = sem.add("My favourite band is Blur.", user_id="u3", speaker="Ann", valid_from=JAN)[0]
    res = sem.add("My favourite band is Oasis now.", user_id="u3", speaker="Bob", valid_from=JUN)
    assert not res.decisions[0].supersedes
    assert _status(sem, mine.id, "u3") == "active"


def test_used_to_does_not_supersede_the_present(sem: NeuSymMemory) -> None:
    """Issue 18: "X used to play drums when he was younger" superseded "X plays drums"."""
    now = sem.add("Marco plays the drums in a jazz band.", user_id="u4", valid_from=JAN)[0]
    past = sem.add("Marco used to play the trumpet when he was younger.", user_id="u4", valid_from=JUN)
    assert not past.decisions[0].supersedes and past.decisions[0].superseded_by is None
    assert _status(sem, now.id, "u4") == "active" and _status(sem, past[0].id, "u4") == "active"
    home = sem.add("I live in Ghent.", user_id="u4", valid_from=JAN)[0]
    res = sem.add("Back then I lived in Bruges, as a kid.", user_id="u4", valid_from=JUN)
    assert not res.decisions[0].supersedes
    assert _status(sem, home.id, "u4") == "active"


def test_present_statement_does_not_supersede_a_habitual_past_one(sem: NeuSymMemory) -> None:
    past = sem.add("I used to work at a bakery in Leeds.", user_id="u5", valid_from=JAN)[0]
    res = sem.add("I work at a law firm.", user_id="u5", valid_from=JUN)
    assert past.id not in res.decisions[0].supersedes
    assert _status(sem, past.id, "u5") == "active"


def test_constraint_broken_by_a_paraphrased_event_is_flagged_not_superseded(sem: NeuSymMemory) -> None:
    c = sem.add("I'm vegan.", user_id="u6", valid_from=JAN)[0]
    res = sem.add("Had a big steak with blue cheese for dinner.", user_id="u6", valid_from=JUN)
    d = res.decisions[0]
    assert d.contradicts == [c.id] and "contradiction" in res[0].flags
    assert "constraint" in d.reason
    assert "contradiction" in sem.get(c.id, user_id="u6").flags
    assert _status(sem, c.id, "u6") == "active"  # a contradiction is not an update


def test_a_constraint_written_by_another_engine_on_the_graph_counts(
        make_memory: Callable[..., NeuSymMemory], minilm_model: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    # two engines on one graph stand for two processes: the constraint lives in the graph, not in a dict
    monkeypatch.setattr(ContradictionFinder, "refresh_seconds", 0.0)
    a, b = make_memory(embedder=minilm_model), make_memory(embedder=minilm_model)
    b.add("Went for a long bike ride along the river.", user_id="u9", valid_from=JAN)  # b has read u9 already
    c = a.add("I'm vegan.", user_id="u9", valid_from=JAN)[0]
    res = b.add("Had a big steak with blue cheese for dinner.", user_id="u9", valid_from=JUN)
    assert res.decisions[0].contradicts == [c.id]
    # ... and one forgotten through the other engine no longer does
    a.forget(c.id, user_id="u9", hard=True, confirm=True)
    res = b.add("Grilled lamb chops tonight, delicious.", user_id="u9", valid_from=JUN)
    assert not res.decisions[0].contradicts


def test_compatible_events_are_not_flagged(sem: NeuSymMemory) -> None:
    sem.add("I don't drink alcohol.", user_id="u7", valid_from=JAN)
    for text in ("Ordered an alcohol-free beer at the pub quiz.", "Went for a long bike ride along the river."):
        res = sem.add(text, user_id="u7", valid_from=JUN)
        assert not res.decisions[0].contradicts, text


def test_lexicon_shapes() -> None:
    assert past_framed("She used to live in Oslo") and past_framed("As a kid I played chess")
    assert not past_framed("She lives in Oslo now")
    assert change_cue("I'm not at Acme anymore") and not change_cue("I like long walks")
    c = constraint_of("My brother is allergic to peanuts.")
    assert c is not None and c.kind == "allergy" and "peanuts" in c.targets and c.subject == "brother"
    assert constraint_of("I had a lovely walk.") is None


def test_statements_of_one_shape_about_different_things_are_not_updates(make_memory: Callable[..., NeuSymMemory],
                                                                       ) -> None:
    """A change or ending word both memories carry ("left") marks their shape, not a change between them: 250
    shipment events once superseded 181 of each other (any embedder, here the non-semantic hashing one)."""
    mem = make_memory()
    facts = [f"Shipment {i} of the order left the warehouse in Porto on day {i}." for i in range(40)]
    res = mem.add_batch(facts, user_id="ship", infer=False)
    assert not [d for d in res.decisions if d.supersedes]
    assert {r.status.value for r in mem.query(user_id="ship", limit=100)} == {"active"}
