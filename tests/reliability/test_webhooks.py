"""Webhooks across a worker killed and replaced (real worker processes, a real Redis, a
real receiver on loopback): no result lost, none delivered for another run, duplicates
only with the same run id; the schedule lives in Redis, not in the worker."""

from __future__ import annotations

import json
import signal
from typing import Any

from fleet_support import PrivateFleet, metric, wait_for
from webhook_receiver import Delivery, Receiver, Reply

from evalfleet.tasks.redis_keys import result_key
from evalfleet.tasks.webhooks.signature import HEADER, verify
from evalfleet.workers.devtools import sandbox_free

SECRET = "whsec-reliability"


def settings(port: int) -> dict[str, str]:
    """Loopback allowed, retries every 0.2–0.5 s, an attempt's deadline 1 s (its lease 7 s)."""
    return {"webhooks__allow": f"127.0.0.1:{port}", "webhooks__networks": "127.0.0.0/8",
            "webhooks__secrets": SECRET, "webhooks__first_retry_s": "0.2",
            "webhooks__max_retry_s": "0.5", "webhooks__timeout_s": "1",
            "webhooks__give_up_after_s": "300"}


class Platform:
    """The receiver's script: 503 while ``down``; the first delivery to ``/held/…`` is
    held 8 s (the worker is killed meanwhile), then answered 200."""

    def __init__(self) -> None:
        self.down = True
        self.held = 0

    def __call__(self, delivery: Delivery, count: int) -> Reply:
        if delivery.path.startswith("/held/") and not self.held:
            self.held += 1
            return Reply(200, delay_s=8.0)
        return Reply(503) if self.down else Reply(200)


def requests(receiver: Receiver, prefix: str, count: int, path: str = "runs") -> list[Any]:
    made = []
    for _ in range(count):
        request = sandbox_free.request(prefix)
        made.append({**request, "callback_url": receiver.url(f"/{path}/{request['run_id']}")})
    return made


def connected(client: Any, worker_id: str) -> bool:
    """Whether Redis still has a connection the worker named (``CLIENT LIST``)."""
    return any(c.get("name") == worker_id for c in client.redis.client_list())


def state(client: Any, run_id: str) -> str:
    found = client.status(run_id)
    return "" if found is None or found.webhook is None else found.webhook.state


def test_no_webhook_is_lost_or_misdelivered_across_a_worker_restart(
        private_fleet: PrivateFleet) -> None:
    """Runs published while the platform answers 503; one attempt in flight when the worker
    is SIGKILLed; a run cancelled while no worker runs. A new worker delivers every one,
    once the platform answers, each to its own URL, with its own body."""
    platform = Platform()
    with Receiver(platform) as receiver:
        node = private_fleet.start("hooks", **settings(receiver.port))
        client = private_fleet.client()
        runs = requests(receiver, "hook", 4) + requests(receiver, "held", 1, path="held")
        client.submit_batch(runs)
        wait_for(lambda: platform.held and all(
            client.status(r["run_id"]).webhook for r in runs), 60,
            "every run's delivery scheduled and the held one in flight")
        assert metric(node, "evalfleet_webhook_pending") == len(runs)
        assert metric(node, "evalfleet_webhook_oldest_undelivered_seconds") > 0
        assert metric(node, "evalfleet_webhook_attempts_total", answer="5xx") >= 1
        assert connected(client, node.worker_id)  # its connections carry its name
        node.stop(sig=signal.SIGKILL)
        # Until Redis has seen the dead node's sockets close, a read it had blocked would
        # still be served (the cancel's result into a dead consumer: claimed 60 s later).
        wait_for(lambda: not connected(client, node.worker_id), 30, "the dead node gone")
        (cancelled,) = requests(receiver, "gone", 1)
        client.submit(cancelled)
        assert client.cancel(cancelled["run_id"]).what == "cancelled"
        platform.down = False
        replacement = private_fleet.start("hooks-2", **settings(receiver.port))
        everything = [*runs, cancelled]

        wait_for(lambda: all(state(client, r["run_id"]) == "delivered" for r in everything),
                 90, "every result delivered")

    by_run: dict[str, list[Delivery]] = {}
    for got in receiver.deliveries:
        run_id = got.path.rsplit("/", 1)[1]
        by_run.setdefault(run_id, []).append(got)
        assert json.loads(got.body)["run_id"] == got.headers["Idempotency-Key"] == run_id
        assert got.body == client.redis.get(result_key(run_id))
        assert verify(got.body, got.headers[HEADER], SECRET)
    assert set(by_run) == {r["run_id"] for r in everything}
    held = runs[-1]["run_id"]
    assert len(by_run[held]) >= 2  # the attempt the kill cut short was sent again
    assert [a.answer for a in client.status(held).webhook.attempts][:2] == [
        "lost: its sender stopped before an answer", "200"]
    for run in runs[:-1]:
        answers = [a.answer for a in client.status(run["run_id"]).webhook.attempts]
        assert answers[-1] == "200" and "503" in answers[:-1]
    assert metric(replacement, "evalfleet_webhook_deliveries_total", state="delivered") >= 1
    assert metric(replacement, "evalfleet_webhook_attempts_total", answer="2xx") >= 1
    exported = replacement.metrics()
    assert "evalfleet_webhook_pending 0.0" in exported
    assert "evalfleet_webhook_oldest_undelivered_seconds 0.0" in exported
    assert 'evalfleet_webhook_deliveries_total{state="failed"} 0.0' in exported
