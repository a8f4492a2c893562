"""The object store dies under load and comes back: nothing is lost, nothing is doubled.

Two worker nodes archive to a real S3 server (SeaweedFS, the session's) while runs stream
through them; the store is SIGKILLed mid-way and started again on the same directory some
seconds later. Every result must end in the archive exactly once (one object per run, no
other), byte for byte what was published; the workers must have seen the outage (failed
writes counted) and every result must have its TTL once archived.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from fleet_support import PrivateFleet, metric, run_request, wait_for

from evalfleet.tasks.archive import Archive, layout
from evalfleet.tasks.archive.backlog import archive_backlog
from evalfleet.tasks.redis_keys import result_key

#: Seconds the store stays dead while runs go on being published.
OUTAGE_S = 8.0


def test_the_store_killed_and_restarted_under_load_loses_and_doubles_nothing(
        private_fleet: PrivateFleet, seaweedfs: Any) -> None:
    url = seaweedfs.url(f"outage-{uuid.uuid4().hex[:8]}")
    nodes = [private_fleet.start("arch", ["-c", "2"], archive__url=url) for _ in range(2)]
    client = private_fleet.client()
    archive = Archive.at(url)
    assert archive is not None
    first = [run_request("before") for _ in range(12)]
    client.submit_many(first)
    wait_for(lambda: _archived(archive) >= 3, 120, "some results archived")

    seaweedfs.kill()
    during = [run_request("during") for _ in range(12)]
    client.submit_many(during)
    time.sleep(OUTAGE_S)
    seaweedfs.start()
    after = [run_request("after") for _ in range(6)]
    client.submit_many(after)

    runs = first + during + after
    results = [client.wait(r.run_id, timeout=180) for r in runs]
    wait_for(lambda: archive_backlog(client.redis) == 0, 180, "the archive caught up")
    assert [r.outcome for r in results] == ["scored"] * len(runs)
    assert sorted(archive.store.keys(layout.RUNS)) == sorted(
        layout.run_key(r.run_id) for r in runs)
    for run in runs:
        published = client.redis.get(result_key(run.run_id))
        archived = archive.run(run.run_id)
        assert archived is not None and archived.body == published
        assert client.redis.ttl(result_key(run.run_id)) > 0
    assert sum(metric(n, "evalfleet_archive_failures_total") for n in nodes) > 0
    assert sum(metric(n, "evalfleet_archive_writes_total") for n in nodes) >= len(runs)


def _archived(archive: Archive) -> int:
    try:
        return sum(1 for _ in archive.store.keys(layout.RUNS))
    except Exception:  # the store is starting
        return 0
