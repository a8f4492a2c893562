#!/usr/bin/env bash
# The full soak: 1,000 runs across 4 worker processes on a private Redis and the local
# Docker engine (tests/reliability/test_soak.py, marked `slow`, so not in `scripts/test.sh`).
#
#   bash scripts/soak.sh                 # setup, then the soak; prints the report
#   SOAK_REPORT=out.json bash scripts/soak.sh
#
# Passes when every run has exactly one scorecard, no container is left and worker memory
# stays bounded; the report (throughput, latency percentiles) goes to $SOAK_REPORT.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export EVALFLEET_SOAK_REPORT="${SOAK_REPORT:-${TMPDIR:-/tmp}/evalfleet-soak-report.json}"
.venv/bin/pytest -m slow \
    --timeout 1800 tests/reliability/test_soak.py -k 1000 "$@"
echo "== soak report ($EVALFLEET_SOAK_REPORT)"
cat "$EVALFLEET_SOAK_REPORT"
