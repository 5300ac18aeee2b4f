"""Guarded read-only Cypher on both backends: the database itself enforces what the lexical check promises.

Each database layer is tested on its own by handing the executor a statement the lexical check never approved
(``CheckedQuery`` built by hand, as if the tokenizer had been fooled): the plan check must refuse LOAD CSV and
unapproved procedures, read-only execution must refuse writes, and the timeout must end a long read.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from neusym import BackendError, NeuSymMemory, ScopeError, UnsafeQueryError
from neusym.symbolic.executors.base import Executor, ReadOnlyRunner
from neusym.symbolic.guard import CheckedQuery
from neusym.symbolic.store import SymbolicStore

BYPASS = "WITH 1 AS `'` LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row"
# ~10^9 rows from two small lists: long-running without allocating much (a huge range() list would be built
# whole before any timeout check)
LONG_READ = "UNWIND range(1, 40000) AS a UNWIND range(1, 40000) AS b WITH a, b WHERE (a * b) % 7 = 3 RETURN count(*) AS n"


def _runner(executor: Executor) -> ReadOnlyRunner:
    assert isinstance(executor, ReadOnlyRunner)
    return executor


def _count(executor: Executor) -> int:
    return int(executor.run("MATCH (n) RETURN count(n) AS n", write=False)[0]["n"])


def test_the_backtick_bypass_is_refused(store: SymbolicStore) -> None:
    with pytest.raises(UnsafeQueryError, match="LOAD CSV"):
        store.read_only(BYPASS)


def test_the_database_refuses_load_csv_the_tokenizer_missed(store: SymbolicStore, executor: Executor) -> None:
    """Layer 2: the plan the server built holds LOAD CSV, whatever the text looked like to us."""
    with pytest.raises(UnsafeQueryError, match="LOAD CSV"):
        _runner(executor).run_read_only(CheckedQuery(BYPASS, ()), None, timeout=10, max_rows=10)


def test_the_database_refuses_writes_the_tokenizer_missed(store: SymbolicStore, executor: Executor) -> None:
    """Layers 2 and 3: a write reaching the database is refused by its read-only mode, and nothing is written."""
    before = _count(executor)
    for write in ("CREATE (:Planted {x: 1})", "MATCH (n) SET n.planted = 1 RETURN count(n)",
                  "UNWIND [1] AS i CALL { WITH i CREATE (:Planted) } RETURN i"):
        with pytest.raises((UnsafeQueryError, BackendError)):
            _runner(executor).run_read_only(CheckedQuery(write, ()), None, timeout=10, max_rows=10)
    assert _count(executor) == before


def test_the_database_refuses_procedures_the_tokenizer_did_not_approve(backend: str, store: SymbolicStore,
                                                                     executor: Executor) -> None:
    """FalkorDB's plan does not name procedures, so it may hold no more calls than were approved; Neo4j's does,
    so every one must be on the allowlist."""
    unapproved = ("CALL dbms.components() YIELD name RETURN name" if backend == "neo4j"
                  else "CALL dbms.procedures() YIELD name RETURN name")
    with pytest.raises(UnsafeQueryError):
        _runner(executor).run_read_only(CheckedQuery(unapproved, ()), None, timeout=10, max_rows=10)
    if backend == "falkordb":  # two calls in the plan, one approved
        two = ("CALL db.labels() YIELD label WITH collect(label) AS a "
               "CALL db.propertyKeys() YIELD propertyKey RETURN a, propertyKey")
        with pytest.raises(UnsafeQueryError):
            _runner(executor).run_read_only(CheckedQuery(two, ("db.labels",)), None, timeout=10, max_rows=10)


def test_allowed_reads_run(store: SymbolicStore, executor: Executor) -> None:
    executor.run("CREATE (:Memory {id: 'a', content: 'green tea'}), (:Memory {id: 'b', content: 'coffee'})")
    rows = store.read_only("MATCH (m:Memory) WHERE m.content CONTAINS $w RETURN m.id AS id", {"w": "tea"})
    assert rows == [{"id": "a"}]
    labels = {r["label"] for r in store.read_only("CALL db.labels() YIELD label RETURN label")}
    assert "Memory" in labels
    sub = store.read_only("CALL { MATCH (m:Memory) RETURN count(m) AS c } RETURN c")
    assert sub == [{"c": 2}]
    assert len(store.read_only("UNWIND range(1, 50) AS i RETURN i", limit=7)) == 7


def test_guarded_reads_have_a_timeout(store: SymbolicStore) -> None:
    """Layer 4: the server ends a long read (FalkorDB TIMEOUT, Neo4j transaction timeout)."""
    started = time.monotonic()
    with pytest.raises(BackendError):
        store.read_only(LONG_READ, timeout=0.5)
    assert time.monotonic() - started < 120  # generous: only "it ended", the timing itself is not the test


def test_facade_cypher_refuses_the_bypass_and_needs_all_tenants(make_memory: Callable[..., NeuSymMemory]) -> None:
    mem = make_memory()
    mem.add("Alice likes green tea.", user_id="alice", infer=False)
    with pytest.raises(ScopeError):
        mem.cypher("MATCH (m:Memory) RETURN m.id AS id")
    with pytest.raises(UnsafeQueryError):
        mem.cypher(BYPASS, all_tenants=True)
    with pytest.raises(UnsafeQueryError):
        mem.cypher("MATCH (m:Memory) DETACH DELETE m", all_tenants=True)
    assert mem.cypher("MATCH (m:Memory) RETURN count(m) AS n", all_tenants=True) == [{"n": 1}]


MILLION = "UNWIND range(1, 1000000) AS i RETURN i"


@pytest.fixture
def decoded(backend: str, executor: Executor, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many result rows reached the client, counted where the client library has decoded them: the rows of each
    GRAPH.RO_QUERY reply (FalkorDB; redis-py has parsed every one), the RECORD messages the Neo4j driver unpacked
    (also those it discards after a fetch: the server sends a whole fetch batch)."""
    seen: list[int] = []
    if backend == "falkordb":
        from neusym.symbolic.executors.falkordb import FalkorDBExecutor

        assert isinstance(executor, FalkorDBExecutor)
        execute = executor._execute

        def spy(*args: object) -> object:
            reply = execute(*args)
            if args and args[0] == "GRAPH.RO_QUERY" and isinstance(reply, list) and len(reply) >= 3:
                seen.append(len(reply[1]))
            return reply

        monkeypatch.setattr(executor, "_execute", spy)
    else:
        from neo4j._sync.io._bolt._common import Response

        on_records = Response.on_records

        def counted(self: Response, records: list[object]) -> None:
            seen.append(len(records))
            on_records(self, records)

        monkeypatch.setattr(Response, "on_records", counted)
    return seen


@pytest.mark.parametrize(("statement", "params", "expected"), [
    (MILLION, {}, list(range(1, 11))),
    (MILLION + " LIMIT 500000", {}, list(range(1, 11))),  # a larger LIMIT of its own
    (MILLION + " LIMIT $k", {"k": 500000}, list(range(1, 11))),
    (MILLION + " SKIP 5", {}, list(range(6, 16))),
    ("UNWIND range(1, 500000) AS i RETURN i UNION ALL UNWIND range(1, 500000) AS i RETURN i", {},
     list(range(1, 11))),
])
def test_rows_beyond_the_cap_are_never_sent_nor_decoded(store: SymbolicStore, decoded: list[int], backend: str,
                                                        statement: str, params: dict[str, object],
                                                        expected: list[int]) -> None:
    """Issue #27 item 9: a million-row read with limit=10 used to be fetched and decoded whole before the cap. The cap
    is now in the statement, so the server stops after 10 rows: only 10 reach the client library."""
    rows = store.read_only(statement, params, limit=10)
    assert [r["i"] for r in rows] == expected
    if backend == "falkordb":
        assert decoded == [10]  # one reply, of 10 rows
    else:
        assert sum(decoded) == 10


def test_a_cap_that_cannot_apply_is_refused(store: SymbolicStore) -> None:
    """A standalone index query returns every match and has no RETURN to cap: it must name its columns."""
    with pytest.raises(UnsafeQueryError, match="cannot be capped"):
        store.read_only("CALL db.idx.fulltext.queryNodes('Memory', 'tea')", limit=10)
    with pytest.raises(UnsafeQueryError, match="unbalanced"):
        store.read_only("MATCH (n) RETURN n } RETURN 1", limit=10)
