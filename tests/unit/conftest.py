"""tests/unit is the fast tier: ``pytest -m fast`` runs every pure test in seconds, with no database and no model.

A test here is marked ``fast`` unless it needs a graph (a database fixture, or a ``NeuSymMemory``/executor it opens
itself), starts another interpreter, needs a real model (``minilm``) or is ``slow``. A fast test that tries to open a graph anyway fails: the marker
cannot drift from what the test does.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

HERE = Path(__file__).parent
_DB_FIXTURES = {"memory", "make_memory", "falkordb_dir", "graph_name", "store", "executor", "seeded"}
_NOT_FAST = ("NeuSymMemory(", "Executor(", "EmbeddedFalkorDB(",  # opens a graph
             "subprocess", "sys.executable")  # starts another interpreter (seconds each)


def _not_fast(item: pytest.Item) -> bool:
    if _DB_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    try:
        source = inspect.getsource(getattr(item, "function", None))  # type: ignore[arg-type]
    except (TypeError, OSError):
        return False
    return any(s in source for s in _NOT_FAST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE not in Path(str(item.fspath)).parents:
            continue
        if any(item.get_closest_marker(m) for m in ("minilm", "slow", "neo4j")) or _not_fast(item):
            continue
        item.add_marker(pytest.mark.fast)


@pytest.fixture(autouse=True)
def _no_graph_in_the_fast_tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if request.node.get_closest_marker("fast") is None:
        return
    from neusym.symbolic.executors import embedded, falkordb, neo4j

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a fast-tier test opened a graph: give it a database fixture instead")

    monkeypatch.setattr(embedded.EmbeddedFalkorDB, "start", refuse)
    monkeypatch.setattr(falkordb.FalkorDBExecutor, "__init__", refuse)
    monkeypatch.setattr(neo4j.Neo4jExecutor, "__init__", refuse)
