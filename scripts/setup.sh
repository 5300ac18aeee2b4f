#!/usr/bin/env bash
# Install everything NeuSym, its tests and its benchmarks need, from this repository's own files.
# Idempotent: on a machine that already has the packages this takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PIP_DISABLE_PIP_VERSION_CHECK=1

# No torch: the default embedder runs on onnxruntime (pip install -e ".[torch]" adds sentence-transformers).
"$PY" -m pip install -q -e ".[dev]"

if [ "${1:-}" = "--tests" ]; then
  # Neo4j test server (neo4j-harness from Maven Central; Java 17 + Maven on the machine)
  "$PY" tests/neo4j_server/launcher.py --build-only
  # headless Chromium for the graph-page test
  if ! command -v chromium >/dev/null 2>&1; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || { echo "setup: could not install chromium (needed by the graph-page test)" >&2; exit 1; }
  fi
fi
