"""Ed25519 keys as people pass them around: PEM, or base64 of their 32 raw bytes, and
the key id a signature names (by default a digest of the public key)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALG = "ed25519"


class KeyProblem(ValueError):
    """A key that cannot be read: not PEM, not 32 bytes of base64, not Ed25519."""


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def key_id_of(key: Ed25519PublicKey) -> str:
    """The default key id: ``ed25519:`` and 16 hex digits of SHA-256 of the raw public key."""
    return f"{ALG}:{hashlib.sha256(raw_public(key)).hexdigest()[:16]}"


def public_text(key: Ed25519PublicKey) -> str:
    """A public key as people pass it around: base64 of its 32 raw bytes."""
    return base64.b64encode(raw_public(key)).decode("ascii")


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def private_pem(key: Ed25519PrivateKey) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode("ascii")


def load_private(text: str) -> Ed25519PrivateKey:
    """A private key from PEM (PKCS#8) or base64 of its 32-byte seed.

    Raises:
        KeyProblem: neither, or not an Ed25519 key.
    """
    if "-----BEGIN" in text:
        try:
            key = serialization.load_pem_private_key(text.encode(), password=None)
        except (ValueError, TypeError) as err:
            raise KeyProblem(f"not a PEM private key: {err}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise KeyProblem("the PEM private key is not an Ed25519 key")
        return key
    return Ed25519PrivateKey.from_private_bytes(_raw32(text, "private key seed"))


def load_public(text: str) -> Ed25519PublicKey:
    """A public key from PEM (SubjectPublicKeyInfo) or base64 of its 32 raw bytes.

    Raises:
        KeyProblem: neither, or not an Ed25519 key.
    """
    if "-----BEGIN" in text:
        try:
            key = serialization.load_pem_public_key(text.encode())
        except (ValueError, TypeError) as err:
            raise KeyProblem(f"not a PEM public key: {err}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise KeyProblem("the PEM public key is not an Ed25519 key")
        return key
    return Ed25519PublicKey.from_public_bytes(_raw32(text, "public key"))


def _raw32(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text.strip(), altchars=b"-_" if "-" in text or "_" in text
                               else None, validate=True)
    except (binascii.Error, ValueError):
        raise KeyProblem(f"a {what} is PEM or base64 of 32 bytes; this is neither") from None
    if len(raw) != 32:
        raise KeyProblem(f"a {what} is 32 bytes; this base64 holds {len(raw)}")
    return raw


def trusted_keys(texts: Iterable[str]) -> dict[str, Ed25519PublicKey]:
    """Public keys by key id, from key texts or paths to files holding one.

    A text may name its key id: ``<key_id>=<key>`` (else the default id is used).

    Raises:
        KeyProblem: a key that cannot be read (the message says which).
    """
    found: dict[str, Ed25519PublicKey] = {}
    for text in texts:
        key_id, key = _named(text)
        found[key_id or key_id_of(key)] = key
    return found


def _named(text: str) -> tuple[str, Ed25519PublicKey]:
    name, sep, rest = text.partition("=")
    if sep and rest and not text.lstrip().startswith("-----") and not _is_file(text) \
            and _looks_named(name):
        return name.strip(), _public_from(rest)
    return "", _public_from(text)


def _looks_named(name: str) -> bool:
    return bool(name.strip()) and len(name) <= 200 and "\n" not in name


def _is_file(text: str) -> bool:
    return "\n" not in text and len(text) < 4096 and os.path.isfile(text)


def _public_from(text: str) -> Ed25519PublicKey:
    if _is_file(text):
        try:
            return load_public(Path(text).read_text(encoding="utf-8"))
        except KeyProblem as err:
            raise KeyProblem(f"{text}: {err}") from None
    return load_public(text)
