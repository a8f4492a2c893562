#!/usr/bin/env bash
# A run's whole life with nothing but redis-cli (docs/platform.md): submit two runs of one
# match through the intake stream, cancel one, follow the other to its result. The fleet
# must serve the registered pack fizzbuzz-coding (EVALFLEET_PACKS_DIR=examples/packs).
#   REDIS_URL=redis://localhost:6379/0 bash docs/examples/plain-redis.sh
set -euo pipefail
cli() { redis-cli -u "${REDIS_URL:-redis://localhost:6379/0}" --no-raw "$@" | tr -d '"'; }
raw() { redis-cli -u "${REDIS_URL:-redis://localhost:6379/0}" --raw "$@"; }

match="demo-$(date +%s)-$$"
submission='{"files": {"fizzbuzz.py": "def fizzbuzz(n):\n    return [str(i) for i in range(1, n + 1)]\n"}}'
for run in a b; do
  cli XADD evalfleet:intake '*' request \
    "{\"run_id\": \"$match-$run\", \"pack_ref\": \"fizzbuzz-coding\", \"match\": \"$match\", \"submission\": $submission}" >/dev/null
done
cli XADD evalfleet:intake "*" cancel "$match-b" >/dev/null   # queued or running: it ends cancelled

# The status record: queued, running (which worker), then how it ended.
for _ in $(seq 1 600); do
  status=$(raw HGET "evalfleet:status:$match-a" status)
  case "$status" in queued|running|"") sleep 0.2 ;; *) break ;; esac
done
echo "run a: $status"
echo "run b: $(raw HGET "evalfleet:status:$match-b" status)"

# The result itself, and the match's runs in the order they were submitted.
raw GET "evalfleet:result:$match-a" | python3 -c \
  'import json, sys; r = json.load(sys.stdin); print("score:", r["scorecard"]["score"], r["scorecard"]["result"])'
echo "runs: $(raw ZRANGE "evalfleet:match:$match" 0 -1 | tr '\n' ' ')"
