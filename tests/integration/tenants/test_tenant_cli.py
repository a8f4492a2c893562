"""``evalfleet tenant`` against a real Redis: a tenant made, listed, shown, rotated (its old
password refused at once, a run it had queued still served) and removed."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis as redis_lib
from click.testing import CliRunner, Result

from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.redis_keys import TENANTS_KEY
from evalfleet.workers.cli import main
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import RedisServer


def tenant(server: RedisServer, *args: str) -> Result:
    return CliRunner().invoke(main, ["tenant", *args, "--redis-url", server.url])


def credentials(output: str) -> tuple[str, str]:
    fields = dict(line.split(":", 1) for line in output.splitlines() if ":" in line)
    return fields["user"].strip(), fields["password"].strip()


def url(server: RedisServer, user: str, password: str) -> str:
    return f"redis://{user}:{password}@127.0.0.1:{server.port}/0"


def test_a_tenants_life_through_the_command(server: RedisServer, admin: Any,
                                            start_worker: Any) -> None:
    name = f"acme-{uuid.uuid4().hex[:6]}"
    added = tenant(server, "add", name)
    assert added.exit_code == 0, added.output
    user, old = credentials(added.output)
    assert old not in str(admin.hgetall(TENANTS_KEY))  # only its hash is kept

    listed, shown = tenant(server, "list"), tenant(server, "show", name)
    assert name in listed.output and user in listed.output
    assert f"evalfleet:t:{name}:*" in shown.output and "#" not in shown.output

    before = EvalfleetClient(url(server, user, old))
    request = sandbox_free.request("rot")
    before.submit(request)  # queued (no worker yet), then the password changes
    rotated = tenant(server, "rotate", name)
    assert rotated.exit_code == 0, rotated.output
    _, new = credentials(rotated.output)
    with pytest.raises(redis_lib.exceptions.AuthenticationError):
        EvalfleetClient(url(server, user, old)).redis.ping()
    start_worker("rotated")
    after = EvalfleetClient(url(server, user, new))
    assert after.wait(request["run_id"], timeout=60).outcome == "scored"

    removed = tenant(server, "remove", name)
    assert removed.exit_code == 0, removed.output
    with pytest.raises(redis_lib.exceptions.AuthenticationError):
        EvalfleetClient(url(server, user, new)).redis.ping()
    assert name not in tenant(server, "list").output
    for client in (before, after):
        client.close()


@pytest.mark.parametrize("args, said", [
    (("add", "Not_A_Name"), "tenant name"),
    (("show", "nobody"), "no tenant 'nobody'"),
    (("rotate", "nobody"), "no tenant 'nobody'"),
])
def test_a_wrong_name_is_refused_with_why(server: RedisServer, args: tuple[str, ...],
                                          said: str) -> None:
    done = tenant(server, *args)
    assert done.exit_code == 2 and said in done.output, done.output


def test_adding_a_tenant_twice_is_refused(server: RedisServer) -> None:
    assert tenant(server, "add", "twice").exit_code == 0
    again = tenant(server, "add", "twice")
    assert again.exit_code == 2 and "exists" in again.output


def test_a_tenants_share_is_set_at_add_and_changed_later(server: RedisServer) -> None:
    """Weight and quotas from ``add``, changed by ``share`` (a quota of 0 removes it),
    shown by ``show``; the rotation of its password keeps them."""
    added = tenant(server, "add", "shared", "--weight", "3", "--max-in-flight", "100")
    assert added.exit_code == 0, added.output
    assert "weight 3; max_in_flight 100; over quota: wait" in tenant(server, "show",
                                                                     "shared").output
    changed = tenant(server, "share", "shared", "--max-in-flight", "0", "--max-per-minute",
                     "60", "--over-quota", "refuse")
    assert changed.exit_code == 0, changed.output
    assert tenant(server, "rotate", "shared").exit_code == 0
    shown = tenant(server, "show", "shared").output
    assert "weight 3; max_per_minute 60; over quota: refuse" in shown, shown


@pytest.mark.parametrize("args, said", [
    (("share", "shared", "--weight", "0"), "weight 0.0: must be above 0"),
    (("share", "shared", "--max-per-minute", "-5"), "max_per_minute -5: must be at least 1"),
    (("share", "shared"), "nothing to change"),
    (("share", "nobody", "--weight", "2"), "no tenant 'nobody'"),
])
def test_a_share_that_cannot_be_is_refused_with_why(server: RedisServer, admin: Any,
                                                    args: tuple[str, ...], said: str) -> None:
    assert tenant(server, "add", "shared").exit_code == 0
    before = admin.hget(TENANTS_KEY, "shared")
    done = tenant(server, *args)
    assert done.exit_code == 2 and said in done.output, done.output
    assert admin.hget(TENANTS_KEY, "shared") == before
