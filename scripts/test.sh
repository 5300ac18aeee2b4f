#!/usr/bin/env bash
# Quick start, command 2: set up and run the whole test suite. The tests start the embedded FalkorDB and the
# Neo4j test server themselves (tests/conftest.py, tests/neo4j_server/launcher.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests
export NEUSYM_REQUIRE_NEO4J=1   # a Neo4j test that cannot get its server fails instead of skipping
# One pytest worker per core (pytest-xdist; each worker starts its own embedded FalkorDB and Neo4j test server):
# the suite took 19-21 min serially on 2 cores, 8.4 min with 2 workers. NEUSYM_TEST_WORKERS=0 runs it serially.
exec "${PYTHON:-python3}" -m pytest -q -p no:cacheprovider -n "${NEUSYM_TEST_WORKERS:-auto}" --maxprocesses=4 \
  --durations=25 "$@"  # the slowest tests, in every CI log
