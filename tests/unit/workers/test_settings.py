"""Settings: EVALFLEET_* variables, nesting, and what they become for the pipeline."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from evalfleet.workers.settings import Settings

MiB = 1024 * 1024


def test_nested_profile_settings_come_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVALFLEET_PROFILES__DEFAULT__MEMORY_MB`` reaches the default profile's ceiling."""
    monkeypatch.setenv("EVALFLEET_PROFILES", '{"default": {"memory_mb": 1024, "pool_size": 2}}')
    monkeypatch.setenv("EVALFLEET_QUEUES", '["default", "gpu"]')

    settings = Settings()
    bounds = settings.pipeline_config().profiles["default"]

    assert bounds.profile.limits.memory_bytes == 1024 * MiB
    assert settings.profiles["default"].pool_size == 2
    assert settings.queues == ["default", "gpu"]


def test_the_tree_bounds_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVALFLEET_PROFILES__DEFAULT__TREE_DEPTH`` and ``__TREE_ENTRIES`` reach the limits
    the sandbox's listings and the evaluator's preparation stop at."""
    monkeypatch.setenv("EVALFLEET_PROFILES__DEFAULT__TREE_DEPTH", "12")
    monkeypatch.setenv("EVALFLEET_PROFILES__DEFAULT__TREE_ENTRIES", "900")

    limits = Settings().pipeline_config().profiles["default"].profile.limits

    assert (limits.tree_depth, limits.tree_entries) == (12, 900)


def test_bad_values_fail_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A nonsensical value is an error at start-up, naming the setting."""
    monkeypatch.setenv("EVALFLEET_DELIVERY_CAP", "0")

    with pytest.raises(ValueError, match="delivery_cap"):
        Settings()


@pytest.mark.parametrize(("a", "b", "same"), [
    ("redis://:secret@redis:6379/0", "redis://:other@redis:6379/0", True),
    ("redis://redis:6379/0", "redis://redis:6379/1", False),
    ("redis://redis-a:6379/0", "redis://redis-b:6379/0", False),
])
def test_the_fleet_label_follows_the_shared_redis_not_its_password(a: str, b: str,
                                                                   same: bool) -> None:
    """Workers sharing a Redis share a fleet label; the label never contains a secret."""
    first, second = Settings(redis_url=a).fleet_label, Settings(redis_url=b).fleet_label

    assert (first == second) is same
    assert "secret" not in first


def test_an_explicit_fleet_name_wins() -> None:
    """``EVALFLEET_FLEET`` names the fleet explicitly."""
    assert Settings(fleet="blue").fleet_label == "blue"


class _Redis:
    """SET NX / GET over a dict (two stacks = two of these)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    def set(self, key: str, value: str, nx: bool = False) -> None:
        if not (nx and key in self.data):
            self.data[key] = value.encode()

    def get(self, key: str) -> bytes | None:
        return self.data.get(key)


def test_workers_of_one_redis_share_a_stored_fleet_id_and_stacks_do_not() -> None:
    """Unset, the fleet is the id stored once in the shared Redis: same Redis, same id;
    two stacks whose Redis URLs read the same still get different ids."""
    from evalfleet.workers.worker import resolve_fleet

    stack_a, stack_b = _Redis(), _Redis()
    url = "redis://redis:6379/0"

    first = resolve_fleet(Settings(redis_url=url), stack_a)
    second = resolve_fleet(Settings(redis_url=url), stack_a)
    other = resolve_fleet(Settings(redis_url=url), stack_b)
    named = resolve_fleet(Settings(redis_url=url, fleet="blue"), stack_b)

    assert first == second != other
    assert named == "blue"


def test_the_preflight_requirement_comes_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``EVALFLEET_PREFLIGHT__MODE`` and ``__SECTIONS`` build the worker's gate; off (the
    default) builds none; an unknown mode fails at start-up."""
    from evalfleet.workers.worker import preflight_gate

    assert preflight_gate(Settings(), redis=None, factory=None) is None
    monkeypatch.setenv("EVALFLEET_PREFLIGHT__MODE", "require")
    monkeypatch.setenv("EVALFLEET_PREFLIGHT__SECTIONS", '["forgeries"]')
    gate = preflight_gate(Settings(), redis=None, factory=None)

    assert (gate.mode, gate.sections) == ("require", ("forgeries",))
    monkeypatch.setenv("EVALFLEET_PREFLIGHT__MODE", "maybe")
    with pytest.raises(ValueError, match=r"preflight\.mode"):
        Settings()


class _FullRedis(_Redis):
    """A Redis at maxmemory: reads work, writes are refused."""

    def set(self, key: str, value: str, nx: bool = False) -> None:
        from redis.exceptions import OutOfMemoryError

        raise OutOfMemoryError("command not allowed when used memory > 'maxmemory'.")


def test_a_worker_started_while_redis_is_full_adopts_the_stored_fleet_id() -> None:
    """The id is read before any write: a full Redis, which refuses the SET, still gives a
    new worker its fleet's id (not a name of its own, under which the fleet's reapers would
    not see its sandboxes)."""
    from evalfleet.workers.worker import resolve_fleet

    full = _FullRedis()
    full.data["evalfleet:fleet"] = b"fleet-0123456789ab"

    assert resolve_fleet(Settings(redis_url="redis://redis:6379/0"), full) == "fleet-0123456789ab"


def test_a_reusing_profile_keeps_a_sandbox_to_reuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """``reuse_runs`` reaches the profile; a pool of at least one sandbox comes with it."""
    monkeypatch.setenv("EVALFLEET_PROFILES", '{"default": {"reuse_runs": 50}, '
                                             '"other": {"pool_size": 3}}')
    settings = Settings()
    assert settings.pipeline_config().profiles["default"].profile.reuse_runs == 50
    assert settings.profiles["default"].warm_sandboxes == 1
    assert settings.profiles["other"].warm_sandboxes == 3
    assert settings.pipeline_config().profiles["other"].profile.reuse_runs == 1
    monkeypatch.setenv("EVALFLEET_PROFILES", '{"default": {"reuse_runs": 0}}')
    with pytest.raises(ValueError, match="reuse_runs"):
        Settings()


def test_webhook_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Comma-separated lists, per-match JSON; secrets never in the config's repr."""
    monkeypatch.setenv("EVALFLEET_WEBHOOKS__ALLOW", "hooks.example.com, 10.0.0.5:8443")
    monkeypatch.setenv("EVALFLEET_WEBHOOKS__NETWORKS", "10.0.0.0/24")
    monkeypatch.setenv("EVALFLEET_WEBHOOKS__SECRETS", "new,old")
    monkeypatch.setenv("EVALFLEET_WEBHOOKS__MATCHES",
                       '{"m1": {"url": "https://m1.example/in", "secrets": ["m1-secret"]}}')
    monkeypatch.setenv("EVALFLEET_WEBHOOKS__GIVE_UP_AFTER_S", "600")

    config = Settings().webhooks.config()

    assert (config.allow, config.networks) == (("hooks.example.com", "10.0.0.5:8443"),
                                               ("10.0.0.0/24",))
    assert (config.secrets_for(None), config.secrets_for("m1")) == (("new", "old"),
                                                                    ("m1-secret",))
    assert config.url_for(None, "m1") == "https://m1.example/in"
    assert config.url_for("https://own.example/", "m1") == "https://own.example/"
    assert config.give_up_after_s == 600 and "new" not in repr(config)


@pytest.mark.parametrize(("name", "value"), [
    ("EVALFLEET_WEBHOOKS__ALLOW", ":8080"), ("EVALFLEET_WEBHOOKS__NETWORKS", "10.0.0.0/99"),
    ("EVALFLEET_WEBHOOKS__MATCHES", '{"m1": {"url": "ftp://x/"}}')])
def test_bad_webhook_settings_fail_at_start(monkeypatch: pytest.MonkeyPatch, name: str,
                                            value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError):
        Settings()


def test_tenants_with_their_own_archive_from_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A tenant's own archive URL is read from JSON; a tenant left out has none."""
    monkeypatch.setenv("EVALFLEET_ARCHIVE__TENANTS",
                       '{"acme": "s3://k:s@acme-bucket/runs?endpoint=http://127.0.0.1:8333"}')
    assert Settings().archive.tenants == {
        "acme": "s3://k:s@acme-bucket/runs?endpoint=http://127.0.0.1:8333"}


@pytest.mark.parametrize(("value", "problem"), [
    ('{"acme": "none"}', "tenant 'acme': the archive URL's scheme"),
    ('{"acme": "ftp://x/y"}', "tenant 'acme': the archive URL's scheme"),
    ('{"Bad Name": "file:///x"}', "tenant name")])
def test_a_bad_tenant_archive_fails_at_start(monkeypatch: pytest.MonkeyPatch, value: str,
                                             problem: str) -> None:
    monkeypatch.setenv("EVALFLEET_ARCHIVE__TENANTS", value)
    with pytest.raises(ValidationError, match=problem) as raised:
        Settings()
    assert raised.value.errors()[0]["loc"][:2] == ("archive", "tenants")
