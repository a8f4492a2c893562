#!/usr/bin/env bash
# The soaks CI runs after the README test command (.ci/run): the 200-run soak across 4
# processes (tests/reliability/test_soak.py) and the 2-minute chaos soak, runs and faults on
# a private fleet with every kind of fault met (tests/reliability/test_chaos.py), side by
# side. They are outside `scripts/test.sh` to keep that command within its 15 minutes; the
# long ones are `bash scripts/soak.sh` and `bash scripts/chaos.sh`. Needs root (a network
# namespace). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/pytest -m slow -n 2 tests/reliability/test_chaos.py tests/reliability/test_soak.py \
    -k "soak_2_minutes or soak_200_runs" "$@"
