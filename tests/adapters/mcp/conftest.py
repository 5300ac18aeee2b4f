"""Fixtures for the MCP server tests: the real Neo4j test server for the one test that runs on it (the rest use the
session's embedded FalkorDB from tests/conftest.py)."""

from __future__ import annotations

from neo4j_server.fixtures import neo4j_server  # noqa: F401 - fixture re-exported for this directory
