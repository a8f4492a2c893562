"""``evalfleet keys``: make a signing key, show the configured one, list the fleet's.

    evalfleet keys generate --out signing.key [--key-id fleet-2026-11]
    evalfleet keys show [--key-file F]
    evalfleet keys list

A public key prints as base64 of its 32 bytes, the form ``evalfleet verify --public-key``
and ``EVALFLEET_SIGNING__TRUSTED_KEYS`` take (``KEY_ID=KEY`` when the id was chosen).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from evalfleet.tasks.redis_keys import SIGNING_KEYS
from evalfleet.tasks.signatures import Signer
from evalfleet.tasks.signing_keys import KeyProblem, load_private, private_pem, public_text

from .redis_url import redis_url_option
from .refusal import EXIT_INVALID
from .settings import Settings


@click.group("keys")
def keys() -> None:
    """The Ed25519 keys that sign results (docs/operations.md, "Signing keys")."""


@keys.command()
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the private key (PEM, mode 0600; never overwritten).")
@click.option("--key-id", default="", help="The id results will name (default: a digest "
                                           "of the public key).")
def generate(out: Path, key_id: str) -> None:
    """Make a new private key; print its key id and public key."""
    signer = Signer.generate(key_id)
    try:
        descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        click.echo(f"{out}: exists already (a key is never overwritten)", err=True)
        sys.exit(EXIT_INVALID)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(private_pem(signer.key))
    _print(signer, chosen=bool(key_id))


@keys.command()
@click.option("--key-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A private key file (default: the settings' key).")
def show(key_file: Path | None) -> None:
    """The key id and public key of a private key (never the private key)."""
    signing = Settings().signing
    if key_file is not None:
        text = key_file.read_text(encoding="utf-8")
    elif signing.key.get_secret_value():
        text = signing.key.get_secret_value()
    elif signing.key_file is not None and signing.key_file.is_file():
        text = signing.key_file.read_text(encoding="utf-8")
    else:
        click.echo("no signing key is set (EVALFLEET_SIGNING__KEY_FILE, EVALFLEET_SIGNING__KEY)",
                   err=True)
        sys.exit(1)
    try:
        signer = Signer(load_private(text), signing.key_id if key_file is None else "")
    except KeyProblem as err:
        click.echo(f"{key_file or 'the signing key'}: {err}", err=True)
        sys.exit(EXIT_INVALID)
    _print(signer, chosen=bool(signing.key_id) and key_file is None)


@keys.command("list")
@redis_url_option()
def list_keys(redis_url: str) -> None:
    """The public keys the fleet's workers have signed with (from Redis: where to find a
    key, not a reason to trust one)."""
    from evalfleet.tasks.redis_connection import connect

    client = connect(redis_url)
    try:
        found = client.hgetall(SIGNING_KEYS)
    finally:
        client.close()
    if not found:
        click.echo("no worker has recorded a signing key", err=True)
        sys.exit(1)
    for key_id, raw in sorted(found.items()):
        record = json.loads(raw)
        name = key_id.decode() if isinstance(key_id, bytes) else key_id
        click.echo(f"{name}={record['public_key']}  "
                   f"(worker {record.get('worker', '?')})")


def _print(signer: Signer, chosen: bool) -> None:
    public = public_text(signer.public_key)
    click.echo(f"key id:     {signer.key_id}")
    click.echo(f"public key: {public}")
    click.echo(f"trust it:   --public-key {signer.key_id + '=' if chosen else ''}{public}")
