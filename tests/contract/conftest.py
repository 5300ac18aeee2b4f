"""The backend contract: every symbolic-store test here runs against BOTH graph executors.

``backend`` is parametrised over ``falkordb`` (a fresh graph on the session's embedded server from
``tests/conftest.py``) and ``neo4j`` (the harness server from ``tests/neo4j_server``, or ``NEO4J_URI``; Community has
one database, so it is emptied with ``MATCH (n) DETACH DELETE n`` before each test). The Neo4j half is marked
``neo4j``; its server fixture skips on a developer machine without Java/Maven but FAILS under ``CI`` or
``NEUSYM_REQUIRE_NEO4J``, so a CI run can never go green by skipping it.

Fixtures:

* ``executor`` / ``store``: a raw executor and a set-up :class:`SymbolicStore` on the test's empty graph.
* ``new_executor()``: another executor on the same graph (what a second process would open).
* ``make_memory(**kw)`` / ``memory``: :class:`NeuSymMemory` on the same graph (HashingEmbedder(256), derived indexes
  under ``tmp_path``; every call gets its own index directory, like a separate application process).
* ``backend_config(**kw)``: the :class:`NeuSymConfig` that opens this backend (for subprocess tests).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from neo4j_server.fixtures import Neo4jConnection, neo4j_server  # noqa: F401 - fixture re-exported for this dir

from neusym import NeuSymConfig, NeuSymMemory
from neusym.embeddings import HashingEmbedder
from neusym.symbolic.executors.base import Executor
from neusym.symbolic.store import SymbolicStore

BACKENDS = [
    pytest.param("falkordb", id="falkordb"),
    pytest.param("neo4j", id="neo4j", marks=pytest.mark.neo4j),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def neo4j_conn(backend: str, request: pytest.FixtureRequest) -> Neo4jConnection | None:
    """The Neo4j connection for the neo4j half (the server starts on first use); None for FalkorDB."""
    if backend != "neo4j":
        return None
    conn: Neo4jConnection = request.getfixturevalue("neo4j_server")
    return conn


@pytest.fixture
def new_executor(
    backend: str, neo4j_conn: Neo4jConnection | None, request: pytest.FixtureRequest, graph_name: str
) -> Iterator[Callable[[], Executor]]:
    """Factory of executors on the test's graph; all are closed after the test."""
    opened: list[Executor] = []

    def factory() -> Executor:
        ex: Executor
        if neo4j_conn is not None:
            from neusym.symbolic.executors.neo4j import Neo4jExecutor

            ex = Neo4jExecutor(url=neo4j_conn.uri, username=neo4j_conn.username, password=neo4j_conn.password,
                               database=neo4j_conn.database)
        else:
            from neusym.symbolic.executors.falkordb import FalkorDBExecutor

            falkordb_dir: Path = request.getfixturevalue("falkordb_dir")
            ex = FalkorDBExecutor(graph_name, data_dir=falkordb_dir, appendfsync="everysec", stop_on_close=False)
        opened.append(ex)
        return ex

    yield factory
    for ex in opened:
        ex.close()


@pytest.fixture
def executor(backend: str, new_executor: Callable[[], Executor]) -> Iterator[Executor]:
    """An executor on an empty graph: a fresh FalkorDB graph name, or the emptied Neo4j database."""
    ex = new_executor()
    if backend == "neo4j":
        ex.run("MATCH (n) DETACH DELETE n")
        # a vector-mode test may have left a vector index of its own dimension behind
        ex.run("DROP INDEX neusym_memory_embedding IF EXISTS")
    yield ex
    if backend == "falkordb":
        from neusym.symbolic.executors.falkordb import FalkorDBExecutor

        assert isinstance(ex, FalkorDBExecutor)
        ex.delete_graph()


@pytest.fixture
def store(executor: Executor) -> SymbolicStore:
    s = SymbolicStore(executor)
    s.setup()
    return s


@pytest.fixture
def backend_config(
    backend: str, neo4j_conn: Neo4jConnection | None, request: pytest.FixtureRequest, graph_name: str,
    tmp_path: Path,
) -> Callable[..., NeuSymConfig]:
    """``backend_config(index_path=..., **overrides)``: the NeuSymConfig that opens the test's graph."""

    def build(**overrides: Any) -> NeuSymConfig:
        if neo4j_conn is not None:
            data: dict[str, Any] = dict(backend="neo4j", data_dir=tmp_path, neo4j_url=neo4j_conn.uri,
                                        neo4j_username=neo4j_conn.username, neo4j_password=neo4j_conn.password,
                                        neo4j_database=neo4j_conn.database)
        else:
            data = dict(backend="embedded", data_dir=request.getfixturevalue("falkordb_dir"),
                        graph_name=graph_name, appendfsync="everysec")
        data.update(overrides)
        return NeuSymConfig(**data)

    return build


@pytest.fixture
def make_memory(
    executor: Executor, backend_config: Callable[..., NeuSymConfig], tmp_path: Path
) -> Iterator[Callable[..., NeuSymMemory]]:
    """Memories on the test's (emptied) graph, each with its own derived-index directory; closed after the test.

    Overrides the FalkorDB-only ``make_memory`` of ``tests/conftest.py`` for this directory. Depends on
    ``executor`` so the graph is empty first (and, on FalkorDB, deleted afterwards).
    """
    opened: list[NeuSymMemory] = []
    counter = itertools.count()

    def factory(**kwargs: Any) -> NeuSymMemory:
        kwargs.setdefault("embedder", HashingEmbedder(256))
        overrides = dict(kwargs.pop("config_overrides", {}))  # a copy: callers pass module-level dicts
        overrides.setdefault("index_path", tmp_path / f"index_{next(counter)}")
        cfg = kwargs.pop("config", None) or backend_config(**overrides)
        mem = NeuSymMemory(config=cfg, **kwargs)
        opened.append(mem)
        return mem

    yield factory
    for mem in opened:
        mem.close()


@pytest.fixture
def memory(make_memory: Callable[..., NeuSymMemory]) -> NeuSymMemory:
    return make_memory()
