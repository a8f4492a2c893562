"""Publication: exactly one result per run id, however many times the run executes.

One Lua script does all three steps atomically, so a worker that dies half-way cannot
leave a result key without its stream entry:

1. ``SET evalfleet:result:<run_id> <json> NX EX <ttl>`` — only the first writer wins;
2. ``XADD evalfleet:results MAXLEN ~ <n> * run_id <id> result <json>``;
3. ``PUBLISH evalfleet:results <run_id>``.

A later writer (a redelivered run) publishes nothing and learns it was a duplicate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RESULT_KEY = "evalfleet:result:{run_id}"
RESULTS_STREAM = "evalfleet:results"
RESULTS_CHANNEL = "evalfleet:results"

_PUBLISH = """
if redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[3]) then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'run_id', ARGV[1], 'result', ARGV[2])
  redis.call('PUBLISH', ARGV[5], ARGV[1])
  return 1
end
return 0
"""


def result_key(run_id: str) -> str:
    return RESULT_KEY.format(run_id=run_id)


@dataclass
class Publisher:
    """Publishes results through one Redis connection (``redis.Redis``)."""

    redis: Any
    ttl_s: int = 7 * 24 * 3600
    stream_maxlen: int = 100_000

    def __post_init__(self) -> None:
        self._script = self.redis.register_script(_PUBLISH)

    def publish(self, run_id: str, result_json: str) -> bool:
        """Publish once; False when a result for ``run_id`` already exists (a duplicate)."""
        keys = [result_key(run_id), RESULTS_STREAM]
        args = [run_id, result_json, self.ttl_s, self.stream_maxlen, RESULTS_CHANNEL]
        return bool(self._script(keys=keys, args=args))

    def published(self, run_id: str) -> bool:
        """Whether a result for ``run_id`` exists already."""
        return bool(self.redis.exists(result_key(run_id)))
