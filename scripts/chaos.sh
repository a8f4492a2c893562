#!/usr/bin/env bash
# The chaos soak, by hand: 2 worker nodes × 2 processes on a private Redis (AOF on) take a
# steady stream of runs (example packs' winning reference submissions) while pool
# processes and whole nodes are SIGKILLed, Redis is restarted, the engine socket is cut
# and a worker is partitioned, at random seeded intervals (tests/reliability/test_chaos.py,
# driver tests/reliability/chaos.py; a 2-minute version runs in `scripts/test.sh`).
#
#   bash scripts/chaos.sh                      # setup, then 30 minutes; prints the report
#   CHAOS_MINUTES=60 CHAOS_SEED=42 bash scripts/chaos.sh
#   CHAOS_REPORT=out.json bash scripts/chaos.sh
#
# Needs root (the partitioned worker runs in a network namespace of its own). Passes when
# every run has exactly one result, none is scored against the candidate (a loss of a
# winning reference) and no container of the fleet is left. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
minutes="${CHAOS_MINUTES:-30}"
export EVALFLEET_CHAOS_DURATION_S=$((minutes * 60))
export EVALFLEET_CHAOS_REPORT="${CHAOS_REPORT:-${TMPDIR:-/tmp}/evalfleet-chaos-report.json}"
[[ -n ${CHAOS_SEED:-} ]] && export EVALFLEET_CHAOS_SEED="$CHAOS_SEED"
.venv/bin/pytest -m slow --timeout $((minutes * 60 + 3600)) \
    tests/reliability/test_chaos.py -k by_hand "$@"
echo "== chaos report ($EVALFLEET_CHAOS_REPORT)"
cat "$EVALFLEET_CHAOS_REPORT"
