#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup, lint, types, then every pytest lane CI runs
# (unit, contract, integration). Extra arguments go to pytest. The long soaks are separate:
# `bash scripts/soak.sh` (1,000 runs) and `bash scripts/chaos.sh` (30 minutes of faults).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=.venv/bin
echo "== ruff";  $PY/ruff check evalfleet/__init__.py scoring sandbox tasks workers tests bench
echo "== mypy";  $PY/mypy
echo "== pytest"
# pytest exits 5 when it collects nothing; `set -e` turns that into a failure, as it must.
$PY/pytest -m "not slow and not reference" "$@"
