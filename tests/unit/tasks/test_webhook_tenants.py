"""A tenant's webhooks use its own secrets, hosts and matches, never the fleet's
(tasks.webhooks.config), and the schedule names a tenant's run apart from the fleet's."""

from __future__ import annotations

from evalfleet.tasks.redis_keys import FLEET, Keyspace, run_of, run_ref
from evalfleet.tasks.webhooks.config import MatchHook, TenantHook, WebhookConfig

CONFIG = WebhookConfig(
    allow=("fleet.example",), secrets=("fleet",),
    matches={"m": MatchHook("https://fleet.example/m", ("fleet-m",))},
    tenants={"acme": TenantHook(("acme.example",), ("acme",),
                                {"m": MatchHook("https://acme.example/m")})})


def test_the_fleets_runs_keep_the_fleets_settings() -> None:
    assert CONFIG.secrets_for("m") == ("fleet-m",) and CONFIG.secrets_for("x") == ("fleet",)
    assert CONFIG.url_for(None, "m") == "https://fleet.example/m"
    assert CONFIG.allow_for(None) == ("fleet.example",)


def test_a_tenants_runs_use_only_the_tenants_settings() -> None:
    assert CONFIG.secrets_for("m", "acme") == ("acme",)  # its match has no secret of its own
    assert CONFIG.url_for(None, "m", "acme") == "https://acme.example/m"
    assert CONFIG.allow_for("acme") == ("acme.example",)


def test_a_tenant_the_operator_did_not_name_gets_nothing_of_the_fleets() -> None:
    assert CONFIG.secrets_for("m", "rival") == ()
    assert CONFIG.url_for(None, "m", "rival") is None
    assert CONFIG.allow_for("rival") == ()


def test_a_run_ref_names_the_tenant_and_round_trips() -> None:
    assert run_ref("r1") == "r1" and run_of("r1") == (FLEET, "r1")
    assert run_ref("r1", Keyspace("acme")) == "acme/r1"
    assert run_of("acme/r1") == (Keyspace("acme"), "r1")
