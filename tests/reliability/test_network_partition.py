"""A worker host cut off from Redis by the network, mid-run, and joined again.

The cut-off worker runs as its own host: a network namespace this test creates, joined to
the root namespace by a veth pair with addresses from 10.231.0.0/16 that exist only on that
pair. Redis listens on loopback and on the host side of the veth; dropping the host side of
the link partitions the worker without closing its TCP connections. Docker is reached over
its unix socket, which no network namespace affects.
"""

from __future__ import annotations

import signal
import time

import redis
from fleet_support import Host, NamespacedNode, PrivateFleet, run_request, wait_for

from evalfleet.workers.devtools.local_fleet import worker_env


def test_partitioned_worker_is_replaced_then_rejoins(private_fleet: PrivateFleet,
                                                     worker_host: Host) -> None:
    """Mid-run, the worker's link to Redis drops. Another worker gets the run after the
    visibility timeout and publishes it; when the link returns the cut-off worker's own
    result is a duplicate, and it resumes consuming."""
    server = redis.Redis(port=private_fleet.redis.port)
    server.config_set("bind", f"127.0.0.1 {worker_host.host_addr}")
    server.config_set("protected-mode", "no")
    settings = {"visibility_timeout_s": "5", "fleet": private_fleet.label,
                "retry_backoff_s": "0.2", "heartbeat_interval_s": "0.5",
                "heartbeat_ttl_s": "3", "reaper_interval_s": "1"}
    url = f"redis://{worker_host.host_addr}:{private_fleet.redis.port}/0"
    workdir = private_fleet.starter.workdir
    cut = NamespacedNode("cut", worker_env(url, "cut-off", workdir, metrics_port="0",
                                           **settings), workdir / "cut-off.log", 0)
    cut.netns = worker_host.netns
    private_fleet.starter.nodes.append(cut)  # stopped with the others
    cut.start()
    client = private_fleet.client()
    request = run_request("partition", "sleep 6; echo hi")
    client.submit(request)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": request.run_id}), 30,
             "the cut-off worker did not start the run")

    worker_host.link("down")
    try:
        survivor = private_fleet.start("survivor", **settings)
        result = client.wait(request.run_id, timeout=60)
        assert (result.outcome, result.worker) == ("scored", survivor.worker_id)
        time.sleep(3)  # the cut-off copy finishes meanwhile, unable to publish
    finally:
        worker_host.link("up")
    survivor.stop()

    later = run_request("rejoined")
    client.submit(later)
    rejoined = client.wait(later.run_id, timeout=90)

    assert (rejoined.outcome, rejoined.worker) == ("scored", "cut-off")
    assert private_fleet.results_streamed({request.run_id, later.run_id}) == {
        request.run_id: 1, later.run_id: 1}
    assert cut.alive
    cut.stop(signal.SIGTERM)
