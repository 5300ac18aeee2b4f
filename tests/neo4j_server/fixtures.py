"""Pytest fixtures for tests that need a real Neo4j.

Import them where they are needed (``from neo4j_server.fixtures import neo4j_server, neo4j_executor``, with
``tests/`` on ``sys.path`` as pytest puts it for ``tests/conftest.py``).

Where the server comes from:

* ``NEO4J_URI`` set: that server is used as is (``NEO4J_USERNAME``, default ``neo4j``; ``NEO4J_PASSWORD``;
  ``NEO4J_DATABASE``, default ``neo4j``). Nothing is started. ``neo4j_executor`` deletes all data in that
  database before each test: never point ``NEO4J_URI`` at a database you care about.
* otherwise the harness server is built if needed and started once per test process (see ``launcher.py``).

If neither works the tests are skipped on a developer machine, but FAIL when ``CI`` (or ``NEUSYM_REQUIRE_NEO4J``) is
set: a CI run that silently skipped every Neo4j test would look green while testing nothing.

The server is a process-wide singleton rather than state of one fixture, so importing the fixtures into several
conftest files (each import is a separate fixture definition to pytest) still starts one JVM. It stops when the
test process exits, through ``atexit`` and, should that not run, through the stdin pipe the server watches.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from .launcher import Neo4jServerError, Neo4jTestServer, start_neo4j

if TYPE_CHECKING:
    from neusym.symbolic.executors.neo4j import Neo4jExecutor

__all__ = ["Neo4jConnection", "neo4j_connection", "neo4j_executor", "neo4j_required", "neo4j_server"]

START_TIMEOUT = float(os.environ.get("NEUSYM_NEO4J_START_TIMEOUT", "180"))


@dataclass(frozen=True)
class Neo4jConnection:
    uri: str
    username: str
    password: str
    database: str = "neo4j"
    started_here: bool = False

    def env(self) -> dict[str, str]:
        """The ``NEO4J_*`` variables for this server, for subprocesses or ``monkeypatch`` (never set globally:
        ``NEO4J_URI`` in the environment switches NeuSymConfig.from_env to the Neo4j backend)."""
        return {
            "NEO4J_URI": self.uri,
            "NEO4J_USERNAME": self.username,
            "NEO4J_PASSWORD": self.password,
            "NEO4J_DATABASE": self.database,
        }


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


def neo4j_required() -> bool:
    """True in CI (``CI`` set, as every CI service does) or when ``NEUSYM_REQUIRE_NEO4J`` asks for it."""
    return _flag("CI") or _flag("NEUSYM_REQUIRE_NEO4J")


_lock = threading.Lock()
_connection: Neo4jConnection | None = None
_failure: str | None = None
_server: Neo4jTestServer | None = None


def _check(conn: Neo4jConnection) -> None:
    """Fail early and clearly if an externally given server cannot be used."""
    import neo4j

    with neo4j.GraphDatabase.driver(conn.uri, auth=(conn.username, conn.password)) as driver:
        driver.execute_query("RETURN 1", database_=conn.database)


def neo4j_connection() -> Neo4jConnection:
    """Connection info for this test process's Neo4j, starting the harness server on first use.

    Raises :class:`Neo4jServerError`; a failure is remembered, so a broken setup costs one start timeout, not one
    per test.
    """
    global _connection, _failure, _server
    with _lock:
        if _connection is not None:
            return _connection
        if _failure is not None:
            raise Neo4jServerError(_failure)
        try:
            uri = os.environ.get("NEO4J_URI") or os.environ.get("NEO4J_URL")
            if uri:
                conn = Neo4jConnection(
                    uri,
                    os.environ.get("NEO4J_USERNAME") or "neo4j",
                    os.environ.get("NEO4J_PASSWORD", ""),
                    os.environ.get("NEO4J_DATABASE") or "neo4j",
                )
                try:
                    _check(conn)
                except Exception as err:  # noqa: BLE001 - any driver error means "unusable"
                    raise Neo4jServerError(f"NEO4J_URI={uri} is set but unusable: {err}") from err
            else:
                _server = start_neo4j(START_TIMEOUT)
                atexit.register(_server.stop)
                conn = Neo4jConnection(_server.uri, _server.username, _server.password, started_here=True)
        except Neo4jServerError as err:
            _failure = str(err)
            raise
        _connection = conn
        return conn


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jConnection]:
    """Connection info for a live Neo4j 5.x; skips (or, under ``CI``, fails) when none can be had."""
    try:
        conn = neo4j_connection()
    except Neo4jServerError as err:
        if neo4j_required():
            pytest.fail(f"Neo4j test server required (CI or NEUSYM_REQUIRE_NEO4J) but unavailable: {err}", pytrace=False)
        pytest.skip(f"Neo4j test server unavailable: {err}")
    yield conn


@pytest.fixture
def neo4j_executor(neo4j_server: Neo4jConnection) -> Iterator[Neo4jExecutor]:
    """A :class:`Neo4jExecutor` on an emptied database (data removed; indexes and constraints kept)."""
    from neusym.symbolic.executors.neo4j import Neo4jExecutor

    executor = Neo4jExecutor(
        url=neo4j_server.uri,
        username=neo4j_server.username,
        password=neo4j_server.password,
        database=neo4j_server.database,
    )
    executor.run("MATCH (n) DETACH DELETE n")
    yield executor
    executor.close()
