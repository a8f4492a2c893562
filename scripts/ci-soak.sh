#!/usr/bin/env bash
# The 2-minute chaos soak CI runs after the README test command (.ci/run): runs and faults
# on a private fleet, every kind of fault met (tests/reliability/test_chaos.py). It is
# outside `scripts/test.sh` to keep that command within its 15 minutes; the 30-minute soak
# is `bash scripts/chaos.sh`. Needs root (a network namespace). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/pytest -m slow tests/reliability/test_chaos.py -k soak_2_minutes "$@"
