"""``evalfleet verify``: check a result's signature and score its evidence again.

    evalfleet verify RESULT [--public-key KEY ...] [--pack PACK.yaml | --packs-dir DIR]

``RESULT`` is a file holding one published result (as published: the JSON text), ``-``
for standard input, or a run id, read from the fleet's Redis. Exit 0 only when the result
is signed by a trusted key, unchanged, and its evidence scores to its scorecard
(:mod:`tasks.evaluation.verification`); each other verdict has its code (:data:`EXITS`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from evalfleet.scoring import Pack
from evalfleet.tasks.evaluation.packs import registered_pack
from evalfleet.tasks.evaluation.verification import PackUnavailable, Verification, verify
from evalfleet.tasks.messages import RunResult
from evalfleet.tasks.signing_keys import KeyProblem, trusted_keys

from .redis_url import redis_url_option
from .refusal import EXIT_INVALID, load
from .settings import Settings

#: Each verdict's exit code (2 is invalid input, as for every command; 1 a run not found).
EXITS = {"verified": 0, "tampered": 10, "unknown_key": 11, "unsigned": 12,
         "scorecard_mismatch": 13, "evidence_cut": 14, "malformed": 15}
#: What each code means, for ``--help`` and docs/platform.md.
MEANINGS = {
    "verified": "signed by a trusted key, unchanged, and its evidence gives its scorecard",
    "tampered": "a member changed since it was signed (named)",
    "unknown_key": "signed by a key not trusted (--public-key, EVALFLEET_SIGNING__TRUSTED_KEYS)",
    "unsigned": "no signature",
    "scorecard_mismatch": "its evidence scores to another scorecard (a swapped scorecard)",
    "evidence_cut": "its evidence was cut for size: its scorecard cannot be scored again",
    "malformed": "not a result, or its signature is not one",
}
EPILOG = "Exit codes: " + "; ".join(f"{EXITS[v]} {v}: {m}" for v, m in MEANINGS.items()) + \
    f"; {EXIT_INVALID} invalid input (no key, no pack, an unreadable file)."


@click.command("verify", epilog=EPILOG)
@click.argument("source", metavar="RESULT")
@click.option("--public-key", "public_keys", multiple=True, metavar="KEY",
              help="A trusted public key: base64 of its 32 bytes, PEM, a file of either, or "
                   "KEY_ID=KEY (repeat for several: keys rotate). Added to the settings' "
                   "EVALFLEET_SIGNING__TRUSTED_KEYS.")
@click.option("--pack", "pack_path", type=click.Path(exists=True, dir_okay=False,
                                                      path_type=Path),
              help="The pack the result was scored with.")
@click.option("--packs-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Registered packs, found by the result's provenance.pack_ref "
                   "(default: EVALFLEET_PACKS_DIR).")
@redis_url_option(said="Where a run id is read (default: the settings').")
def verify_command(source: str, public_keys: tuple[str, ...], pack_path: Path | None,
                   packs_dir: Path | None, redis_url: str) -> None:
    """Verify a published result: its signature, then its scorecard against its evidence."""
    settings = Settings()
    trusted = _trusted([*settings.signing.trusted_keys, *public_keys])
    body = _body(source, redis_url)
    fixed = load(pack_path) if pack_path else None
    try:
        found = verify(body, trusted, _Packs(fixed, packs_dir or settings.packs_dir).of)
    except PackUnavailable as err:
        _fail(str(err))
    _report(found)
    sys.exit(EXITS[found.verdict])


def _trusted(texts: list[str]) -> dict[str, Any]:
    if not texts:
        _fail("no public key to verify with: give --public-key (evalfleet keys list shows "
              "the fleet's) or EVALFLEET_SIGNING__TRUSTED_KEYS")
    try:
        return dict(trusted_keys(texts))
    except KeyProblem as err:
        _fail(f"--public-key: {err}")


def _body(source: str, redis_url: str) -> bytes:
    """The result's text: from standard input, a file, or the fleet's Redis."""
    if source == "-":
        return sys.stdin.buffer.read()
    path = Path(source)
    if path.is_file():
        return path.read_bytes()
    return _stored(source, redis_url)


def _stored(run_id: str, redis_url: str) -> bytes:
    from evalfleet.tasks.redis_connection import connect
    from evalfleet.tasks.redis_keys import result_key

    client = connect(redis_url)
    try:
        found = client.get(result_key(run_id))
    finally:
        client.close()
    if found is None:
        click.echo(f"{run_id}: neither a file nor a run with a result in Redis", err=True)
        sys.exit(1)
    return found if isinstance(found, bytes) else str(found).encode()


class _Packs:
    """The pack each result is scored with: the one given, or its registered one."""

    def __init__(self, fixed: Pack | None, packs_dir: Path | None) -> None:
        self.fixed, self.packs_dir = fixed, packs_dir

    def of(self, result: RunResult) -> Pack:
        if self.fixed is not None:
            return self.fixed
        name = result.provenance.pack_ref if result.provenance else None
        path = registered_pack(name, self.packs_dir) if name else None
        if path is None:
            raise PackUnavailable(f"no pack to score run {result.run_id} again with: give "
                                  "--pack, or --packs-dir for a registered pack")
        return load(path)


def _report(found: Verification) -> None:
    click.echo(f"{found.verdict.upper()}: {found.run_id or '(no run id)'}")
    for line in found.lines:
        click.echo(f"  {line}")


def _fail(line: str) -> NoReturn:
    click.echo(line, err=True)
    sys.exit(EXIT_INVALID)
