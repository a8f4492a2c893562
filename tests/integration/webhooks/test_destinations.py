"""Where a webhook may go, against a real HTTP receiver on loopback: never redirected,
never off the allowlist, never to a name that resolves to a forbidden address, always to
the address that was checked, with TLS verifying the URL's host there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from delivery_support import (
    answers,
    certificate,
    config,
    dispatcher,
    drain,
    ended,
    publish,
    rebinding,
    webhook,
)
from webhook_receiver import Receiver, Reply, always


def test_a_redirect_is_never_followed(redis: Any) -> None:
    """A 302 to an address the fleet may not reach (another port on loopback, not on the
    allowlist): never followed, recorded as such, and the forbidden receiver hears nothing."""
    with Receiver() as forbidden, Receiver(always(Reply(302, headers={
            "Location": forbidden.url("/steal")}))) as receiver:
        sender = dispatcher(redis, config(receiver.port, give_up_after_s=0.5))
        publish(redis, "redirected-1", receiver.url())

        drain(sender, ended(redis, "redirected-1"))

    assert forbidden.deliveries == []
    assert set(answers(redis, "redirected-1")) == {"302 not followed"}
    assert webhook(redis, "redirected-1").state == "failed"


def test_a_host_or_port_off_the_allowlist_is_never_contacted(redis: Any) -> None:
    """The receiver listens, but its port is not allowed: one attempt, refused by the
    policy (never sent, never retried)."""
    with Receiver() as receiver:
        sender = dispatcher(redis, config(receiver.port + 1))
        publish(redis, "unlisted-1", receiver.url())

        drain(sender, ended(redis, "unlisted-1"))

    assert receiver.deliveries == []
    hook = webhook(redis, "unlisted-1")
    assert hook.state == "failed" and hook.reason == hook.attempts[0].answer
    assert answers(redis, "unlisted-1") == [
        f"refused: 127.0.0.1:{receiver.port} is not in EVALFLEET_WEBHOOKS__ALLOW"]
    assert sender.observer.kinds == ["refused"]  # type: ignore[attr-defined]


def test_a_name_that_resolves_to_loopback_is_refused(redis: Any) -> None:
    """DNS rebinding: an allowed name resolves to a loopback address, which the operator
    did not allow (no EVALFLEET_WEBHOOKS__NETWORKS): refused, nothing sent."""
    with Receiver() as receiver:
        webhooks = config(networks=(), allow=(f"hooks.example.test:{receiver.port}",))
        sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
        publish(redis, "rebound-1", f"http://hooks.example.test:{receiver.port}/hook")

        drain(sender, ended(redis, "rebound-1"))

    assert receiver.deliveries == []
    assert answers(redis, "rebound-1") == [
        "refused: 127.0.0.1 is not a public address (and not in EVALFLEET_WEBHOOKS__NETWORKS)"]


@pytest.mark.parametrize("address", ["::ffff:127.0.0.1", "169.254.169.254", "10.0.0.1",
                                     "0.0.0.0"])
def test_names_that_resolve_to_other_private_addresses_are_refused(redis: Any,
                                                                   address: str) -> None:
    """The metadata service, a private network, an IPv4-mapped loopback, the unspecified
    address: refused before any connection."""
    webhooks = config(networks=(), allow=("hooks.example.test:80",))
    sender = dispatcher(redis, webhooks, resolve=rebinding(address))
    publish(redis, "rebound-2", "http://hooks.example.test/hook")

    drain(sender, ended(redis, "rebound-2"))

    (answer,) = answers(redis, "rebound-2")
    assert answer.startswith("refused: ") and "is not a public address" in answer


def test_the_connection_goes_to_the_address_that_was_checked(redis: Any) -> None:
    """The name is resolved once, by the policy's resolver, and the connection goes to
    that address (never resolved again); the Host header stays the URL's."""
    with Receiver() as receiver:
        webhooks = config(allow=(f"hooks.example.test:{receiver.port}",))
        sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
        publish(redis, "pinned-1", f"http://hooks.example.test:{receiver.port}/hook")

        drain(sender, ended(redis, "pinned-1"))

    (got,) = receiver.deliveries
    assert (got.peer, got.headers["Host"]) == ("127.0.0.1",
                                               f"hooks.example.test:{receiver.port}")


def test_https_verifies_the_urls_host_on_the_pinned_address(redis: Any,
                                                            tmp_path: Path) -> None:
    """The connection goes to the checked address, and TLS still verifies the URL's
    host: a certificate for that name is delivered to, one for another name is not."""
    trusted, good = certificate(tmp_path, "hooks.example.test")
    stranger, bad = certificate(tmp_path, "other.example.test")
    with Receiver(tls=good) as receiver, Receiver(tls=bad) as impostor:
        for run_id, target, ca in (("tls-1", receiver, trusted), ("tls-2", impostor, stranger)):
            webhooks = config(allow=(f"hooks.example.test:{target.port}",),
                              ca_file=str(ca), give_up_after_s=0.3)
            sender = dispatcher(redis, webhooks, resolve=rebinding("127.0.0.1"))
            publish(redis, run_id, target.url(host="hooks.example.test"))

            drain(sender, ended(redis, run_id))

    assert answers(redis, "tls-1") == ["200"] and len(receiver.deliveries) == 1
    assert impostor.deliveries == [] and webhook(redis, "tls-2").state == "failed"
    assert all("certificate verify failed" in answer for answer in answers(redis, "tls-2"))
