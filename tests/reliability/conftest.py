"""Fixtures of the reliability suite (see README "Reliability"): counts are reduced by default and full with
``NEUSYM_FULL=1 pytest tests/reliability -m slow``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))

from neo4j_server.fixtures import neo4j_server  # noqa: E402,F401 - re-exported fixture
from reliability_support import ForkServer  # noqa: E402


@pytest.fixture(scope="module")
def fork_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    server = ForkServer(Path(tmp_path_factory.mktemp("forkserver")))
    yield server
    server.close()
