"""Neo4jExecutor against a real Neo4j 5.26 (the harness server from tests/neo4j_server, or NEO4J_URI).

What matters here is what the store above relies on: values arrive and leave unchanged, rows are plain dicts, the
Neo4j DDL from dialects.py runs (twice), and every way of failing to connect is a distinct, typed error.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j_server import fixtures as neo4j_fixtures
from neo4j_server.fixtures import Neo4jConnection

from neusym.errors import BackendError, BackendUnavailableError, ClosedError, InvalidInputError
from neusym.symbolic import dialects
from neusym.symbolic.dialects import Dialect
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.executors.neo4j import Neo4jExecutor

pytestmark = pytest.mark.neo4j

# The shared fixtures, made visible to this module (a no-op duplicate if a conftest imports them too: the server is a
# per-process singleton either way).
neo4j_server = neo4j_fixtures.neo4j_server
neo4j_executor = neo4j_fixtures.neo4j_executor

NEO4J = Dialect.NEO4J
_ENV_VARS = ("NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE")


def _connect(conn: Neo4jConnection, **overrides: Any) -> Neo4jExecutor:
    kwargs: dict[str, Any] = {
        "url": conn.uri,
        "username": conn.username,
        "password": conn.password,
        "database": conn.database,
    }
    kwargs.update(overrides)
    return Neo4jExecutor(**kwargs)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in _ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def free_port() -> Iterator[int]:
    """A loopback port nothing listens on (bound and released, so connecting is refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    yield port


# --------------------------------------------------------------------------------------------- values and rows


TRICKY_STRINGS = [
    "plain",
    "",
    "ünïcödé — 日本語のテキスト — עברית — 🙂🚀👩‍👩‍👧",
    "e\u0301 combining, zero\u200bwidth, nbsp\u00a0here",
    "it's \"quoted\" `backticked` \\backslash\\ \\n not-a-newline",
    "line1\nline2\r\n\ttabbed",
    "'}) MATCH (n) DETACH DELETE n //",
    "\") RETURN 1 UNION MATCH (x) SET x.pwned = true //",
    "$param {not: 'a map'} ${x} :Label `weird name`",
    "CALL db.index.fulltext.queryNodes('x', 'y') YIELD node",
    "nul\x00inside",
]


@pytest.mark.parametrize("text", TRICKY_STRINGS)
def test_strings_are_stored_verbatim(neo4j_executor: Neo4jExecutor, text: str) -> None:
    neo4j_executor.run("CREATE (:T {id: 1, text: $text})", {"text": text})
    rows = neo4j_executor.run("MATCH (t:T {id: 1}) RETURN t.text AS text, count(*) AS n", write=False)
    assert rows == [{"text": text, "n": 1}]
    # Nothing in the text ran as Cypher: still exactly one node, and nothing got a 'pwned' property.
    assert neo4j_executor.run("MATCH (n) RETURN count(n) AS n, count(n.pwned) AS pwned") == [{"n": 1, "pwned": 0}]


def test_param_types_round_trip(neo4j_executor: Neo4jExecutor) -> None:
    params: dict[str, Any] = {
        "i": 2**62,
        "neg": -7,
        "f": 0.1,
        "b": True,
        "none": None,
        "s": "ß",
        "blob": b"\x00\xffbytes",
        "floats": [0.5, -1.25, 3.0],
        "nested": {"list": [1, "two", [3.0]], "map": {"k": "v", "empty": []}},
        "tuple": (1, 2),
        "when": dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=dt.UTC),
        "day": dt.date(2024, 2, 29),
        "span": dt.timedelta(days=2, seconds=5, microseconds=7),
    }
    (row,) = neo4j_executor.run("RETURN " + ", ".join(f"${k} AS {k}" for k in params), params, write=False)
    expected = dict(params, tuple=[1, 2])
    assert row == expected
    assert type(row["blob"]) is bytes and type(row["tuple"]) is list


def test_rows_are_plain_dicts_with_plain_values(neo4j_executor: Neo4jExecutor) -> None:
    rows = neo4j_executor.run(
        "CREATE p = (a:Person {name: 'Ann', tags: ['x', 'y']})-[r:KNOWS {since: 2020}]->(b:Person {name: 'Bo'}) "
        "RETURN a, r, p, [a, b] AS people, {who: a, n: 1} AS m, "
        "datetime('2024-01-02T03:04:05.123456+02:00') AS at, date('2024-01-02') AS d, "
        "duration('P1DT2H') AS exact, duration('P1M') AS monthly, point({x: 1, y: 2}) AS pt, null AS nothing"
    )
    assert type(rows) is list and len(rows) == 1
    row = rows[0]
    assert type(row) is dict
    assert row["a"] == {"name": "Ann", "tags": ["x", "y"]} and type(row["a"]) is dict
    assert row["r"] == {"since": 2020}
    assert row["p"] == {"nodes": [{"name": "Ann", "tags": ["x", "y"]}, {"name": "Bo"}], "relationships": [{"since": 2020}]}
    assert row["people"] == [{"name": "Ann", "tags": ["x", "y"]}, {"name": "Bo"}]
    assert row["m"] == {"who": {"name": "Ann", "tags": ["x", "y"]}, "n": 1}
    assert row["at"] == dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert isinstance(row["at"].tzinfo, dt.timezone)  # stdlib zones, not pytz
    assert type(row["d"]) is dt.date and row["d"] == dt.date(2024, 1, 2)
    assert row["exact"] == dt.timedelta(days=1, hours=2)
    assert row["monthly"] == "P1M"
    assert row["pt"] == [1.0, 2.0]
    assert row["nothing"] is None


def test_no_rows_is_an_empty_list(neo4j_executor: Neo4jExecutor) -> None:
    assert neo4j_executor.run("MATCH (n:Nothing) RETURN n", write=False) == []
    assert neo4j_executor.run("CREATE (:T)") == []


def test_nan_is_refused_like_on_falkordb(neo4j_executor: Neo4jExecutor) -> None:
    with pytest.raises(BackendError, match="NaN"):
        neo4j_executor.run("CREATE (:T {x: $x})", {"x": [1.0, math.nan]})


@pytest.mark.parametrize("value", [object(), {1, 2}, 2**64])
def test_unsupported_param_is_a_backend_error(neo4j_executor: Neo4jExecutor, value: object) -> None:
    with pytest.raises(BackendError, match="parameters") as info:
        neo4j_executor.run("RETURN $x AS x", {"x": value})
    assert info.value.__cause__ is not None


def test_executor_satisfies_the_protocol(neo4j_executor: Neo4jExecutor) -> None:
    assert isinstance(neo4j_executor, Executor)
    assert neo4j_executor.dialect is Dialect.NEO4J


# --------------------------------------------------------------------------------------------- errors from queries


def test_syntax_error_is_wrapped_with_the_driver_error_as_cause(neo4j_executor: Neo4jExecutor) -> None:
    import neo4j

    with pytest.raises(BackendError, match="SyntaxError") as info:
        neo4j_executor.run("MATCH (n RETURN n")
    assert not isinstance(info.value, BackendUnavailableError)
    assert isinstance(info.value.__cause__, neo4j.exceptions.Neo4jError)


def test_read_only_run_refuses_writes(neo4j_executor: Neo4jExecutor) -> None:
    with pytest.raises(BackendError) as info:
        neo4j_executor.run("CREATE (:T)", write=False)
    assert not isinstance(info.value, BackendUnavailableError)
    assert neo4j_executor.run("MATCH (t:T) RETURN count(t) AS n") == [{"n": 0}]


def test_constraint_violation_is_a_backend_error(neo4j_executor: Neo4jExecutor) -> None:
    for stmt in dialects.index_statements(NEO4J):
        neo4j_executor.run(stmt)
    neo4j_executor.run("CREATE (:Memory {id: 'dup'})")
    with pytest.raises(BackendError, match="ConstraintValidationFailed"):
        neo4j_executor.run("CREATE (:Memory {id: 'dup'})")


# --------------------------------------------------------------------------------------------- schema from dialects.py


def _schema_statements(dimension: int = 4) -> list[str]:
    return [
        *dialects.index_statements(NEO4J),
        *dialects.fulltext_index_statements(NEO4J),
        dialects.vector_index_statement(NEO4J, dimension),
    ]


def test_schema_ddl_runs_and_is_idempotent(neo4j_executor: Neo4jExecutor) -> None:
    for _ in range(2):
        for stmt in _schema_statements():
            neo4j_executor.run(stmt)
    rows = neo4j_executor.run("SHOW INDEXES YIELD name, type, state WHERE name STARTS WITH 'neusym_' RETURN *")
    by_name = {r["name"]: r for r in rows}
    assert by_name["neusym_memory_content"]["type"] == "FULLTEXT"
    assert by_name["neusym_memory_embedding"]["type"] == "VECTOR"
    assert by_name["neusym_memory_id_unique"]["type"] == "RANGE"  # the constraint's backing index
    assert {"neusym_memory_seq", "neusym_entity_key", "neusym_counter_name_unique"} <= set(by_name)
    constraints = neo4j_executor.run("SHOW CONSTRAINTS YIELD name RETURN collect(name) AS names")[0]["names"]
    assert {"neusym_memory_id_unique", "neusym_memory_nid_unique", "neusym_counter_name_unique"} <= set(constraints)


def test_vector_index_dimension_query_reports_the_existing_dimension(neo4j_executor: Neo4jExecutor) -> None:
    query = dialects.vector_index_dimension_query(NEO4J)
    assert query is not None
    neo4j_executor.run("DROP INDEX neusym_memory_embedding IF EXISTS")
    assert neo4j_executor.run(query, write=False) == []
    neo4j_executor.run(dialects.vector_index_statement(NEO4J, 4))
    neo4j_executor.run(dialects.vector_index_statement(NEO4J, 8))  # IF NOT EXISTS: silently keeps 4
    assert neo4j_executor.run(query, write=False) == [{"dimension": 4}]


def test_fulltext_query(neo4j_executor: Neo4jExecutor) -> None:
    for stmt in dialects.fulltext_index_statements(NEO4J):
        neo4j_executor.run(stmt)
    neo4j_executor.run(
        "UNWIND $rows AS r CREATE (:Memory {id: r[0], content: r[1]})",
        {
            "rows": [
                ["a", "Alice adopted a cat AND a dog"],
                ["b", "Bob prefers tea over coffee"],
                ["c", "Carol's cat is called Übermaß"],
            ]
        },
    )
    call = dialects.fulltext_query_call(NEO4J)

    def search(text: str) -> list[str]:
        ft = dialects.fulltext_query_text(NEO4J, text)
        rows = neo4j_executor.run(f"{call} RETURN node.id AS id, score ORDER BY score DESC", {"ft_query": ft}, write=False)
        assert all(isinstance(r["score"], float) for r in rows)
        return [r["id"] for r in rows]

    assert sorted(search("cat")) == ["a", "c"]
    assert search("TEA please") == ["b"]
    assert search("übermaß") == ["c"]
    # Lucene operators and syntax in user text are plain words, never query syntax.
    assert sorted(search("cat AND NOT OR dog")) == ["a", "c"]
    assert search('coffee" OR *:* (') == ["b"]


def test_vector_query(neo4j_executor: Neo4jExecutor) -> None:
    neo4j_executor.run(dialects.vector_index_statement(NEO4J, 4))
    neo4j_executor.run(
        "UNWIND $rows AS r CREATE (:Memory {id: r.id, embedding_vec: r.v})",
        {"rows": [{"id": "x", "v": [1.0, 0.0, 0.0, 0.0]}, {"id": "y", "v": [0.0, 1.0, 0.0, 0.0]}]},
    )
    rows = neo4j_executor.run(
        f"{dialects.vector_query_call(NEO4J)} RETURN node.id AS id, score",
        {"top": 2, "vector": [0.9, 0.1, 0.0, 0.0]},
        write=False,
    )
    assert [r["id"] for r in rows] == ["x", "y"]
    assert rows[0]["score"] > rows[1]["score"]  # higher is closer


# --------------------------------------------------------------------------------------------- connecting


def test_bad_password_is_a_typed_error(neo4j_server: Neo4jConnection) -> None:
    import neo4j

    with pytest.raises(BackendUnavailableError, match="credentials") as info:
        _connect(neo4j_server, password="definitely-not-the-password")
    assert isinstance(info.value.__cause__, neo4j.exceptions.AuthError)


def test_unreachable_port_is_a_typed_error(neo4j_server: Neo4jConnection, free_port: int) -> None:
    with pytest.raises(BackendUnavailableError, match="unreachable"):
        _connect(neo4j_server, url=f"bolt://127.0.0.1:{free_port}")


def test_missing_database_is_a_typed_error(neo4j_server: Neo4jConnection) -> None:
    with pytest.raises(BackendUnavailableError, match="'no_such_db' does not exist"):
        _connect(neo4j_server, database="no_such_db")


def test_the_three_failures_have_distinct_messages(neo4j_server: Neo4jConnection, free_port: int) -> None:
    phrases = ("rejected the credentials", "is unreachable", "does not exist")
    cases = ({"password": "wrong-password"}, {"url": f"bolt://127.0.0.1:{free_port}"}, {"database": "nope"})
    for expected, overrides in zip(phrases, cases, strict=True):
        with pytest.raises(BackendUnavailableError) as info:
            _connect(neo4j_server, **overrides)
        assert [p for p in phrases if p in str(info.value)] == [expected]


@pytest.mark.parametrize("url", ["http://127.0.0.1:7474", "localhost:7687", "bolt://127.0.0.1:notaport"])
def test_invalid_url_is_a_typed_error(clean_env: pytest.MonkeyPatch, url: str) -> None:
    with pytest.raises(BackendUnavailableError, match="invalid Neo4j URL"):
        Neo4jExecutor(url=url)


def test_missing_url_is_a_typed_error(clean_env: pytest.MonkeyPatch) -> None:
    with pytest.raises(BackendUnavailableError, match="NEO4J_URI"):
        Neo4jExecutor()


def test_routing_scheme_works(neo4j_server: Neo4jConnection) -> None:
    ex = _connect(neo4j_server, url=neo4j_server.uri.replace("bolt://", "neo4j://"))
    try:
        assert ex.run("RETURN 1 AS one", write=False) == [{"one": 1}]
    finally:
        ex.close()


# --------------------------------------------------------------------------------------------- environment


def test_env_var_fallback(neo4j_server: Neo4jConnection, clean_env: pytest.MonkeyPatch) -> None:
    for key, value in neo4j_server.env().items():
        clean_env.setenv(key, value)
    ex = Neo4jExecutor()
    try:
        assert ex.run("RETURN 1 AS one") == [{"one": 1}]
        assert ex.database == neo4j_server.database
    finally:
        ex.close()
    from_env = Neo4jExecutor.from_env()
    from_env.close()


def test_env_url_alias_and_database(neo4j_server: Neo4jConnection, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("NEO4J_URL", neo4j_server.uri)  # langchain's older name
    clean_env.setenv("NEO4J_PASSWORD", neo4j_server.password)
    ex = Neo4jExecutor()  # username defaults to neo4j, database to neo4j
    try:
        assert ex.url == neo4j_server.uri and ex.database == "neo4j"
    finally:
        ex.close()
    clean_env.setenv("NEO4J_DATABASE", "from_env_db")
    with pytest.raises(BackendUnavailableError, match="'from_env_db' does not exist"):
        Neo4jExecutor()


def test_arguments_override_env(neo4j_server: Neo4jConnection, clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    clean_env.setenv("NEO4J_PASSWORD", "wrong-password")
    ex = _connect(neo4j_server)
    ex.close()


def test_driver_is_imported_lazily() -> None:
    """The engine imports this module only for Neo4j, but importing it must not pull in the driver either."""
    code = (
        "import sys, neusym; before = 'neo4j' in sys.modules; "
        "import neusym.symbolic.executors.neo4j; "
        "assert before or 'neo4j' not in sys.modules, 'neo4j driver imported at module import'"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# --------------------------------------------------------------------------------------------- lifecycle


def test_close_is_idempotent_and_run_after_close_raises(neo4j_server: Neo4jConnection) -> None:
    ex = _connect(neo4j_server)
    ex.close()
    ex.close()
    with pytest.raises(ClosedError):
        ex.run("RETURN 1")


def test_given_driver_is_not_closed(neo4j_server: Neo4jConnection, clean_env: pytest.MonkeyPatch) -> None:
    import neo4j

    driver = neo4j.GraphDatabase.driver(neo4j_server.uri, auth=(neo4j_server.username, neo4j_server.password))
    try:
        ex = Neo4jExecutor(driver=driver, database=neo4j_server.database)
        assert ex.run("RETURN 2 AS two") == [{"two": 2}]
        ex.close()
        with pytest.raises(ClosedError):
            ex.run("RETURN 1")
        assert driver.execute_query("RETURN 3 AS three").records[0]["three"] == 3
        with pytest.raises(InvalidInputError):
            Neo4jExecutor(driver=driver, url=neo4j_server.uri)
    finally:
        driver.close()


def test_concurrent_runs_from_many_threads(neo4j_executor: Neo4jExecutor) -> None:
    """Sessions per call over one thread-safe driver: parallel increments of one node all land (the driver retries
    lock conflicts inside execute_write)."""
    neo4j_executor.run("CREATE (:Counter {name: 'c', value: 0})")
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                neo4j_executor.run("MATCH (c:Counter {name: 'c'}) SET c.value = c.value + 1")
                neo4j_executor.run("MATCH (c:Counter {name: 'c'}) RETURN c.value AS v", write=False)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert neo4j_executor.run("MATCH (c:Counter {name: 'c'}) RETURN c.value AS v") == [{"v": 160}]


def test_read_your_writes_across_calls(neo4j_executor: Neo4jExecutor) -> None:
    for i in range(20):
        neo4j_executor.run("CREATE (:T {i: $i})", {"i": i})
        assert neo4j_executor.run("MATCH (t:T) RETURN count(t) AS n", write=False) == [{"n": i + 1}]


# --------------------------------------------------------------------------------------------- the fixture itself


@pytest.mark.parametrize(("ci", "outcome"), [("true", "1 error"), ("", "1 skipped")])
def test_fixture_fails_in_ci_and_skips_elsewhere_when_no_server(ci: str, outcome: str) -> None:
    """A CI run must not turn green by skipping every Neo4j test because the server could not start."""
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in (*_ENV_VARS, "CI", "NEUSYM_REQUIRE_NEO4J")}
    env.update(CI=ci, NEUSYM_NEO4J_JAVA="/nonexistent/java")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         f"{Path(__file__).resolve()}::test_executor_satisfies_the_protocol"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300,
    )
    out = done.stdout + done.stderr
    assert outcome in out, out[-3000:]
    if ci:
        assert done.returncode != 0 and "Neo4j test server required" in out
    else:
        assert done.returncode == 0
