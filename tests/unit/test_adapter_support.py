"""The framework-free rules both adapter packages share (neusym.adapter_support): scope binding, search arguments,
hit metadata, context cutting. The adapters' own tests cover them through LangChain / LlamaIndex objects."""

from __future__ import annotations

import subprocess
import sys
from types import MappingProxyType

import pytest

from neusym import InvalidInputError, NeuSymMemory, Scope, ScopeError
from neusym.adapter_support import (
    SEARCH_KEYS,
    bound_ids,
    check_memory,
    check_search_kwargs,
    make_scope,
    read_scope,
    resolve_scope,
    result_metadata,
    truncate_context,
)


def test_module_imports_no_framework() -> None:
    code = ("import sys, neusym.adapter_support; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('langchain', 'langchain_core', 'langgraph', 'llama_index')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_check_memory_refuses_other_objects(memory: NeuSymMemory) -> None:
    assert check_memory(memory) is memory
    with pytest.raises(InvalidInputError, match="neusym.NeuSymMemory"):
        check_memory(object())


def test_bound_ids_merge_scope_and_explicit_ids() -> None:
    assert bound_ids(None) == {}
    assert bound_ids(Scope(user_id="ana", session_id="s1"), session_id="s2") == {"user_id": "ana", "session_id": "s2"}
    assert bound_ids(MappingProxyType({"agent_id": "bot"}), user_id="ana") == {"agent_id": "bot", "user_id": "ana"}


def test_resolve_scope_fills_open_ids_and_refuses_contradictions(memory: NeuSymMemory) -> None:
    bound = {"user_id": "ana"}
    assert resolve_scope(memory, bound) == Scope(user_id="ana")
    # per-call ids fill what the adapter leaves open; the first source naming an id wins
    got = resolve_scope(memory, bound, {"session_id": "s1"}, {"session_id": "s2", "agent_id": "bot"})
    assert got == Scope(user_id="ana", agent_id="bot", session_id="s1")
    assert resolve_scope(memory, bound, {"user_id": "ana"}) == Scope(user_id="ana")  # agreeing is fine
    with pytest.raises(ScopeError, match="bound to user_id='ana'"):
        resolve_scope(memory, bound, None, {"user_id": "bob"})
    assert resolve_scope(memory, {}) == memory.default_scope
    with pytest.raises(ScopeError):
        resolve_scope(memory, {}, {"user_id": ""})


def test_make_scope_needs_an_id() -> None:
    assert make_scope("ana", None, "s1") == Scope(user_id="ana", session_id="s1")
    with pytest.raises(ScopeError, match="at least one"):
        make_scope(None)


def test_read_scope_widens_to_the_tenant_or_agent() -> None:
    scope = Scope(user_id="ana", agent_id="bot", session_id="s1")
    assert read_scope(scope, "session") == scope
    assert read_scope(scope, "agent") == Scope(user_id="ana", agent_id="bot")
    assert read_scope(scope, "user") == Scope(user_id="ana")
    session_only = Scope(session_id="s1")  # nothing to widen to: never read an empty (cross-tenant) scope
    assert read_scope(session_only, "user") == session_only and read_scope(session_only, "agent") == session_only
    with pytest.raises(InvalidInputError, match="read_scope must be"):
        read_scope(scope, "tenant")  # type: ignore[arg-type]


def test_check_search_kwargs() -> None:
    assert check_search_kwargs(None) == {}
    assert check_search_kwargs({"types": ["fact"], "rewrite_query": True}) == {"types": ["fact"],
                                                                                "rewrite_query": True}
    for key in ("user_id", "scope", "all_tenants"):
        with pytest.raises(ScopeError, match="cannot set"):
            check_search_kwargs({key: "x"})
    with pytest.raises(InvalidInputError, match="unknown search arguments"):
        check_search_kwargs({"typo": 1})
    narrower = SEARCH_KEYS - {"rewrite_query"}
    with pytest.raises(InvalidInputError, match=r"unknown search_kwargs \['rewrite_query'\]"):
        check_search_kwargs({"rewrite_query": True}, allowed=narrower, name="search_kwargs")


def test_result_metadata_describes_the_memory(memory: NeuSymMemory) -> None:
    memory.add("Ana is allergic to peanuts", user_id="ana", session_id="s1", infer=False)
    hit = memory.search("peanuts", user_id="ana", k=1)[0]
    md = result_metadata(hit)
    assert md["memory_id"] == hit.id and md["type"] == hit.memory.type.value
    assert (md["user_id"], md["agent_id"], md["session_id"]) == ("ana", None, "s1")
    assert md["created_at"] == hit.memory.created_at.isoformat() and md["valid_to"] is None
    assert md["score_explanation"] == hit.explanation.summary()
    assert isinstance(md["tags"], list) and isinstance(md["entities"], list)


def test_truncate_context_drops_lowest_ranked_lines_and_empty_headers() -> None:
    ctx = "## Reflections\n- a b\n## Relevant memories\n- c d\n- e f"
    words = str.split
    assert truncate_context(ctx, 0, words) == ctx
    assert truncate_context(ctx, 1, words) == "## Reflections\n- a b\n## Relevant memories\n- c d"
    assert truncate_context(ctx, 4, words) == "## Reflections\n- a b"  # the emptied section's header goes too
    assert truncate_context(ctx, 100, words) is None
