#!/usr/bin/env bash
# Quick start, command 2: set up and run the whole test suite. The tests start the embedded FalkorDB and the
# Neo4j test server themselves (tests/conftest.py, tests/neo4j_server/launcher.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
export NEUSYM_REQUIRE_NEO4J=1   # a Neo4j test that cannot get its server fails instead of skipping
exec "${PYTHON:-python3}" -m pytest -q -p no:cacheprovider --durations=25 "$@"  # the slowest tests, in every CI log
