#!/usr/bin/env bash
# The main job: set everything up, then run every example pack's passing and failing
# submission through a live local fleet (a private Redis unless EVALFLEET_REDIS_URL is set,
# two worker nodes, real Docker sandboxes) and print the scorecards. Leaves nothing running;
# exits 0 only when every run was scored.
#
#   bash scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/evalfleet demo "$@"
