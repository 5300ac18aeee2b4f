"""NeuSymRetriever on a real memory: node conversion, scope isolation, filters, query engines."""

from __future__ import annotations

from datetime import datetime

import pytest
from llama_index.core.llms.mock import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, QueryBundle
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index_neusym import NeuSymRetriever
from neusym import InvalidInputError, NeuSymMemory
from neusym.errors import ScopeError


@pytest.fixture
def seeded(mem: NeuSymMemory) -> NeuSymMemory:
    mem.add("Alice's secret project is called Bluebird.", user_id="alice", session_id="a1", tags=["work"])
    mem.add("Alice prefers green tea in the morning.", user_id="alice", session_id="a2", type="preference")
    mem.add("Bob's secret project is called Redfox.", user_id="bob", session_id="b1", tags=["work"])
    return mem


def test_nodes_carry_id_type_timestamps_and_explanation(seeded: NeuSymMemory) -> None:
    nodes = NeuSymRetriever(seeded, user_id="alice", similarity_top_k=2).retrieve("secret project Bluebird")
    assert nodes and "Bluebird" in nodes[0].node.get_content()
    top = nodes[0]
    md = top.node.metadata
    rec = seeded.get(md["memory_id"], user_id="alice")
    assert top.node.node_id == rec.id == md["memory_id"]
    assert md["type"] == rec.type.value
    assert datetime.fromisoformat(md["created_at"]) == rec.created_at
    assert md["user_id"] == "alice" and md["session_id"] == "a1"
    assert md["score_explanation"].startswith("sim=")
    assert md["score_components"]["weights"] and "similarity" in md["score_components"]
    assert top.score is not None and top.score > 0
    # the LLM sees the text plus type and date, not ids and score internals
    llm_text = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "Bluebird" in llm_text and "memory_id" not in llm_text and "score_components" not in llm_text


def test_tenants_never_see_each_other(seeded: NeuSymMemory) -> None:
    for user, own, other in (("alice", "Bluebird", "Redfox"), ("bob", "Redfox", "Bluebird")):
        nodes = NeuSymRetriever(seeded, user_id=user, similarity_top_k=10).retrieve(f"secret project {other}")
        assert all(n.node.metadata["user_id"] == user for n in nodes)
        assert not any(other in n.node.get_content() for n in nodes)
        assert any(own in n.node.get_content() for n in nodes)


def test_session_and_agent_narrow_the_scope(seeded: NeuSymMemory) -> None:
    seeded.add("Alice's agent noted the Bluebird deadline is Friday.", user_id="alice", agent_id="planner")
    nodes = NeuSymRetriever(seeded, user_id="alice", session_id="a2").retrieve("Bluebird green tea")
    assert nodes and {n.node.metadata["session_id"] for n in nodes} == {"a2"}
    nodes = NeuSymRetriever(seeded, user_id="alice", agent_id="planner").retrieve("Bluebird")
    assert nodes and {n.node.metadata["agent_id"] for n in nodes} == {"planner"}


def test_default_scope_is_the_memorys(make_memory) -> None:  # type: ignore[no-untyped-def]
    mem = make_memory(default_user_id="carol")
    mem.add("Carol collects vintage maps.")
    mem.add("Dan collects vintage maps too.", user_id="dan")
    retriever = NeuSymRetriever(mem)
    assert retriever.scope.user_id == "carol"
    assert {n.node.metadata["user_id"] for n in retriever.retrieve("vintage maps")} == {"carol"}


def test_metadata_filters_and_search_kwargs(seeded: NeuSymMemory) -> None:
    prefs = NeuSymRetriever(seeded, user_id="alice", filters={"type": "preference"}).retrieve("Alice")
    assert prefs and {n.node.metadata["type"] for n in prefs} == {"preference"}
    tagged = NeuSymRetriever(seeded, user_id="alice", filters=MetadataFilters(filters=[
        MetadataFilter(key="tags", value=["work", "misc"], operator=FilterOperator.IN)])).retrieve("Alice")
    assert tagged and all("work" in n.node.metadata["tags"] for n in tagged)
    future = NeuSymRetriever(seeded, user_id="alice", filters=MetadataFilters(filters=[
        MetadataFilter(key="created_at", value="2999-01-01T00:00:00+00:00", operator=FilterOperator.GTE)]))
    assert future.retrieve("Alice") == []
    kw = NeuSymRetriever(seeded, user_id="alice", search_kwargs={"types": ["preference"]}).retrieve("Alice")
    assert {n.node.metadata["type"] for n in kw} == {"preference"}


@pytest.mark.parametrize("filters", [
    MetadataFilters(filters=[MetadataFilter(key="colour", value="red")]),
    MetadataFilters(filters=[MetadataFilter(key="type", value="fact", operator=FilterOperator.NE)]),
    MetadataFilters(filters=[MetadataFilter(key="type", value="fact"), MetadataFilter(key="tags", value="x")],
                    condition=FilterCondition.OR),
    MetadataFilters(filters=[MetadataFilter(key="type", value="fact"), MetadataFilter(key="type", value="plan")]),
])
def test_unsupported_filters_are_refused(mem: NeuSymMemory, filters: MetadataFilters) -> None:
    with pytest.raises(InvalidInputError):
        NeuSymRetriever(mem, user_id="alice", filters=filters)


@pytest.mark.parametrize("kwargs", [{"user_id": "bob"}, {"all_tenants": True}, {"scope": {"user_id": "bob"}}])
def test_filters_cannot_widen_the_scope(mem: NeuSymMemory, kwargs: dict) -> None:
    with pytest.raises(ScopeError):
        NeuSymRetriever(mem, user_id="alice", search_kwargs=kwargs)


def test_bad_arguments(mem: NeuSymMemory) -> None:
    with pytest.raises(InvalidInputError):
        NeuSymRetriever(mem, user_id="alice", search_kwargs={"kk": 1})
    with pytest.raises(InvalidInputError):
        NeuSymRetriever(mem, user_id="alice", similarity_top_k=-1)
    with pytest.raises(InvalidInputError):
        NeuSymRetriever("not a memory", user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        NeuSymRetriever(mem, user_id="")


def test_edge_cases(seeded: NeuSymMemory) -> None:
    assert NeuSymRetriever(seeded, user_id="alice", similarity_top_k=0).retrieve("Bluebird") == []
    assert NeuSymRetriever(seeded, user_id="alice").retrieve("   ") == []
    assert NeuSymRetriever(seeded, user_id="nobody").retrieve("Bluebird") == []
    many = NeuSymRetriever(seeded, user_id="alice", similarity_top_k=50).retrieve("Alice")
    assert 0 < len(many) <= 2


async def test_async_retrieve_matches_sync(seeded: NeuSymMemory) -> None:
    retriever = NeuSymRetriever(seeded, user_id="alice", similarity_top_k=3)
    sync = [n.node.node_id for n in retriever.retrieve("secret project")]
    assert [n.node.node_id for n in await retriever.aretrieve(QueryBundle("secret project"))] == sync


async def test_in_a_retriever_query_engine(seeded: NeuSymMemory) -> None:
    engine = RetrieverQueryEngine.from_args(NeuSymRetriever(seeded, user_id="alice"), llm=MockLLM())
    for response in (engine.query("What is the secret project called?"),
                     await engine.aquery("What is the secret project called?")):
        assert any("Bluebird" in n.node.get_content() for n in response.source_nodes)
        assert "Bluebird" in str(response) and "Redfox" not in str(response)  # MockLLM echoes its prompt


def test_from_defaults_opens_or_wraps(mem: NeuSymMemory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert NeuSymRetriever.from_defaults(mem, user_id="alice").memory is mem
    with pytest.raises(InvalidInputError):
        NeuSymRetriever.from_defaults(mem, data_dir=tmp_path, user_id="alice")
    with pytest.raises(InvalidInputError):
        NeuSymRetriever.from_defaults(mem, user_id="alice", memory_kwargs={"retrieval": "dense_only"})
