"""CLI fixtures: the ``neusym`` app run in-process through typer's ``CliRunner`` against the session's real
embedded FalkorDB (a fresh graph per test) with the fast HashingEmbedder, configured the way a user would: through
``NEUSYM_*`` environment variables."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import Cli
from typer.testing import CliRunner

_CLEARED = ("NEO4J_URI", "NEO4J_URL", "NEO4J_USERNAME", "NEO4J_PASSWORD", "NEO4J_DATABASE", "NEUSYM_BACKEND",
            "FALKORDB_HOST", "FALKORDB_PORT", "NEUSYM_USER", "NEUSYM_AGENT", "NEUSYM_SESSION", "NEUSYM_INDEX_PATH")


@pytest.fixture
def cli_env(falkordb_dir: Path, graph_name: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for var in _CLEARED:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NEUSYM_DATA_DIR", str(falkordb_dir))
    monkeypatch.setenv("NEUSYM_GRAPH", graph_name)
    monkeypatch.setenv("NEUSYM_EMBEDDER", "hashing:256")
    monkeypatch.setenv("COLUMNS", "200")
    yield graph_name


@pytest.fixture
def cli(cli_env: str) -> Cli:
    return Cli(CliRunner(), cli_env)


@pytest.fixture
def other_graph(graph_name: str) -> str:
    """A second fresh graph name on the same server (restore targets)."""
    return f"{graph_name}_b"
