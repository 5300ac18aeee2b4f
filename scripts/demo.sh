#!/usr/bin/env bash
# Quick start, command 1: set up and run the multi-session memory demo on the embedded default.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec "${PYTHON:-python3}" -m neusym demo "$@"
