#!/usr/bin/env bash
# The whole test suite, as CI runs it: setup, lint, types, then every pytest lane CI runs
# (unit, contract, integration), side by side on both cores, in at most 15 minutes. Extra arguments go to pytest. The long soaks are separate:
# `bash scripts/soak.sh` (1,000 runs), `bash scripts/chaos.sh` (30 minutes of faults) and
# `bash scripts/ci-soak.sh` (2 minutes of them, which .ci/run runs after this command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PY=.venv/bin
echo "== ruff";  $PY/ruff check evalfleet/__init__.py scoring sandbox tasks workers tests bench
echo "== mypy";  $PY/mypy
echo "== pytest"
# Every lane at once on both cores (pytest-xdist): the longest tests start first and the
# unit tests fill the gaps (tests/conftest.py, START_ORDER); a module with module-scoped
# fixtures (a compose stack, a fleet) stays on one worker (--dist loadgroup). Three
# workers on two cores: much of the integration lane waits (on a fleet, a timeout, an
# engine), and a third worker fills that time (pytest 11 min against 14 with two).
# pytest exits 5 when it collects nothing; `set -e` turns that into a failure, as it must.
# --durations: the slowest tests in every run's log, to keep the 15 minutes in view.
$PY/pytest -m "not slow and not reference" -n "${EVALFLEET_TEST_WORKERS:-3}" \
    --dist loadgroup --no-loadscope-reorder --durations=25 "$@"
