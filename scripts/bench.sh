#!/usr/bin/env bash
# Every performance case of issue 7 (see BENCHMARKS.md): `bash scripts/bench.sh [--quick]
# [CASE ...] [--out FILE]`. Needs the Docker engine, redis-server and the local images
# (`bash scripts/setup.sh` provides all three). Benchmarks are not tests: nothing here
# asserts a time; each case prints evalfleet's figure, its baseline and the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m bench "$@"
