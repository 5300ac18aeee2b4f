"""The atomic writes of the mutation path, on BOTH backends: supersession inside the create statement (status,
SUPERSEDES, RELATES closed, audit), review decisions and rollback as one ``apply_changes`` statement plus, when edges
go, one statement that only deletes them (never one that deletes and creates: see neusym.symbolic.write_rules), and an
edit carrying its audit entries."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
import pytest

from neusym import NeuSymMemory, Scope
from neusym.governance import GovernancePolicy
from neusym.record import MemoryRecord
from neusym.symbolic.store import SymbolicStore

JAN = datetime(2025, 1, 10, tzinfo=UTC)
JUN = datetime(2025, 6, 10, tzinfo=UTC)
U = Scope(user_id="u")


def _rows(mem: NeuSymMemory, cypher: str, **params: object) -> list[dict[str, object]]:
    return mem.cypher(cypher, dict(params), all_tenants=True)


def test_supersession_is_one_create_statement(memory: NeuSymMemory) -> None:
    porto = memory.add("I live in Porto.", user_id="u", valid_from=JAN)[0]
    lisbon = memory.add("I moved to Lisbon.", user_id="u", valid_from=JUN)[0]
    old = memory.get(porto.id, user_id="u")
    assert old.status.value == "superseded" and old.valid_to == JUN
    assert _rows(memory, "MATCH (a)-[s:SUPERSEDES]->(b) RETURN a.id AS a, b.id AS b") == [
        {"a": lisbon.id, "b": porto.id}]
    closed = _rows(memory, "MATCH (:Memory {id: $id})-[:MENTIONS]->(:Entity)-[r:RELATES]->() "
                   "WHERE r.memory_id = $id RETURN r.valid_to AS t", id=porto.id)
    assert closed and all(r["t"] == JUN.timestamp() for r in closed)
    assert [h["action"] for h in memory.history(porto.id, user_id="u")] == ["admit", "supersede"]
    assert memory.search("Porto", user_id="u", valid_at=datetime(2025, 3, 1, tzinfo=UTC), k=5)[0].id == porto.id
    assert [r.id for r in memory.facts_at(datetime(2025, 3, 1, tzinfo=UTC), predicate="lives_in",
                                          user_id="u")] == [porto.id]


def test_review_approve_and_rollback_write_once_and_delete_once(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory(governance=GovernancePolicy(conflict_strategy="ask"))
    a = mem.add("My email is ana@old.example.", user_id="u")[0]
    b = mem.add("My email is ana@new.example.", user_id="u")[0]
    seen: list[str] = []
    run = mem.executor.run

    def spy(statement: str, params: dict[str, object] | None = None, **kw: object) -> object:
        if "CREATE (" in statement or " SET " in statement or "DELETE" in statement:
            seen.append(statement)
        return run(statement, params, **kw)  # type: ignore[arg-type]

    mem.engine.store.executor.run = spy  # type: ignore[method-assign]
    try:
        mem.review_approve(b.id, user_id="u", reason="the new one")
    finally:
        mem.engine.store.executor.run = run  # type: ignore[method-assign]
    # one write (props, SUPERSEDES, facts closed, audit, the pending removal), then the removal of CONFLICTS_WITH
    assert len(seen) == 2, seen
    assert "DELETE" not in seen[0] and "PendingUnlink" in seen[0]
    assert "CREATE" not in seen[1] and "MERGE" not in seen[1] and "DELETE" in seen[1]
    assert mem.get(b.id, user_id="u").status.value == "active"
    assert mem.get(a.id, user_id="u").status.value == "superseded"
    assert _rows(mem, "MATCH ()-[c:CONFLICTS_WITH]->() RETURN count(c) AS n") == [{"n": 0}]
    assert [h["action"] for h in mem.history(a.id, user_id="u")][-1] == "supersede"
    back = mem.rollback(a.id, user_id="u")
    assert back.status.value in ("active", "pending")
    assert mem.get(b.id, user_id="u").status.value == "superseded"  # exactly one current value
    assert [r["kind"] for r in _rows(mem, "MATCH (x {id: $a})-[s:SUPERSEDES]->(y {id: $b}) RETURN s.kind AS kind",
                                     a=a.id, b=b.id)] == ["rollback"]


def test_apply_changes_stays_inside_the_tenant(store: SymbolicStore) -> None:
    vecs = np.eye(3, 8, dtype=np.float32)
    recs = store.create([MemoryRecord(content="u one", scope=U), MemoryRecord(content="u two", scope=U),
                         MemoryRecord(content="v one", scope=Scope(user_id="v"))], vecs)
    mine, other, foreign = (r.id for r in recs)
    changed = store.apply_changes(
        "u", sets=[(mine, {"status": "archived"}), (foreign, {"status": "archived"})],
        links=[(mine, "CONFLICTS_WITH", other, {"kind": "x"}), (mine, "CONFLICTS_WITH", foreign, {"kind": "x"})],
        audits=[{"memory_id": mine, "action": "review", "user_id": "u"}])
    assert changed == [mine]
    assert store.get([foreign], Scope())[0].status.value == "active"
    assert store.linked(mine, "CONFLICTS_WITH") == [(other, {"kind": "x"})]
    store.apply_changes("u", unlinks=[(mine, "CONFLICTS_WITH", other)])
    assert store.linked(mine, "CONFLICTS_WITH") == []
    assert [e["action"] for e in store.audit_for(mine, U)] == ["review"]
    assert store.counter() == 5  # 3 creates + the one set that matched, numbered by the statement (+1 unused)


def test_a_decision_whose_removals_did_not_run_is_finished_by_recover(store: SymbolicStore) -> None:
    """The crash between a decision's two statements: the PendingUnlink it left names the edges, and recover()
    (every open, the janitor) removes them; running the removal twice changes nothing more."""
    vecs = np.eye(2, 8, dtype=np.float32)
    mine, other = (r.id for r in store.create([MemoryRecord(content="u one", scope=U),
                                               MemoryRecord(content="u two", scope=U)], vecs))
    store.apply_changes("u", links=[(mine, "CONFLICTS_WITH", other, {"kind": "x"})])
    run = store.executor.run

    def crash(statement: str, params: object = None, **kw: object) -> object:
        if "PendingUnlink" in statement and "DELETE" in statement:
            raise RuntimeError("killed between the two statements")
        return run(statement, params, **kw)  # type: ignore[arg-type]

    store.executor.run = crash  # type: ignore[method-assign]
    try:
        with pytest.raises(RuntimeError, match="killed"):
            store.apply_changes("u", sets=[(mine, {"status": "archived"})],
                                unlinks=[(mine, "CONFLICTS_WITH", other)])
    finally:
        store.executor.run = run  # type: ignore[method-assign]
    assert store.get([mine], U)[0].status.value == "archived"  # the first statement is committed
    assert store.linked(mine, "CONFLICTS_WITH") == [(other, {"kind": "x"})]  # the removal is not
    assert store.recover()["unlinks"] == 1
    assert store.linked(mine, "CONFLICTS_WITH") == []
    assert store.executor.run("MATCH (p:PendingUnlink) RETURN count(p) AS n", write=False) == [{"n": 0}]
    assert store.recover()["unlinks"] == 0
