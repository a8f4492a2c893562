"""The Docker engine becomes unavailable during runs — without touching the real dockerd.

The worker reaches the engine through a unix-socket forwarder owned by the test; cutting
it closes every open connection and refuses new ones, as an engine restart would.
"""

from __future__ import annotations

import time

from fleet_support import PrivateFleet, SocketProxy, run_request, wait_for


def test_engine_outage_is_retried_never_scored_against_the_candidate(
        private_fleet: PrivateFleet, engine_proxy: SocketProxy) -> None:
    """The engine disappears mid-run and for a few seconds: the affected runs end up scored
    on a later delivery (infra errors are retried), never as a candidate failure."""
    node = private_fleet.start("proxied", docker_url=f"unix://{engine_proxy.path}",
                               delivery_cap="6", retry_backoff_s="0.5")
    client = private_fleet.client()
    in_flight = run_request("outage", "sleep 3; echo hi")
    client.submit(in_flight)
    wait_for(lambda: private_fleet.containers(**{"evalfleet.run_id": in_flight.run_id}), 30,
             "the run did not start")
    engine_proxy.cut()
    waiting = run_request("outage-queued")
    client.submit(waiting)
    time.sleep(4)
    engine_proxy.restore()

    results = [client.wait(r.run_id, timeout=120) for r in (in_flight, waiting)]

    assert [r.outcome for r in results] == ["scored", "scored"]
    assert [r.scorecard.score for r in results if r.scorecard] == [1000, 1000]
    assert all(r.attempt > 1 for r in results)  # each hit the outage and was retried
    assert node.alive
    for run_id in (in_flight.run_id, waiting.run_id):  # removals failed in the outage: redone
        wait_for(lambda r=run_id: not private_fleet.containers(**{"evalfleet.run_id": r}),
                 30, f"a sandbox of {run_id} was not removed")


def test_engine_gone_for_good_ends_as_infra_error(private_fleet: PrivateFleet,
                                                 engine_proxy: SocketProxy) -> None:
    """An engine that stays away: retried up to the cap, then ``infra_error`` — no
    scorecard, so nothing counts against the candidate."""
    private_fleet.start("proxied", docker_url=f"unix://{engine_proxy.path}",
                        delivery_cap="3")
    client = private_fleet.client()
    engine_proxy.cut()
    request = run_request("engine-gone")
    client.submit(request)

    result = client.wait(request.run_id, timeout=60)

    assert (result.outcome, result.scorecard, result.attempt) == ("infra_error", None, 3)
    assert "SandboxUnavailable" in result.reason
