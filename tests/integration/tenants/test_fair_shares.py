"""Admission (issue 48) against a real Redis of the test's own: the intake's forwarder parks
the tenants' runs, the admitter sends them to the Celery queues, and a stand-in for the
workers takes each message from its list and publishes the run's result, as a worker
would. What is asserted is the order in which runs reach the queues: fair shares by weight,
matches in turn, priorities first, quotas that hold or refuse, and nothing lost or sent
twice when the admitter is killed."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from evalfleet.tasks import tenancy
from evalfleet.tasks.admission.admitter import Admitter
from evalfleet.tasks.admission.parking import Parking
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform import AsyncEvalfleetClient
from evalfleet.tasks.platform.intake import IntakeForwarder, sender_app
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.queueing import queue_for, queue_lists
from evalfleet.tasks.redis_keys import ACTIVE_KEY, FLEET, Keyspace, admission_keys
from evalfleet.workers.devtools.local_fleet import RedisServer

QUEUE = queue_for("default")
Ref = tuple[str | None, str]
"""A run as it reached the queue: its tenant and run id."""


@pytest.fixture
def app(server: RedisServer) -> Iterator[Any]:
    sender = sender_app(server.url)
    yield sender
    sender.close()


def request(run_id: str, match: str | None = None, priority: int = 5) -> dict[str, Any]:
    return {"run_id": run_id, "pack": {"slug": "p", "version": {}}, "submission": {},
            "priority": priority, **({"match": match} if match else {})}


def forward(admin: Any, app: Any) -> None:
    """Everything in the intakes parked (or refused)."""
    forwarder = IntakeForwarder(admin, app, "f1", parking=Parking(admin, refresh_s=0.0))
    forwarder.ensure_group()
    while forwarder.forward_once(block_ms=10):
        pass


def take_queued(admin: Any) -> list[Ref]:
    """Every message in the queue's lists, most urgent first, as a worker takes them."""
    taken = []
    for name in queue_lists(QUEUE):
        while (item := admin.rpop(name)) is not None:
            args, kwargs, _ = json.loads(base64.b64decode(json.loads(item)["body"]))
            taken.append((kwargs.get("tenant"), json.loads(args[0])["run_id"]))
    return taken


def finish(admin: Any, refs: list[Ref]) -> None:
    """Publish each run's result, as its worker would."""
    for tenant, run_id in refs:
        keys = Keyspace(tenant)
        assert Publisher(admin, 600, "w").publish(
            RunResult(run_id=run_id, outcome="scored"),
            RunResult(run_id=run_id, outcome="scored").to_json(), keys)


def serve(admin: Any, admitter: Admitter, rounds: int) -> list[Ref]:
    """``rounds`` of: the admitter's step, then every queued run taken and finished."""
    order: list[Ref] = []
    for _ in range(rounds):
        admitter.step()
        taken = take_queued(admin)
        finish(admin, taken)
        order += taken
    return order


def test_a_backlog_does_not_hold_back_another_tenant(admin: Any, app: Any,
                                                      tenants: Any) -> None:
    """A's 300 runs wait before B's 5 arrive; with equal weights, B's are admitted in the
    first rounds, one of A's between each, and A's backlog is admitted in full after."""
    a, b = tenants("a"), tenants("b")
    a.client.submit_batch([request(f"a{i}") for i in range(300)])
    forward(admin, app)
    b.client.submit_batch([request(f"b{i}") for i in range(5)])
    forward(admin, app)

    order = serve(admin, Admitter(admin, app, "adm", queued_per_slot=2), 160)

    firsts = [tenant for tenant, _ in order[:11]]
    assert firsts.count(b.name) == 5 and sorted(order) == sorted(
        [(a.name, f"a{i}") for i in range(300)] + [(b.name, f"b{i}") for i in range(5)])
    assert admin.scard(ACTIVE_KEY) == 0


def test_weights_share_the_workers_3_to_1(admin: Any, app: Any, tenants: Any) -> None:
    """While both wait, a tenant of weight 3 gets three runs admitted for each of a tenant
    of weight 1 (within 10%)."""
    heavy, light = tenants("heavy"), tenants("light")
    tenancy.set_share(admin, heavy.name, weight=3.0)
    for each in (heavy, light):
        each.client.submit_batch([request(f"r{i}") for i in range(300)])
    forward(admin, app)

    order = serve(admin, Admitter(admin, app, "adm", queued_per_slot=2), 100)

    counts = {t.name: sum(1 for tenant, _ in order if tenant == t.name) for t in (heavy, light)}
    assert sum(counts.values()) == 200
    assert 2.7 <= counts[heavy.name] / counts[light.name] <= 3.3, counts


def test_matches_take_turns_and_priorities_lead(admin: Any, app: Any, tenants: Any) -> None:
    """Within a tenant, the most urgent run first; then a match that came late is served in
    turn with a long one, not after it; each match's runs in the order they came."""
    acme = tenants("acme")
    acme.client.submit_batch([request(f"long{i}", "long") for i in range(100)])
    forward(admin, app)
    acme.client.submit_batch([request(f"short{i}", "short") for i in range(4)]
                             + [request("urgent", "late", priority=9)])
    forward(admin, app)

    admitter = Admitter(admin, app, "adm", queued_per_slot=1)
    order = [run_id for _, run_id in serve(admin, admitter, 60)]

    assert order[0] == "urgent"
    assert {f"short{i}" for i in range(4)} <= set(order[:9])
    assert [r for r in order if r.startswith("long")] == [f"long{i}" for i in range(55)]


def test_a_tenant_over_its_quota_waits_and_its_status_says_which(
        admin: Any, app: Any, tenants: Any) -> None:
    """At most 3 of acme's runs in flight: three are admitted, the rest wait with
    ``held: max_in_flight``; as runs end, more are admitted, three at a time at most."""
    acme = tenants("acme")
    tenancy.set_share(admin, acme.name, max_in_flight=3)
    acme.client.submit_batch([request(f"r{i}") for i in range(8)])
    forward(admin, app)
    admitter = Admitter(admin, app, "adm", queued_per_slot=50)

    admitter.step()
    first = take_queued(admin)
    admitter.step()

    assert len(first) == 3 and take_queued(admin) == []
    waiting = acme.client.status("r7")
    assert waiting is not None and (waiting.status, waiting.held) == ("queued", "max_in_flight")
    assert asyncio.run(async_status(acme.url, "r7")) == "max_in_flight"
    finish(admin, first)
    admitter.step()
    assert len(take_queued(admin)) == 3
    assert acme.client.status("r0").held is None  # type: ignore[union-attr]


async def async_status(url: str, run_id: str) -> str | None:
    """What the asyncio client says holds ``run_id``."""
    client = AsyncEvalfleetClient(url)
    try:
        found = await client.status(run_id)
    finally:
        await client.close()
    return None if found is None else found.held


def test_a_rate_quota_admits_so_many_a_minute(admin: Any, app: Any, tenants: Any) -> None:
    """At most 4 runs admitted a minute: 4 this minute, the next 4 once the minute turns."""
    acme = tenants("acme")
    tenancy.set_share(admin, acme.name, max_per_minute=4)
    acme.client.submit_batch([request(f"r{i}") for i in range(10)])
    forward(admin, app)
    now = [1_000_000 * 60.0]
    admitter = Admitter(admin, app, "adm", queued_per_slot=50, clock=lambda: now[0])

    counts = []
    for _ in range(2):
        admitter.step()
        admitter.step()
        counts.append(len(take_queued(admin)))
        assert acme.client.status("r9").held == "max_per_minute"  # type: ignore[union-attr]
        now[0] += 60
    assert counts == [4, 4]


def test_a_tenant_that_refuses_over_quota_rejects_with_the_quota(
        admin: Any, app: Any, tenants: Any) -> None:
    """With ``over_quota: refuse`` and 2 in flight at most, the runs past 2 are published
    ``rejected``, their reason naming the quota; none of them is ever sent."""
    acme = tenants("acme")
    tenancy.set_share(admin, acme.name, max_in_flight=2, over_quota="refuse")
    acme.client.submit_batch([request(f"r{i}") for i in range(5)])
    forward(admin, app)

    refused = [acme.client.result(f"r{i}") for i in range(2, 5)]
    Admitter(admin, app, "adm", queued_per_slot=50).step()

    assert all(r is not None and r.outcome == "rejected" and "max_in_flight" in r.reason
               and f"tenant '{acme.name}'" in r.reason for r in refused)
    assert sorted(run_id for _, run_id in take_queued(admin)) == ["r0", "r1"]


ADMIT = """
import os, signal, sys, redis
from evalfleet.tasks.admission import admitter as module
from evalfleet.tasks.platform.intake import sender_app
url, fault = sys.argv[1], sys.argv[2]
send = module.send_runs

def faulty(app, runs):  # SIGKILL before, halfway through or after a batch is sent
    if fault in ("half", "after"):
        send(app, runs[:len(runs) // 2] if fault == "half" else runs)
    if fault != "none":
        os.kill(os.getpid(), signal.SIGKILL)
    send(app, runs)

module.send_runs = faulty
admitter = module.Admitter(redis.Redis.from_url(url), sender_app(url), "adm",
                           queued_per_slot=400, lease_ms=200)
print("started", flush=True)
while True:
    admitter.step()
"""


def test_an_admitter_killed_mid_admission_loses_nothing_and_sends_nothing_twice(
        admin: Any, app: Any, server: RedisServer, tenants: Any) -> None:
    """Admitters SIGKILLed after taking runs from the rooms and before sending them, halfway
    through sending them, after sending them but before forgetting their requests, and at
    random moments: once one is let run, every run is in the queue exactly once, and
    nothing is left waiting."""
    made = [tenants(p) for p in ("a", "b", "c")]
    names = [t.name for t in made]
    for each in made:
        each.client.submit_batch([request(f"r{i}") for i in range(1000)])
    forward(admin, app)

    queued: list[Ref] = []
    for fault in ("before", "half", "after"):
        _wait_for_death(_start(server.url, fault))
        queued += take_queued(admin)
        if fault == "before":  # taken from the rooms, and killed before it sent any
            assert queued == [] and sum(admin.zcard(admission_keys(Keyspace(n))["in_flight"])
                                        for n in names) > 0
    for pause in (0.2, 0.35):
        admitter = _start(server.url, "none")
        time.sleep(pause)
        _kill(admitter)
        queued += take_queued(admin)
    final = _start(server.url, "none")
    try:
        queued += _taken_until_admitted(admin, names)
    finally:
        _kill(final)
    assert len(queued) == 3000 and sorted(queued) == sorted(
        (name, f"r{i}") for name in names for i in range(1000))


def _start(url: str, fault: str) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", ADMIT, url, fault],
                               stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"started\n"
    return process


def _wait_for_death(process: subprocess.Popen[bytes]) -> None:
    assert process.wait(timeout=60) == -signal.SIGKILL
    assert process.stdout is not None
    process.stdout.close()


def _kill(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert process.stdout is not None
    process.stdout.close()


def _taken_until_admitted(admin: Any, names: list[str]) -> list[Ref]:
    """The queue's runs, taken as a worker would, until none waits to be admitted."""
    taken: list[Ref] = []
    deadline = time.monotonic() + 60
    while any(admin.hlen(admission_keys(Keyspace(n))["requests"]) for n in names) \
            or admin.scard(ACTIVE_KEY):
        assert time.monotonic() < deadline, "runs still waiting"
        taken += take_queued(admin)
        time.sleep(0.05)
    assert admin.hlen(admission_keys(FLEET)["requests"]) == 0
    return taken + take_queued(admin)


def test_a_run_parked_again_by_a_forwarder_that_died_waits_once(admin: Any, app: Any,
                                                                 tenants: Any) -> None:
    """A forwarder killed after parking and before acknowledging its entries: the next one
    reads them again and parks nothing twice (nor a run already sent)."""
    acme = tenants("acme")
    acme.client.submit_batch([request(f"r{i}") for i in range(3)])
    parking = Parking(admin, refresh_s=0.0)
    first = IntakeForwarder(admin, app, "dies", parking=parking)
    first.ensure_group()
    entries = first.intakes.read(">", 10)
    for keys, found in entries:  # parked, never acknowledged: the forwarder is gone
        first._send(keys, [(e, f[b"request"]) for e, f in found])
    Admitter(admin, app, "adm", queued_per_slot=1).step()  # r0 sent meanwhile

    again = IntakeForwarder(admin, app, "next", reclaim_after_ms=0, parking=parking)
    while again.forward_once(block_ms=10):
        pass
    order = serve(admin, Admitter(admin, app, "adm", queued_per_slot=5), 3)

    assert sorted(run_id for _, run_id in order) == ["r0", "r1", "r2"]
    assert admin.get(admission_keys(Keyspace(acme.name))["count"]) == b"0"
