"""Opening NeuSymMemory on Neo4j the ways users do: NeuSymConfig fields, NEO4J_* variables, an existing driver; the
clear errors when that goes wrong; and the Neo4j schema (constraints, fulltext, range indexes, no APOC)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from neo4j_server.fixtures import Neo4jConnection

from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.errors import BackendUnavailableError
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.executors.neo4j import Neo4jExecutor

pytestmark = pytest.mark.neo4j

_ENV = ("NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEUSYM_BACKEND",
        "NEUSYM_NEURAL_BACKEND", "NEUSYM_DATA_DIR", "FALKORDB_HOST")


@pytest.fixture
def backend() -> str:
    """This module is Neo4j only (overrides the two-backend parameter of conftest.py)."""
    return "neo4j"


@pytest.fixture
def conn(neo4j_conn: Neo4jConnection | None, executor: Executor) -> Neo4jConnection:
    """The server's connection info, on an emptied database (``executor`` wipes it)."""
    assert neo4j_conn is not None
    return neo4j_conn


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    yield monkeypatch


def _open(**kw: object) -> NeuSymMemory:
    return NeuSymMemory(embedder=HashingEmbedder(256), **kw)  # type: ignore[arg-type]


def test_config_fields_are_passed_to_the_executor(conn: Neo4jConnection, tmp_path: Path) -> None:
    cfg = NeuSymConfig(backend="neo4j", data_dir=tmp_path, neo4j_url=conn.uri, neo4j_username=conn.username,
                       neo4j_password=conn.password, neo4j_database=conn.database)
    with _open(config=cfg) as mem:
        assert isinstance(mem.executor, Neo4jExecutor)
        assert mem.executor.url == conn.uri and mem.executor.database == conn.database
        rec = mem.add("Configured through NeuSymConfig.", user_id="u")[0]
        assert mem.search("configured", user_id="u", k=1)[0].id == rec.id
        # the derived indexes are named after the server and database, not after graph_name
        assert Path(mem.config.index_dir).name.startswith(f"neo4j-{conn.database}-")


def test_neo4j_uri_in_the_environment_selects_neo4j(conn: Neo4jConnection, clean_env: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    for key, value in conn.env().items():
        clean_env.setenv(key, value)
    clean_env.setenv("NEUSYM_DATA_DIR", str(tmp_path))
    with _open() as mem:  # NeuSymMemory() with nothing but the environment
        assert mem.config.backend == "neo4j" and mem.stats(user_id="u")["backend"] == "neo4j"
        assert mem.config.data_dir == tmp_path
        mem.add("Found through NEO4J_URI.", user_id="u")
    clean_env.setenv("NEUSYM_NEURAL_BACKEND", "neo4j_vector")
    with _open() as mem:
        assert mem.config.neural_backend == "neo4j_vector" and mem.dense_search is not None
        assert mem.search("found through", user_id="u", k=1, recipe="dense_only")  # backfilled at open


def test_an_existing_driver(conn: Neo4jConnection, tmp_path: Path) -> None:
    import neo4j

    driver = neo4j.GraphDatabase.driver(conn.uri, auth=(conn.username, conn.password))
    try:
        mem = _open(executor=Neo4jExecutor(driver=driver, database=conn.database),
                    config=NeuSymConfig(data_dir=tmp_path))
        rec = mem.add("Stored through the application's own driver.", user_id="u")[0]
        assert mem.get(rec.id, user_id="u").content.startswith("Stored through")
        mem.close()
        # the driver stays the caller's
        assert driver.execute_query("MATCH (m:Memory) RETURN count(m) AS n", database_=conn.database).records[0]["n"] == 1
    finally:
        driver.close()


@pytest.mark.parametrize(("field", "value", "phrase"), [
    ("neo4j_password", "wrong-password", "rejected the credentials"),
    ("neo4j_database", "no_such_db", "does not exist"),
    ("neo4j_url", "bolt://127.0.0.1:1", "unreachable"),
])
def test_connection_errors_are_clear(conn: Neo4jConnection, clean_env: pytest.MonkeyPatch, tmp_path: Path,
                                     field: str, value: str, phrase: str) -> None:
    data = dict(backend="neo4j", data_dir=tmp_path, neo4j_url=conn.uri, neo4j_username=conn.username,
                neo4j_password=conn.password, neo4j_database=conn.database)
    data[field] = value
    with pytest.raises(BackendUnavailableError, match=phrase):
        _open(config=NeuSymConfig(**data))  # type: ignore[arg-type]


def test_schema_on_neo4j(conn: Neo4jConnection, executor: Executor, tmp_path: Path) -> None:
    cfg = NeuSymConfig(backend="neo4j", data_dir=tmp_path, neo4j_url=conn.uri, neo4j_username=conn.username,
                       neo4j_password=conn.password, neo4j_database=conn.database)
    for _ in range(2):  # idempotent: a second open changes nothing
        _open(config=cfg).close()
    constraints = executor.run("SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties, type RETURN *")
    unique = {(c["labelsOrTypes"][0], c["properties"][0]) for c in constraints if c["type"] == "UNIQUENESS"}
    assert {("Memory", "id"), ("Memory", "nid"), ("Entity", "uid"), ("Counter", "name")} <= unique
    indexes = {r["name"]: r for r in executor.run("SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state "
                                                  "RETURN *")}
    assert indexes["neusym_memory_content"]["type"] == "FULLTEXT"
    for name in ("neusym_memory_seq", "neusym_memory_user_id", "neusym_entity_key", "neusym_tombstone_seq"):
        assert indexes[name]["type"] == "RANGE" and indexes[name]["state"] == "ONLINE"
    assert executor.run("MATCH (c:Counter) RETURN count(c) AS n") == [{"n": 1}]
    # no APOC: the harness server has no plugins, and no statement NeuSym sends names an apoc procedure
    assert executor.run("SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc' RETURN count(*) AS n") == [{"n": 0}]
    root = Path(__file__).resolve().parents[2] / "neusym"
    assert not [p for p in root.rglob("*.py") if "apoc." in p.read_text(encoding="utf-8").lower()]
