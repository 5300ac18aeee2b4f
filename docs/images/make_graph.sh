#!/usr/bin/env bash
# Regenerate docs/images/graph.png (the README's picture of `neusym graph --html`) from graph-demo.jsonl, with the
# CLI only. Needs Chromium (Debian: apt-get install chromium). Usage: bash docs/images/make_graph.sh
set -euo pipefail
cd "$(dirname "$0")"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export NEUSYM_DATA_DIR="$dir" NEUSYM_EMBEDDER=hashing
neusym import graph-demo.jsonl --user ana --no-progress
neusym reflect --user ana --session jan
neusym graph --user ana --html "$dir/graph.html" --png graph.png --size 1400x900 --title "NeuSym memory graph: ana"
