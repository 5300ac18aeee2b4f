"""Scope resolution and the engine's other pure parts (argument checks, supersession records, review change sets):
no database, no model."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from neusym import InvalidInputError, MemoryRecord, Scope, ScopeError
from neusym.engine import candidates as cand
from neusym.engine import resolve_scope
from neusym.governance import supersession
from neusym.governance.decisions import Action, Decision
from neusym.ingest import Turn
from neusym.record import MemoryStatus
from neusym.services.review import ChangeSet


# ---------------------------------------------------------------------------------------------------- the rule
@pytest.mark.parametrize("ids", [{}, {"agent_id": "a"}, {"session_id": "s"}, {"agent_id": "a", "session_id": "s"}])
def test_a_scope_without_a_user_is_refused(ids: dict[str, str]) -> None:
    with pytest.raises(ScopeError, match="needs a user_id"):
        resolve_scope(None, **ids)
    with pytest.raises(ScopeError, match="all_tenants"):
        resolve_scope(None, admin=True, **ids)


def test_explicit_ids_win_and_the_default_user_fills_only_the_tenant() -> None:
    assert resolve_scope({"user_id": "u", "session_id": "s"}, session_id="t") == Scope(user_id="u", session_id="t")
    assert resolve_scope(Scope(agent_id="a"), default_user_id="solo") == Scope(user_id="solo", agent_id="a")
    assert resolve_scope(None, user_id="u", default_user_id="solo") == Scope(user_id="u")
    resolved = resolve_scope(None, user_id="u", agent_id="a")
    assert resolve_scope(resolved) == resolved  # idempotent: a service may resolve again


def test_all_tenants_keeps_unset_fields_as_wildcards() -> None:
    assert resolve_scope(None, all_tenants=True) == Scope()
    assert resolve_scope(None, all_tenants=True, default_user_id="solo") == Scope()  # never narrowed silently
    assert resolve_scope(None, all_tenants=True, session_id="s") == Scope(session_id="s")
    with pytest.raises(ScopeError):
        resolve_scope(None, all_tenants="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", "x" * 513])
def test_malformed_ids_are_scope_errors(bad: str) -> None:
    with pytest.raises(ScopeError):
        resolve_scope(None, user_id=bad)
    with pytest.raises(ScopeError):
        resolve_scope(None, user_id="u", session_id=bad)


def test_unknown_scope_keys_are_refused() -> None:
    with pytest.raises(ScopeError, match="unknown scope keys"):
        resolve_scope({"user_id": "u", "tenant": "x"})


# ---------------------------------------------------------------------------------------------------- arguments
def test_k_offset_and_numbers() -> None:
    assert cand.check_k(0) == 0 and cand.check_k(cand.MAX_K) == cand.MAX_K
    for bad in (-1, cand.MAX_K + 1, "5", None, True, 2.0):
        with pytest.raises(InvalidInputError):
            cand.check_k(bad)
    assert cand.check_offset(5000) == 5000
    for bad in ("5", None, -1, cand.MAX_OFFSET + 1):
        with pytest.raises(InvalidInputError, match="offset"):
            cand.check_offset(bad)
    assert cand.finite("0.5", "min_score") == 0.5
    for bad in (math.nan, math.inf, "x", None, True):
        with pytest.raises(InvalidInputError, match="min_score"):
            cand.finite(bad, "min_score")
    assert cand.ttl_seconds(timedelta(minutes=1)) == 60.0 and cand.ttl_seconds(None) is None
    for bad in (0, -1, math.nan, math.inf, "10", True):
        with pytest.raises(InvalidInputError, match="ttl"):
            cand.ttl_seconds(bad)
    with pytest.raises(InvalidInputError):
        cand.check_ids(["a", ""])


def test_caller_vectors_are_checked_before_anything_is_written() -> None:
    good = np.eye(2, 4, dtype=np.float32)
    assert cand.check_vectors(good, 2, 4).dtype == np.float32
    for bad, what in ((np.zeros((2, 4)), "all-zero"), (np.full((2, 4), np.nan), "NaN"),
                      (np.full((2, 4), 1e39), "scale the vectors down"), (good[:1], "shape"),
                      ([["a"] * 4] * 2, "numeric")):
        with pytest.raises(InvalidInputError, match=what):
            cand.check_vectors(bad, 2, 4)


def test_roles_map_to_origins() -> None:
    turn = Turn(role="assistant", content="x")
    assert cand.origin_of(turn, "user", message=True) == "agent"
    assert cand.origin_of(Turn(role="tool", content="x"), "user", message=True) == "tool"
    assert cand.origin_of(Turn(role="user", content="x"), "import", message=True) == "import"
    assert cand.origin_of(Turn(role="system", content="x"), "user", message=True) is None  # a prompt: refused
    assert cand.origin_of(Turn(role="system", content="x"), "system", message=False) == "system"  # an app fact


def test_a_candidate_is_valid_from_its_event_or_its_ingestion() -> None:
    from neusym.extraction import Extraction

    now = datetime(2025, 5, 1, tzinfo=UTC)
    ext = Extraction(content="I like tea", type="preference")
    rec = cand.record_from(ext, Scope(user_id="u"), now=now, mtype=None, metadata=None, importance=None,
                           confidence=None, origin="user", ttl=None, valid_from=None, tags=None,
                           turn=Turn(role="user", content="I like tea"), ref=None)
    assert rec.valid_from == now == rec.created_at
    event = datetime(2021, 1, 1, tzinfo=UTC)
    dated = cand.record_from(ext.model_copy(update={"valid_from": event}), Scope(user_id="u"), now=now, mtype=None,
                             metadata=None, importance=None, confidence=None, origin="user", ttl=None,
                             valid_from=None, tags=None, turn=Turn(role="user", content="x"), ref=None)
    assert dated.valid_from == event and dated.created_at == now


# ---------------------------------------------------------------------------------------------------- supersession
def _rec(content: str, status: MemoryStatus = MemoryStatus.ACTIVE, **kw: object) -> MemoryRecord:
    return MemoryRecord(content=content, scope=Scope(user_id="u"), status=status, **kw)  # type: ignore[arg-type]


def test_a_planned_supersession_gives_props_edge_audit_and_the_rollback_record() -> None:
    new = _rec("I moved to Lisbon")
    d = Decision(action=Action.STORE, reason="ok", record=new, supersedes=["old"], details={"supersede": [
        {"id": "old", "valid_to": 100.0, "predicate": "lives_in", "kind": "update", "strategy": "recency",
         "previous": {"status": "active", "flags": ["conflict_pending", "x"], "valid_to": None}}]})
    [s] = supersession.planned([d], now=50.0)
    assert s.props(50.0) == {"status": "superseded", "valid_to": 100.0, "updated_at": 50.0, "flags": ["x"]}
    assert s.create_set(50.0)["edge"] == {"predicate": "lives_in", "kind": "update", "strategy": "recency",
                                          "at": 50.0}
    audit = s.audit(50.0)
    assert audit["memory_id"] == "old" and audit["action"] == "supersede" and audit["details"]["by"] == new.id
    assert audit["details"]["previous"]["flags"] == ["conflict_pending", "x"]  # what a rollback restores
    rejected = d.model_copy(update={"action": Action.REJECT})
    assert supersession.planned([rejected], now=50.0) == []


def test_undoing_a_supersession_makes_the_newer_value_the_history() -> None:
    old = _rec("I live in Porto", MemoryStatus.SUPERSEDED)
    newer = _rec("I live in Lisbon")
    details = {"by": newer.id, "previous": {"status": "active", "flags": [], "valid_to": None},
               "predicate": "lives_in"}
    plan = supersession.undo(details, old, newer, "user", now=200.0)
    assert plan.restore["status"] == "active" and plan.restore["valid_to"] is None
    assert plan.unlink == (newer.id, old.id) and plan.reopen_relations is None
    assert plan.newer is not None and plan.newer.old == newer.id and plan.newer.by == old.id
    assert plan.newer.props(200.0)["status"] == "superseded" and plan.newer.valid_to == 200.0
    gone = supersession.undo(details, old, None, "user", now=200.0)
    assert gone.newer is None  # nothing else is current: restoring the old value is enough


def test_a_change_set_collects_one_statement() -> None:
    cs = ChangeSet("u", now=10.0)
    s = supersession.superseded_by_review(_rec("b", valid_from=datetime(2025, 1, 1, tzinfo=UTC)), _rec("a"),
                                          "reviewer", 10.0)
    cs.supersede(s)
    cs.unlink_both("CONFLICTS_WITH", "a", "b")
    cs.set("b", status="active")
    cs.set("b", flags=[])
    assert cs.sets[s.old]["status"] == "superseded" and cs.sets["b"] == {"updated_at": 10.0, "status": "active",
                                                                         "flags": []}
    assert cs.links == [(s.by, "SUPERSEDES", s.old, s.edge(10.0))]
    assert cs.unlinks == [("a", "CONFLICTS_WITH", "b"), ("b", "CONFLICTS_WITH", "a")]
    assert cs.close == [(s.old, s.valid_to)] and [a["action"] for a in cs.audits] == ["supersede"]
