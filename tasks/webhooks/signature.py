"""The webhook signature: HMAC-SHA256 over ``<timestamp>.<body>``, as Stripe signs.

The header ``Evalfleet-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`` carries one
``v1`` per active secret, so an operator rotates a secret without a gap: add the new one
(both sign), move the receiver to it, then remove the old one. A receiver holds one
secret and accepts the delivery when any ``v1`` matches and ``t`` is recent (a replay of
an old delivery fails). This module needs nothing but the standard library: a platform
may copy :func:`verify` as it is (docs/platform.md, "Webhooks").
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable

HEADER = "Evalfleet-Signature"
#: How far a signature's timestamp may be from the receiver's clock (seconds).
TOLERANCE_S = 300


def signature(body: bytes, secret: str, timestamp: int) -> str:
    """The hex HMAC-SHA256 of ``<timestamp>.<body>`` under ``secret``."""
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def sign(body: bytes, secrets: Iterable[str], timestamp: int) -> str:
    """The header's value: ``t=<timestamp>`` and one ``v1=`` per secret.

    Raises:
        ValueError: no secret (the fleet never sends an unsigned delivery).
    """
    signatures = [f"v1={signature(body, secret, timestamp)}" for secret in secrets]
    if not signatures:
        raise ValueError("no webhook secret: nothing is sent unsigned")
    return ",".join([f"t={timestamp}", *signatures])


def verify(body: bytes, header: str, secret: str, tolerance_s: float = TOLERANCE_S,
           now: float | None = None) -> bool:
    """Whether ``header`` signs ``body`` under ``secret`` within ``tolerance_s`` of
    ``now`` (default: the clock): what a receiver runs before it trusts a delivery."""
    parts = [item.partition("=") for item in header.split(",")]
    stamps = [value for key, _, value in parts if key.strip() == "t"]
    if len(stamps) != 1 or not stamps[0].strip().isdigit():
        return False
    timestamp = int(stamps[0])
    if abs((time.time() if now is None else now) - timestamp) > tolerance_s:
        return False
    expected = signature(body, secret, timestamp)
    return any(hmac.compare_digest(expected, value.strip())
               for key, _, value in parts if key.strip() == "v1")
