"""``evalfleet rescore --stream`` reads what the fleet publishes, from a real Redis.

Found by a red-team pass: the reader took each result from its stream entry, which names
the run and holds no result (the result is its key's); every ``--stream`` rescore raised
on the first entry. The unit test's stream stub had invented the field."""

from __future__ import annotations

import uuid
from typing import Any

import redis as redis_lib

from evalfleet.tasks.evaluation.rescoring import stream_results
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import result_key


def test_the_stream_gives_back_the_published_results(redis_server: Any) -> None:
    client = redis_lib.Redis.from_url(redis_server.url)
    try:
        publisher = Publisher(client, ttl_s=600)
        mine = [RunResult(run_id=f"rescore-{uuid.uuid4().hex[:12]}", outcome="scored",
                          reason=f"run {i}") for i in range(3)]
        for result in mine:
            assert publisher.publish(result, result.to_json())
        client.delete(result_key(mine[1].run_id))  # expired since its entry
        read = {r.run_id: r for r in stream_results(client, batch=2)}
    finally:
        client.close()
    assert [r.run_id in read for r in mine] == [True, False, True]  # other tests' too
    assert read[mine[2].run_id] == mine[2]
