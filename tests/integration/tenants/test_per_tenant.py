"""A tenant's archive and webhooks (issue 47, item 4), against a real Redis of the test's
own, a local-directory archive and a real HTTP receiver on loopback: a tenant's results
go under its own archive prefix and are delivered with its own secrets to its own hosts
only — never with the fleet's, never to another tenant's."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from webhook_receiver import Receiver

from evalfleet.tasks import tenancy
from evalfleet.tasks.archive import Archive, StoreError, layout, open_store
from evalfleet.tasks.archive.archiver import Archiver
from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import FLEET, Keyspace
from evalfleet.tasks.status import RunStatus
from evalfleet.tasks.webhooks.config import TenantHook, WebhookConfig
from evalfleet.tasks.webhooks.dispatcher import Dispatcher
from evalfleet.tasks.webhooks.signature import HEADER, verify
from evalfleet.workers.devtools.local_fleet import RedisServer
from evalfleet.workers.devtools.object_store import tenant_keys


def publish(admin: Any, run_id: str, keys: Keyspace, callback: str | None = None) -> bytes:
    """Queue ``run_id`` in ``keys`` (with its callback) and publish its result there."""
    Lifecycle(admin, 600, keys).queue(run_id, None, None, callback_url=callback)
    result = RunResult(run_id=run_id, outcome="scored")
    body = result.to_json()
    assert Publisher(admin, 600, "w").publish(result, body, keys)
    return body.encode()


def test_a_tenants_results_are_archived_under_its_own_prefix(admin: Any, server: RedisServer,
                                                             tmp_path: Path) -> None:
    """The archive on, then a tenant added: its result is kept until archived, written
    under ``tenants/<name>/`` only, and read back by the tenant's client from that
    prefix once Redis has forgotten it."""
    root = tmp_path / "archive"
    archive = Archive.at(f"file://{root}")
    assert archive is not None
    archiver = Archiver(admin, archive, consumer="a1", ttl_s=600)
    archiver.ensure_group()
    tenant, password = tenancy.add(admin, [admin], "acme")
    body = publish(admin, "same-id", tenant.keys)
    publish(admin, "same-id", FLEET)  # the fleet's own run of the same id: another run

    assert admin.ttl(tenant.keys.result("same-id")) == -1  # kept until archived
    while archiver.step(block_ms=10):
        pass

    assert (root / "tenants" / "acme" / "runs" / "same-id.json.gz").is_file()
    assert (root / "runs" / "same-id.json.gz").is_file()
    assert 0 < admin.ttl(tenant.keys.result("same-id")) <= 600
    admin.delete(tenant.keys.result("same-id"), tenant.keys.status("same-id"))
    url = f"redis://{tenant.user}:{password}@127.0.0.1:{server.port}/0"
    client = EvalfleetClient(url, archive_url=f"file://{root}/tenants/acme")
    try:
        found = client.result("same-id")
    finally:
        client.close()
    assert found is not None and found.to_json().encode() == body


def test_a_tenant_with_its_own_credentials_is_archived_with_them(
        admin: Any, server: RedisServer, seaweedfs: Any) -> None:
    """acme and globex have stores of their own on a real S3 server, whose keys reach only
    their own paths: each tenant's run is written there (not under the fleet's prefix),
    read back by its client with its keys, and acme's keys read, write and list nothing
    of globex's or of the fleet's."""
    fleet_url, run_id = seaweedfs.url(f"fleet-{uuid.uuid4().hex[:8]}"), uuid.uuid4().hex
    own = {name: seaweedfs.tenant_url(name) for name in ("acme", "globex")}
    archive = Archive.at(fleet_url, own)
    assert archive is not None
    archiver = Archiver(admin, archive, consumer="a1", ttl_s=600)
    archiver.ensure_group()
    added = {name: tenancy.add(admin, [admin], name) for name in own}
    bodies = {name: publish(admin, run_id, tenant.keys) for name, (tenant, _) in added.items()}
    publish(admin, run_id, FLEET)
    while archiver.step(block_ms=10):
        pass

    fleet = Archive.at(fleet_url)
    assert fleet is not None and fleet.run(run_id) is not None
    assert [fleet.of_tenant(name).run(run_id) for name in own] == [None, None]
    acme, password = added["acme"]
    admin.delete(acme.keys.result(run_id), acme.keys.status(run_id))
    client = EvalfleetClient(f"redis://{acme.user}:{password}@127.0.0.1:{server.port}/0",
                             archive_url=own["acme"])
    try:
        found = client.result(run_id)
    finally:
        client.close()
    assert found is not None and found.to_json().encode() == bodies["acme"]
    mine = open_store(own["acme"])
    assert mine is not None and layout.run_key(run_id) in mine.keys(layout.RUNS)
    theirs = Archive.at(own["globex"])
    assert theirs is not None and theirs.result(run_id) is not None
    for elsewhere in (own["globex"], fleet_url):
        assert_refused(with_keys(elsewhere, "acme"), run_id)


def with_keys(url: str, tenant: str) -> str:
    """``url`` with ``tenant``'s keys in place of its own."""
    parts = urlsplit(url)
    key, secret = tenant_keys(tenant)
    return urlunsplit(parts._replace(netloc=f"{key}:{secret}@{parts.hostname}"))


def assert_refused(url: str, run_id: str) -> None:
    """Every verb of the store at ``url`` with acme's keys is refused."""
    store = open_store(url)
    assert store is not None
    with pytest.raises(StoreError):
        store.get(layout.run_key(run_id))
    with pytest.raises(StoreError):
        store.put(layout.run_key(run_id), b"forged")
    with pytest.raises(StoreError):
        list(store.keys(""))


def config(port: int) -> WebhookConfig:
    """The fleet's webhooks to one host with its secret; acme's to another port with its
    own; rival named with no secret."""
    return WebhookConfig(allow=(f"127.0.0.1:{port + 1}",), networks=("127.0.0.0/8",),
                         secrets=("fleet-secret",), timeout_s=0.5, first_retry_s=0.05,
                         max_retry_s=0.1, give_up_after_s=1.0,
                         tenants={"acme": TenantHook(allow=(f"127.0.0.1:{port}",),
                                                     secrets=("acme-secret",)),
                                  "rival": TenantHook(allow=(f"127.0.0.1:{port}",))})


def drain(sender: Dispatcher, admin: Any, refs: list[tuple[Keyspace, str]]) -> None:
    for _ in range(400):
        sender.hear(block_ms=10)
        sender.send_due()
        states = [admin.hget(keys.status(rid), "webhook") for keys, rid in refs]
        if all(s in (b"delivered", b"failed") for s in states):
            return
    pytest.fail(f"deliveries not done: {states}")


def test_a_tenants_runs_are_delivered_with_its_secrets_to_its_hosts(admin: Any) -> None:
    """acme's run goes to acme's host signed with acme's secret (not the fleet's); a run of
    acme's naming the fleet's host is refused; rival, with no secret, sends nothing; the
    same run id in two tenants is two deliveries."""
    acme, rival = Keyspace("acme"), Keyspace("rival")
    for name in ("acme", "rival"):
        tenancy.add(admin, [admin], name)
    with Receiver() as receiver, Receiver() as elsewhere:
        sender = Dispatcher(admin, config(receiver.port), consumer="d1", refresh_s=0.0)
        sender.ensure_group()
        assert elsewhere.port  # (the fleet's host is port + 1 only by name)
        body = publish(admin, "r1", acme, receiver.url("/acme"))
        publish(admin, "r2", acme, f"http://127.0.0.1:{receiver.port + 1}/fleet")
        publish(admin, "r1", rival, receiver.url("/rival"))

        drain(sender, admin, [(acme, "r1"), (acme, "r2"), (rival, "r1")])

    (got,) = receiver.deliveries
    assert (got.path, got.body) == ("/acme", body)
    assert verify(got.body, got.headers[HEADER], "acme-secret")
    assert not verify(got.body, got.headers[HEADER], "fleet-secret")
    statuses = {(k.tenant, rid): RunStatus.from_record(rid, admin.hgetall(k.status(rid)))
                for k, rid in [(acme, "r2"), (rival, "r1")]}
    refused = {ref: s.webhook.attempts[0].answer for ref, s in statuses.items()
               if s is not None and s.webhook is not None}
    assert "refused" in refused[("acme", "r2")] and "allow" in refused[("acme", "r2")]
    assert "no signing secret" in refused[("rival", "r1")]
