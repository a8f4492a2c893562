"""The webhook signature as a receiver checks it (tasks.webhooks.signature)."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys

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


BLOCKED = ("celery", "kombu", "docker", "yaml", "re2", "sacrebleu", "rapidfuzz", "jsonschema")
SLIM = f"""
import sys
class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError("not in the slim client: " + name)
sys.meta_path.insert(0, Blocked())
from evalfleet.tasks.platform import EvalfleetClient, AsyncEvalfleetClient
from evalfleet.tasks.webhooks.signature import verify
from evalfleet.tasks.messages import RunRequest
RunRequest(run_id="r", pack_ref="p", callback_url="https://h.example/")
"""


def test_the_slim_client_and_the_verifier_need_nothing_of_the_worker() -> None:
    """``pip install evalfleet`` (redis + pydantic): the client with ``callback_url`` and
    the receiver's verifier import without the worker's dependencies."""
    done = subprocess.run([sys.executable, "-c", SLIM], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
