"""A tenant's Redis user survives losing the primary (issue 47, item 1): ``evalfleet tenant
add`` makes it on every data node behind the Sentinel URL, so once the replica is promoted
the tenant logs in, submits and reads its result as before, and its walls still hold."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis as redis_lib
from click.testing import CliRunner
from fleet_support import TEST_WORKER_SETTINGS, wait_for

from evalfleet.tasks.platform import EvalfleetClient
from evalfleet.tasks.redis_keys import FLEET
from evalfleet.workers.cli import main
from evalfleet.workers.devtools import sandbox_free
from evalfleet.workers.devtools.local_fleet import Starter
from evalfleet.workers.devtools.sentinels import SentinelGroup


@pytest.fixture
def group(tmp_path: Path) -> Any:
    started = SentinelGroup(tmp_path).start()
    yield started
    started.stop()


def tenant_url(group: SentinelGroup, user: str, password: str) -> str:
    nodes = ",".join(f"127.0.0.1:{port}" for port in group.sentinel_ports)
    return f"sentinel://{user}:{quote(password, safe='')}@{nodes}/evalfleet/0"


def add_tenant(group: SentinelGroup, name: str) -> tuple[str, str, str]:
    """``evalfleet tenant add`` through the Sentinel URL: its output, user and password."""
    done = CliRunner().invoke(main, ["tenant", "add", name, "--redis-url", group.url])
    assert done.exit_code == 0, done.output
    fields = dict(line.split(":", 1) for line in done.output.splitlines() if ":" in line)
    return done.output, fields["user"].strip(), fields["password"].strip()


def test_a_tenants_user_is_on_every_node_and_survives_a_failover(group: SentinelGroup,
                                                                tmp_path: Path) -> None:
    output, user, password = add_tenant(group, "acme")
    assert "on 2 node(s)" in output
    for port in group.data_ports:  # the user exists on each node, the replica included
        node = redis_lib.Redis(port=port, password=group.password)
        assert user in [u if isinstance(u, str) else u.decode() for u in node.acl_users()]
        node.close()

    old = group.kill_primary()
    group.wait_failover(old)
    node = Starter(group.url, tmp_path, **TEST_WORKER_SETTINGS)("after")
    client = EvalfleetClient(tenant_url(group, user, password))
    try:
        request = sandbox_free.request("fo")
        wait_for(lambda: _submitted(client, request), 90, "the tenant submitted")
        result = client.wait(request["run_id"], timeout=120)
        with pytest.raises(redis_lib.exceptions.NoPermissionError):
            client.redis.get(FLEET.result(request["run_id"]))
    finally:
        client.close()
        node.stop()

    assert (result.outcome, result.scorecard and result.scorecard.result) == ("scored", "win")


def _submitted(client: EvalfleetClient, request: dict[str, Any]) -> bool:
    try:
        client.submit(request)
    except Exception:  # no primary yet, or the client's connection still on the old one
        time.sleep(0.2)
        return False
    return True
