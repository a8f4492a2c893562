"""Signed results: the fleet's Ed25519 signature over a result's canonical JSON.

Every result a worker publishes carries ``signature``::

    {"alg": "ed25519", "key_id": "...", "fields": {"run_id": "...", ...}, "value": "..."}

* ``value`` is Ed25519 (RFC 8032) over the **RFC 8785** canonical JSON of the whole result
  as published, ``signature`` included without its ``value`` — base64url, no padding. It
  covers the result after size capping: what a reader holds is what was signed.
* ``fields`` has one short digest per top-level member (base64url of the first 9 bytes of
  SHA-256 of that member's canonical JSON). The signature covers them too; they only let
  a verifier name *which* member changed when the signature fails.
* ``key_id`` names the key (by default a digest of its public key), so several public keys
  can be trusted at once while keys rotate.

The published text is itself that canonical JSON (:mod:`tasks.canonical`), made I-JSON
first where it was not (a big integer, a lone surrogate: rare, and never a reason to publish
nothing). :func:`check` is the verifier's side: it reads the published text, never a
re-serialized model. Keys: :mod:`tasks.signing_keys`.
"""

from __future__ import annotations

import binascii
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .canonical import canonical, joined, members
from .messages import RunResult
from .signing_keys import ALG, b64, key_id_of, unb64

#: Bytes of SHA-256 kept per member digest (a diagnosis aid; the signature is the proof).
DIGEST_BYTES = 9


@dataclass(frozen=True)
class Signer:
    """Signs results with one private key under one key id."""

    key: Ed25519PrivateKey
    key_id: str = ""

    def __post_init__(self) -> None:
        if not self.key_id:
            object.__setattr__(self, "key_id", key_id_of(self.key.public_key()))

    @classmethod
    def generate(cls, key_id: str = "") -> Signer:
        return cls(Ed25519PrivateKey.generate(), key_id)

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.key.public_key()

    def seal(self, result: RunResult) -> str:
        """``result`` as published: its JSON with this key's ``signature``."""
        return self.sign_document(result.model_dump(mode="json", by_alias=True,
                                                    exclude={"signature"}))

    def sign_document(self, document: dict[str, Any]) -> str:
        """A result document (parsed JSON; any ``signature`` is replaced) as signed text:
        RFC 8785 canonical JSON itself."""
        texts = {name: text for name, (_, text) in members(
            {k: v for k, v in document.items() if k != "signature"}).items()}
        header = {"alg": ALG, "key_id": self.key_id,
                  "fields": {name: _digest(text) for name, text in texts.items()}}
        value = self.key.sign(joined({**texts, "signature": canonical(header)}))
        signature = canonical({**header, "value": b64(value)})
        return joined({**texts, "signature": signature}).decode("utf-8")


def _digest(text: bytes) -> str:
    return b64(hashlib.sha256(text).digest()[:DIGEST_BYTES])


Check = Literal["verified", "unsigned", "unknown_key", "tampered", "malformed"]


@dataclass
class Checked:
    """What :func:`check` found. ``changed``: the members whose digest no longer matches
    (with ``tampered``); empty when only the signature or its header was changed."""

    verdict: Check
    key_id: str = ""
    reason: str = ""
    changed: list[str] = field(default_factory=list)


def check(body: str | bytes, trusted: Mapping[str, Ed25519PublicKey]) -> Checked:
    """Check a published result's signature against the ``trusted`` keys (by key id)."""
    try:
        document = json.loads(body, parse_constant=_no_constant)
    except ValueError as err:
        return Checked("malformed", reason=f"not JSON: {err}")
    if not isinstance(document, dict):
        return Checked("malformed", reason="not a JSON object")
    return _check_document(document, trusted)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _check_document(document: dict[str, Any], trusted: Mapping[str, Ed25519PublicKey]) -> Checked:
    signature = document.get("signature")
    if signature is None:
        return Checked("unsigned", reason="the result carries no signature")
    header, problem = _header(signature)
    if header is None:
        return Checked("malformed", reason=f"signature: {problem}")
    key_id = header["key_id"]
    key = trusted.get(key_id)
    if key is None:
        return Checked("unknown_key", key_id, f"signed by {key_id!r}, which is not trusted "
                                              f"({len(trusted)} trusted key(s))")
    texts = {name: text for name, (_, text) in members(
        {k: v for k, v in document.items() if k != "signature"}).items()}
    claimed = {k: v for k, v in header.items() if k != "value"}
    try:
        key.verify(unb64(header["value"]), joined({**texts, "signature": canonical(claimed)}))
    except (InvalidSignature, ValueError, binascii.Error):  # a value not even base64
        return Checked("tampered", key_id, "the signature does not match the result",
                       _changed(texts, header["fields"]))
    return Checked("verified", key_id)


def _header(signature: Any) -> tuple[dict[str, Any] | None, str]:
    if not isinstance(signature, dict):
        return None, "not an object"
    if signature.get("alg") != ALG:
        return None, f"alg is {signature.get('alg')!r}, not {ALG!r}"
    for name, kind in (("key_id", str), ("value", str), ("fields", dict)):
        if not isinstance(signature.get(name), kind):
            return None, f"{name} is missing or not a {kind.__name__}"
    return signature, ""


def _changed(members: Mapping[str, bytes], fields: Mapping[str, Any]) -> list[str]:
    """Members added, removed or whose digest moved."""
    names = [*fields, *(name for name in members if name not in fields)]
    return [name for name in names
            if name not in members or fields.get(name) != _digest(members[name])]
