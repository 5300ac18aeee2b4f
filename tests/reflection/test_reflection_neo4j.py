"""The reflection graph reads/writes are portable: the same flow on a real Neo4j (harness server or NEO4J_URI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j_server import fixtures as neo4j_fixtures
from reflection_helpers import derived_from, thirty_turns, write_session

from neusym import NeuSymConfig, NeuSymMemory, Scope
from neusym.embeddings import HashingEmbedder

pytestmark = pytest.mark.neo4j

neo4j_server = neo4j_fixtures.neo4j_server
neo4j_executor = neo4j_fixtures.neo4j_executor


@pytest.fixture
def neo_memory(neo4j_executor: object, tmp_path: Path) -> Iterator[NeuSymMemory]:
    mem = NeuSymMemory(config=NeuSymConfig(data_dir=tmp_path, graph_name="refl"), executor=neo4j_executor,
                       embedder=HashingEmbedder(256))
    yield mem
    mem.close()


def test_reflection_flow_on_neo4j(neo_memory: NeuSymMemory) -> None:
    mem = neo_memory
    write_session(mem, "ana", "s1", thirty_turns())
    mem.add("Bob's note about sailing", user_id="bob", infer=False)
    sources = {r.id for r in mem.store.scope_memories(Scope(user_id="ana", session_id="s1"))}
    assert mem.store.unreflected_scopes(before=1e12, min_count=5) == [(Scope(user_id="ana"), len(sources))]
    ref = mem.session_end(user_id="ana", session_id="s1")
    assert ref is not None and derived_from(mem, ref.id or "") == sources
    assert mem.store.scope_memories(Scope(user_id="ana"), unreflected=True) == []
    marta = mem.store.scope_memories(Scope(user_id="ana"), entity_uids=["ana\x1fmarta"])
    assert marta and all("Marta" in r.content for r in marta)
    some = sorted(sources)[:2]
    mem.store.link("CONFLICTS_WITH", [(some[0], some[1])])
    assert mem.store.relations_among([some[0]], {"CONFLICTS_WITH"}, Scope(user_id="ana")) == [
        (some[0], "CONFLICTS_WITH", some[1])]
    assert mem.store.reweight([{"id": some[0], "factor": 0.5, "flag": "reflected"}], Scope(user_id="ana")) == 1
    assert "reflected" in mem.get(some[0], user_id="ana").flags
    ctx = mem.build_context("Porto Farfetch coffee", user_id="ana", budget_tokens=600)
    assert ctx.tokens <= 600 and "## Reflections" in ctx.text
