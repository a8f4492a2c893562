"""What the webhook tests share: the test configuration (loopback allowed, short retries),
a dispatcher that records what it did, publishing a run, and waiting for deliveries."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services import missing_service

from evalfleet.tasks.lifecycle import Lifecycle
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.publish import Publisher
from evalfleet.tasks.redis_keys import (
    status_key,
)
from evalfleet.tasks.status import RunStatus, Webhook
from evalfleet.tasks.webhooks.config import WebhookConfig
from evalfleet.tasks.webhooks.dispatcher import Dispatcher

SECRET = "whsec-test-current"


@dataclass
class Counted:
    """An observer that keeps what it heard."""

    kinds: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)

    def attempted(self, kind: str) -> None:
        self.kinds.append(kind)

    def finished(self, state: str) -> None:
        self.ends.append(state)


def config(*ports: int, **overrides: Any) -> WebhookConfig:
    """Loopback allowed explicitly, short retries (0.05 s doubling to 0.2 s, 2 s in all)."""
    settings: dict[str, Any] = {
        "allow": tuple(f"127.0.0.1:{port}" for port in ports), "networks": ("127.0.0.0/8",),
        "secrets": (SECRET,), "timeout_s": 0.5, "first_retry_s": 0.05, "max_retry_s": 0.2,
        "give_up_after_s": 2.0}
    return WebhookConfig(**{**settings, **overrides})


def dispatcher(redis: Any, webhooks: WebhookConfig, **extra: Any) -> Dispatcher:
    made = Dispatcher(redis, webhooks, consumer="test", observer=Counted(), **extra)
    made.ensure_group()
    return made


def publish(redis: Any, run_id: str, callback: str | None = None, match: str | None = None,
            **fields: Any) -> bytes:
    """Queue ``run_id`` (with its callback) and publish its result; the body published."""
    Lifecycle(redis, 600).queue(run_id, match, None, callback_url=callback)
    result = RunResult(run_id=run_id, outcome="scored", match=match, **fields)
    body = result.to_json()
    assert Publisher(redis, 600, "w").publish(result, body)
    return body.encode()


def webhook(redis: Any, run_id: str) -> Webhook:
    found = RunStatus.from_record(run_id, redis.hgetall(status_key(run_id)))
    assert found is not None and found.webhook is not None
    return found.webhook


def drain(sender: Dispatcher, done: Callable[[], bool], timeout: float = 15.0) -> None:
    """Hear and send until ``done`` (bounded)."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"not done within {timeout} s"
        sender.hear(block_ms=10)
        sender.send_due()
        time.sleep(0.01)


def ended(redis: Any, *run_ids: str) -> Callable[[], bool]:
    def check() -> bool:
        states = [redis.hget(status_key(r), "webhook") for r in run_ids]
        return all(s in (b"delivered", b"failed") for s in states)
    return check


def answers(redis: Any, run_id: str) -> list[str]:
    return [a.answer for a in webhook(redis, run_id).attempts]



def rebinding(address: str) -> Callable[[str, int], list[str]]:
    """A resolver under an attacker's control: every name resolves to ``address``."""
    return lambda host, port: [address]



def certificate(tmp_path: Path, name: str) -> tuple[Path, ssl.SSLContext]:
    """A self-signed certificate for ``name`` (its file, to trust) and a server context."""
    if shutil.which("openssl") is None:
        missing_service("openssl", FileNotFoundError("not on PATH"))
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}"],
                   check=True, capture_output=True, timeout=60)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    return cert, server

