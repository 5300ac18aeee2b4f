"""The tenant rule (issue 14, section 1) on the engine: ``user_id`` on every tenant-scoped read and write, no silent
default tenant, ``all_tenants=True`` only where an operator view exists, and history on the caller's full scope.

The repro of the issue first (a session-only scope read and changed another tenant's memories), then every public
entry point with a user-less scope, then a property test over scopes built from every subset of (user, agent,
session) with None / empty / "default" values.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neusym import InvalidInputError, NeuSymConfig, NeuSymMemory, RecordNotFoundError, Scope, ScopeError


@pytest.fixture
def two(memory: NeuSymMemory) -> tuple[NeuSymMemory, str, str]:
    a = memory.add("Alice's bank PIN is 4321", user_id="alice", session_id="s1", infer=False)[0].id
    b = memory.add("Bob lives at 12 Oak Street", user_id="bob", session_id="s1", infer=False)[0].id
    return memory, a, b


def test_the_issue_repro_is_refused(two: tuple[NeuSymMemory, str, str]) -> None:
    mem, _a, b = two
    with pytest.raises(ScopeError, match="needs a user_id"):
        mem.search("PIN street", session_id="s1")
    with pytest.raises(ScopeError):
        mem.query(agent_id="x")
    with pytest.raises(ScopeError):
        mem.update(b, "Bob lives at HACKED", session_id="s1")
    with pytest.raises(ScopeError):
        mem.forget(everything=True, session_id="s1", hard=True, confirm=True)
    assert mem.get(b, user_id="bob").content == "Bob lives at 12 Oak Street"
    assert [r.content for r in mem.search("PIN street", user_id="alice")] == ["Alice's bank PIN is 4321"]


def test_no_silent_default_tenant(memory: NeuSymMemory) -> None:
    """``user_id=None`` never means "default": "default" is an ordinary tenant name, and a call without a user is
    refused (nothing is written)."""
    memory.add("I am the tenant called default", user_id="default", infer=False)
    with pytest.raises(ScopeError):
        memory.add("no tenant at all", infer=False)
    with pytest.raises(ScopeError):
        memory.search("tenant")
    assert memory.stats(all_tenants=True)["memories"] == 1
    assert [r.content for r in memory.search("tenant", user_id="default")] == ["I am the tenant called default"]


def test_a_single_user_app_opts_in_with_default_user_id(make_memory: Callable[..., NeuSymMemory],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    mem = make_memory(default_user_id="solo")
    rec = mem.add("I like green tea", infer=False)[0]
    assert rec.scope == Scope(user_id="solo") and mem.default_user_id == "solo"
    assert mem.search("green tea")[0].id == rec.id
    assert mem.add("a session note", session_id="s1", infer=False)[0].scope == Scope(user_id="solo",
                                                                                     session_id="s1")
    assert mem.search("green tea", user_id="other") == []  # an explicit user still wins
    assert mem.scope_for(agent_id="a") == Scope(user_id="solo", agent_id="a")
    monkeypatch.setenv("NEUSYM_DEFAULT_USER_ID", "from-env")
    assert NeuSymConfig.from_env().default_user_id == "from-env"
    assert NeuSymConfig().default_user_id is None  # the environment is read only by from_env
    with pytest.raises(ScopeError):
        make_memory(default_user_id="")


def test_every_tenant_scoped_call_needs_a_user(two: tuple[NeuSymMemory, str, str]) -> None:
    mem, a, b = two
    calls: dict[str, Callable[[], Any]] = {
        "add": lambda: mem.add("x", session_id="s1"),
        "add_batch": lambda: mem.add_batch(["x"], session_id="s1"),
        "get": lambda: mem.get(b, session_id="s1"),
        "get_many": lambda: mem.get_many([b], session_id="s1"),
        "search": lambda: mem.search("x", agent_id="a"),
        "query": lambda: mem.query(session_id="s1"),
        "update": lambda: mem.update(b, "x", session_id="s1"),
        "delete": lambda: mem.delete([b], session_id="s1"),
        "history": lambda: mem.history(b, session_id="s1"),
        "stats": lambda: mem.stats(session_id="s1"),
        "forget": lambda: mem.forget([b], session_id="s1"),
        "forget_preview": lambda: mem.forget_preview("street", session_id="s1"),
        "rollback": lambda: mem.rollback(b, session_id="s1"),
        "review_queue": lambda: mem.review_queue(session_id="s1"),
        "review_approve": lambda: mem.review_approve(b, session_id="s1"),
        "review_reject": lambda: mem.review_reject(b, session_id="s1"),
        "review_edit": lambda: mem.review_edit(b, "x", session_id="s1"),
        "reflect": lambda: mem.reflect(session_id="s1", extractive=True),
        "session_end": lambda: mem.session_end(session_id="s1", wait=True),
        "build_context": lambda: mem.build_context("street", session_id="s1"),
        "rewrite_query": lambda: mem.rewrite_query("and that?", session_id="s1"),
        "facts_at": lambda: mem.facts_at(0.0, session_id="s1"),
        "fact_history": lambda: mem.fact_history("lives_in", session_id="s1"),
        "audit_log": lambda: mem.audit_log(session_id="s1"),
        "run_janitor": lambda: mem.run_janitor(session_id="s1"),
        "start_janitor": lambda: mem.start_janitor(10, scope={"session_id": "s1"}),
        "export": lambda: mem.export(io.StringIO(), session_id="s1"),
        "restore": lambda: mem.restore(io.StringIO(""), session_id="s1"),
        "import_file": lambda: mem.import_file(io.StringIO('{"content": "x"}\n'), session_id="s1"),
        "atomic": lambda: mem.atomic(session_id="s1").__enter__(),
        "cypher": lambda: mem.cypher("MATCH (m) RETURN count(m) AS n"),
    }
    for name, call in calls.items():
        with pytest.raises(ScopeError):
            call()
            pytest.fail(f"{name} accepted a scope without user_id")
    assert {r.content for r in mem.query(all_tenants=True)} == {"Alice's bank PIN is 4321",
                                                                "Bob lives at 12 Oak Street"}
    assert mem.get(a, user_id="alice").status.value == "active" and mem.get(b, user_id="bob").version == 1


def test_operator_paths_take_all_tenants(two: tuple[NeuSymMemory, str, str]) -> None:
    mem, a, b = two
    assert {r.id for r in mem.search("PIN street", all_tenants=True)} == {a, b}
    assert {r.id for r in mem.query(session_id="s1", all_tenants=True)} == {a, b}
    assert mem.get(b, all_tenants=True).id == b
    assert mem.stats(all_tenants=True)["memories"] == 2
    assert {e["user_id"] for e in mem.audit_log(all_tenants=True)} == {"alice", "bob"}
    assert mem.run_janitor(all_tenants=True).expired == []
    with pytest.raises(ScopeError):
        mem.stats(user_id="bob", all_tenants=True)
    with pytest.raises(ScopeError):
        mem.run_janitor(user_id="bob", all_tenants=True)


def test_history_filters_on_the_full_scope(memory: NeuSymMemory) -> None:
    """``history(id, agent_id=...)`` used to return another tenant's trail (the lookup filtered on user_id only,
    which was None); now the memory must be inside the caller's whole scope."""
    rec = memory.add("Bob's planner note", user_id="bob", agent_id="planner", infer=False)[0]
    memory.update(rec.id, "Bob's planner note, edited", user_id="bob")
    assert [h["action"] for h in memory.history(rec.id, user_id="bob")] == ["admit", "edit"]
    assert len(memory.history(rec.id, user_id="bob", agent_id="planner")) == 2
    assert memory.history(rec.id, user_id="bob", agent_id="zzz") == []
    assert memory.history(rec.id, user_id="alice") == []
    with pytest.raises(ScopeError):
        memory.history(rec.id, agent_id="zzz")
    assert [e["action"] for e in memory.audit_log(user_id="bob", agent_id="planner")] == ["edit", "admit"]
    assert memory.audit_log(user_id="bob", agent_id="zzz") == []
    with pytest.raises(RecordNotFoundError):
        memory.rollback(rec.id, user_id="bob", agent_id="zzz")


# ---------------------------------------------------------------------------------------------------- property
_IDS = st.sampled_from([None, "", "default", "alice", "bob"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=_IDS, agent=_IDS, session=_IDS)
def test_every_scope_subset(two: tuple[NeuSymMemory, str, str], user: str | None, agent: str | None,
                            session: str | None) -> None:
    """Any combination of (user, agent, session), each None, empty, "default" or a name: a user-less or malformed
    scope is refused before anything happens; a named tenant sees and changes only its own memories."""
    mem, a, b = two
    ids = {"user_id": user, "agent_id": agent, "session_id": session}
    malformed = any(v == "" for v in ids.values())
    userless = user in (None, "")
    before = {r.id: (r.content, r.version, r.status) for r in mem.query(all_tenants=True, statuses=[
        "active", "archived", "superseded", "pending", "quarantined"])}
    for op in (lambda: mem.search("PIN street", **ids), lambda: mem.query(**ids),
               lambda: mem.update(b, "HACKED", **ids), lambda: mem.forget([a, b], **ids),
               lambda: mem.history(b, **ids)):
        if malformed or userless:
            with pytest.raises((ScopeError, InvalidInputError)):
                op()
        else:
            try:
                out = op()
            except RecordNotFoundError:
                continue
            mine = {"alice": a, "bob": b}.get(user or "")
            if isinstance(out, list):
                seen = {getattr(getattr(x, "memory", x), "id", None) for x in out if not isinstance(x, dict)}
                assert seen <= {mine}
    after = {r.id: (r.content, r.version, r.status) for r in mem.query(all_tenants=True, statuses=[
        "active", "archived", "superseded", "pending", "quarantined"])}
    for mid, owner in ((a, "alice"), (b, "bob")):
        if user != owner or malformed:
            assert after.get(mid) == before.get(mid), f"{mid} of {owner} changed by a call as {ids}"
    assert set(after) == set(before)  # nothing created, nothing purged
