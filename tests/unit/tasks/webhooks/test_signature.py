"""The webhook signature as a receiver checks it (tasks.webhooks.signature)."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from evalfleet.tasks.webhooks.signature import sign, signature, verify

BODY = b'{"run_id":"r1","outcome":"scored"}'


def test_a_receiver_verifies_with_the_secret_it_holds() -> None:
    header = sign(BODY, ["s1"], 1_700_000_000)

    assert header == f"t=1700000000,v1={signature(BODY, 's1', 1_700_000_000)}"
    assert verify(BODY, header, "s1", now=1_700_000_100)


def test_the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body() -> None:
    """What docs/platform.md tells a receiver in another language to compute."""
    expected = hmac.new(b"s1", b"1700000000." + BODY, hashlib.sha256).hexdigest()
    assert signature(BODY, "s1", 1_700_000_000) == expected


def test_while_two_secrets_are_active_either_verifies() -> None:
    """Rotation: add the new secret (both sign), move the receiver, drop the old one."""
    header = sign(BODY, ["new", "old"], 1_700_000_000)

    assert header.count("v1=") == 2
    assert verify(BODY, header, "new", now=1_700_000_000)
    assert verify(BODY, header, "old", now=1_700_000_000)
    assert not verify(BODY, header, "retired", now=1_700_000_000)


@pytest.mark.parametrize(("body", "header", "now"), [
    (BODY + b" ", None, 1_700_000_000),                     # the body changed
    (BODY, None, 1_700_000_301),                            # a replay, 301 s later
    (BODY, None, 1_699_999_699),                            # from the future
    (BODY, "v1=00", 1_700_000_000),                          # no timestamp
    (BODY, "t=soon,v1=00", 1_700_000_000),                   # not a timestamp
    (BODY, "t=1700000000,t=1700000000", 1_700_000_000),      # two timestamps, no v1
])
def test_what_a_receiver_refuses(body: bytes, header: str | None, now: float) -> None:
    signed = header or sign(BODY, ["s1"], 1_700_000_000)
    assert not verify(body, signed, "s1", now=now)


def test_nothing_is_signed_without_a_secret() -> None:
    with pytest.raises(ValueError, match="nothing is sent unsigned"):
        sign(BODY, [], 1)
