"""Tenants behind real Redis ACLs (issue 47): a tenant's runs go through the fleet into its
own keys, and every verb of the platform's API, pointed at another tenant's data or at
the fleet's own, is refused by Redis."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import redis as redis_lib

from evalfleet.tasks.platform import EvalfleetClient, SubmitError
from evalfleet.tasks.redis_keys import (
    CANCELS_CHANNEL,
    FLEET,
    INTAKE_STREAM,
    LEASE_KEY,
    RESULTS_STREAM,
    SIGNING_KEYS,
    TENANTS_KEY,
    Keyspace,
)
from evalfleet.workers.devtools import sandbox_free


def test_a_tenants_run_is_scored_into_its_own_keys(start_worker: Any, admin: Any,
                                                   tenants: Any) -> None:
    """Submitted with the tenant's credentials, forwarded from its intake, run, published
    in its keys (result, status, match index, stream) and in none of the fleet's; the
    tenant reads it with every reading verb."""
    acme = tenants("acme")
    start_worker("tenants")
    request = {**sandbox_free.request("t"), "match": f"m-{uuid.uuid4().hex[:8]}"}

    acme.client.submit(request)
    result = acme.client.wait(request["run_id"], timeout=60)

    rid, keys = request["run_id"], Keyspace(acme.name)
    assert acme.client.keys == keys
    assert (result.outcome, result.scorecard and result.scorecard.result) == ("scored", "win")
    assert admin.exists(keys.result(rid), keys.status(rid), keys.match(request["match"])) == 3
    assert admin.exists(FLEET.result(rid), FLEET.status(rid)) == 0
    assert acme.client.status(rid).status == "scored"  # type: ignore[union-attr]
    assert [s.run_id for s in acme.client.runs(request["match"])] == [rid]
    read = acme.client.results(group="g", block_ms=100, stop_when_idle=True)
    assert rid in {r.run_id for r in read}


def test_a_tenant_cancels_its_own_runs(admin: Any, tenants: Any) -> None:
    """No worker (a Redis of the test's own): the run waits queued, and its tenant's cancel
    publishes its one result."""
    acme = tenants("acme")
    request = sandbox_free.request("c")
    acme.client.submit(request)

    answer = acme.client.cancel(request["run_id"])

    assert (answer.what, answer.was) == ("cancelled", "queued")
    assert acme.client.result(request["run_id"]).outcome == "cancelled"  # type: ignore[union-attr]


def _verbs(client: EvalfleetClient, run_id: str, match: str) -> dict[str, Callable[[], Any]]:
    """Every verb of the platform's API on one run id and match."""
    return {
        "submit": lambda: client.submit({**sandbox_free.request("x"), "run_id": run_id}),
        "status": lambda: client.status(run_id),
        "result": lambda: client.result(run_id),
        "wait": lambda: client.wait(run_id, timeout=0.5),
        "wait_many": lambda: list(client.wait_many([run_id], timeout=0.5)),
        "runs": lambda: client.runs(match),
        "cancel": lambda: client.cancel(run_id),
        "cancel_match": lambda: client.cancel_match(match),
        "results": lambda: next(client.results(group="spy", block_ms=100,
                                               stop_when_idle=True), None),
    }


def test_every_verb_on_another_tenants_runs_is_refused(admin: Any, tenants: Any) -> None:
    """Rival's run, queued in rival's keys: acme, logged in as itself but pointed at rival's
    keys (or the fleet's own), is refused each verb by Redis; rival's run is untouched."""
    acme, rival = tenants("acme"), tenants("rival")
    request = {**sandbox_free.request("r"), "match": f"m-{uuid.uuid4().hex[:8]}"}
    rival.client.submit(request)
    before = admin.hgetall(Keyspace(rival.name).status(request["run_id"]))

    for target in (rival.name, None):
        spy = EvalfleetClient(acme.url, tenant=target) if target else _fleet_keys(acme.url)
        try:
            for verb, call in _verbs(spy, request["run_id"], request["match"]).items():
                with pytest.raises((redis_lib.exceptions.NoPermissionError, SubmitError),
                                   match=r"(?i)permission|NOPERM"):
                    call()
                    pytest.fail(f"{verb} on {target or 'the fleet'}'s keys was allowed")
        finally:
            spy.close()

    assert admin.hgetall(Keyspace(rival.name).status(request["run_id"])) == before


def _fleet_keys(url: str) -> EvalfleetClient:
    """A client logged in as a tenant but working in the fleet's own keys."""
    client = EvalfleetClient(url)
    client.keys = FLEET
    client.lifecycle = type(client.lifecycle)(client.redis, client.status_ttl_s, FLEET)
    return client


@pytest.mark.parametrize("command", [
    ("LPUSH", "evalfleet.default", "x"),           # the Celery queues
    ("LRANGE", "evalfleet.default", "0", "-1"),
    ("XADD", INTAKE_STREAM, "*", "request", "{}"),  # the fleet's intake
    ("XRANGE", RESULTS_STREAM, "-", "+"),
    ("HGETALL", TENANTS_KEY),                       # every tenant's password hash
    ("HGETALL", SIGNING_KEYS),
    ("SET", "evalfleet:archive:refusal", "x"),     # readable, not writable
    ("KEYS", "*"), ("SCAN", "0"), ("FLUSHALL",), ("CONFIG", "GET", "*"),
    ("ACL", "LIST"), ("ACL", "SETUSER", "evil", "on", "nopass", "~*", "+@all"),
    ("PUBLISH", CANCELS_CHANNEL, "x"), ("SCRIPT", "FLUSH"), ("CLIENT", "LIST"),
    ("CLIENT", "KILL", "TYPE", "normal"), ("REPLICAOF", "127.0.0.1", "1"),
    ("SHUTDOWN", "NOSAVE"), ("FUNCTION", "FLUSH"),
    ("EVAL", "return redis.call('GET', KEYS[1])", "1", "evalfleet:result:x"),
    # admission: the lease, the waiting rooms and requests, in-flight sets, quotas' counts
    ("SET", LEASE_KEY, "me"), ("ZRANGE", "evalfleet:admission:waiting:evalfleet.default:_",
                                "0", "-1"),
    ("HGETALL", "evalfleet:admission:requests:_"), ("DEL", "evalfleet:admission:active"),
    ("ZREM", "evalfleet:admission:in_flight:acme", "x"), ("SET", "evalfleet:slots:w", "999"),
])
def test_a_tenant_cannot_reach_the_fleets_keys(tenants: Any, command: tuple[str, ...]) -> None:
    acme = tenants("acme")
    with pytest.raises(redis_lib.exceptions.NoPermissionError):
        acme.client.redis.execute_command(*command)


def test_a_tenant_hears_no_other_channel(admin: Any, tenants: Any) -> None:
    """Subscribing to the fleet's channels or another tenant's is refused."""
    acme, rival = tenants("acme"), tenants("rival")
    for channel in (FLEET.results_channel, CANCELS_CHANNEL,
                    Keyspace(rival.name).results_channel):
        pubsub = acme.client.redis.pubsub()
        try:
            with pytest.raises(redis_lib.exceptions.NoPermissionError):
                pubsub.subscribe(channel)
                pubsub.get_message(timeout=1)
        finally:
            pubsub.close()


def test_the_tenant_comes_from_the_credentials_not_the_request(start_worker: Any,
                                                               admin: Any,
                                                               tenants: Any) -> None:
    """A request that names another tenant (a field the wire does not know) is refused by
    the client; written to its own intake by hand, it runs as its sender's."""
    acme, rival = tenants("acme"), tenants("rival")
    start_worker("tenants")
    request = sandbox_free.request("f")
    with pytest.raises(ValueError, match="tenant"):
        acme.client.submit({**request, "tenant": rival.name})

    body = {**request, "tenant": rival.name}
    acme.client.redis.xadd(Keyspace(acme.name).intake, {"request": json.dumps(body)})
    result = acme.client.wait(request["run_id"], timeout=60)

    assert result.outcome == "rejected"  # the wire refuses the unknown field
    assert admin.exists(Keyspace(rival.name).result(request["run_id"])) == 0
    assert admin.exists(Keyspace(acme.name).result(request["run_id"])) == 1
