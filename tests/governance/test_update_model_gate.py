"""The update pair model runs by default only on the vectors it was fitted on (MiniLM): another embedder's cosine
scale puts its inputs where it was never fitted. Real stores; the MiniLM case is marked ``minilm``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from neusym import NeuSymMemory
from neusym.embeddings import MiniLMEmbedder
from neusym.governance.policy import GovernancePolicy


def test_another_embedder_leaves_updates_to_the_triples(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()  # the hashing embedder: not what the pair model was fitted on
    assert mem.governor.updates.embed is None
    old = mem.add("Ana lives in Porto.", user_id="g")[0]
    new = mem.add("Ana lives in Lisbon.", user_id="g")
    assert old.id in new.decisions[0].supersedes  # the functional lives_in rule still updates
    # numbered notes that say the same thing stay two current memories, whatever the embedder
    notes = [r.id for t in ("Shelf note 3: the drill is in the garage.", "Shelf note 9: the drill is in the garage.")
             for r in mem.add(t, user_id="g", infer=False)]
    assert {r.status.value for r in mem.get_many(notes, user_id="g")} == {"active"}


def test_the_policy_can_force_it_on_or_off(make_memory: Callable[..., NeuSymMemory]) -> None:
    assert make_memory(governance=GovernancePolicy(update_model="on")).governor.updates.embed is not None
    assert make_memory(governance=GovernancePolicy(update_model="off")).governor.updates.embed is None


@pytest.mark.minilm
def test_minilm_runs_it_by_default(make_memory: Callable[..., NeuSymMemory], minilm_model: MiniLMEmbedder) -> None:
    assert make_memory(embedder=minilm_model).governor.updates.embed is not None
