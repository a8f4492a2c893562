"""Tenants' names, keys and ACL rules (tasks.tenancy, tasks.redis_keys.Keyspace)."""

from __future__ import annotations

import pytest
import redis

from evalfleet.tasks import redis_keys, tenancy
from evalfleet.tasks.redis_keys import FLEET, Keyspace


def test_the_fleets_own_keys_are_the_layout_without_tenants() -> None:
    assert (FLEET.result("r"), FLEET.status("r"), FLEET.match("m"), FLEET.deliveries("r")) == (
        redis_keys.result_key("r"), redis_keys.status_key("r"), redis_keys.match_key("m"),
        redis_keys.deliveries_key("r"))
    assert (FLEET.intake, FLEET.results_stream, FLEET.results_channel,
            FLEET.cancels_channel) == (redis_keys.INTAKE_STREAM, redis_keys.RESULTS_STREAM,
                                       redis_keys.RESULTS_CHANNEL, redis_keys.CANCELS_CHANNEL)


def test_a_tenants_keys_all_start_with_its_prefix() -> None:
    keys = Keyspace("acme")
    every = [keys.result("r"), keys.status("r"), keys.match("m"), keys.deliveries("r"),
             keys.intake, keys.results_stream, keys.results_channel, keys.cancels_channel]
    assert all(k.startswith("evalfleet:t:acme:") for k in every)
    assert len(set(every)) == len(every) - 1  # the results stream and channel share a name


@pytest.mark.parametrize("name", ["", "Acme", "a" * 33, "-acme", "ac me", "a:b", "a*"])
def test_a_name_that_cannot_name_keys_is_refused(name: str) -> None:
    with pytest.raises(tenancy.TenantError, match="tenant name"):
        tenancy.checked_name(name)


def test_the_rules_reach_only_the_tenants_prefix() -> None:
    tenant = tenancy.Tenant("acme", tenancy.user_of("acme"), 0.0, tenancy.digest("pw"))
    rules = tenancy.acl_rules(tenant)
    assert rules[:3] == ["reset", "on", f"#{tenancy.digest('pw')}"]
    patterns = [r for r in rules if r[0] in "~&%"]
    assert patterns == ["~evalfleet:t:acme:*", "%R~evalfleet:archive:refusal",
                        "&evalfleet:t:acme:*"]
    assert "-@all" in rules and not any(r in rules for r in ("+@all", "allkeys", "allchannels"))


def test_a_client_takes_its_tenant_from_its_user() -> None:
    tenant_url = "redis://evalfleet-tenant-acme:pw@127.0.0.1:1/0"
    assert tenancy.keys_of(redis.Redis.from_url(tenant_url)) == Keyspace("acme")
    assert tenancy.keys_of(redis.Redis.from_url("redis://ops:pw@127.0.0.1:1/0")) == FLEET
    assert tenancy.keys_of(redis.Redis.from_url("redis://127.0.0.1:1/0"), "b") == Keyspace("b")
    with pytest.raises(tenancy.TenantError):
        tenancy.keys_of(redis.Redis.from_url("redis://127.0.0.1:1/0"), "B!")


def test_a_password_is_kept_as_its_hash_only() -> None:
    tenant = tenancy.Tenant("acme", "evalfleet-tenant-acme", 1.0, tenancy.digest("secret"))
    assert "secret" not in tenant.to_json()
    assert tenancy.Tenant.from_json(tenant.to_json()) == tenant
