"""The fleet's signing key: read from the settings, created once, or one per worker life.

``EVALFLEET_SIGNING__KEY`` (the key itself) wins over ``EVALFLEET_SIGNING__KEY_FILE``; a
key file that does not exist is created (``O_EXCL``, mode 0600) by the first worker that
looks, so every worker sharing the volume signs with one key. With neither, a worker makes
a key for its own life and says so: results stay signed, but only its log and
``evalfleet keys list`` tell its public key. The worker's main process resolves the key
before its pool forks, so all its processes sign alike.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from evalfleet.tasks.redis_keys import SIGNING_KEYS
from evalfleet.tasks.signatures import Signer
from evalfleet.tasks.signing_keys import KeyProblem, load_private, private_pem, public_text

from .settings import Settings, SigningSettings

log = logging.getLogger(__name__)


def fleet_signer(signing: SigningSettings) -> Signer:
    """The signer the settings give.

    Raises:
        SystemExit: the key or key file cannot be read, or the file cannot be created.
    """
    try:
        return _signer(signing)
    except KeyProblem as err:
        raise SystemExit(f"evalfleet: the signing key ({_where(signing)}): {err}") from None
    except OSError as err:
        raise SystemExit(f"evalfleet: the signing key file {signing.key_file}: "
                         f"{err.strerror or err}") from None


def _signer(signing: SigningSettings) -> Signer:
    if signing.key.get_secret_value():
        return Signer(load_private(signing.key.get_secret_value()), signing.key_id)
    if signing.key_file is not None:
        return Signer(load_private(key_file_text(signing.key_file)), signing.key_id)
    signer = Signer.generate(signing.key_id)
    log.warning("no signing key set (EVALFLEET_SIGNING__KEY_FILE): results are signed with "
                "a key of this worker's life, %s, public key %s", signer.key_id,
                public_text(signer.public_key))
    return signer


def _where(signing: SigningSettings) -> str:
    return "EVALFLEET_SIGNING__KEY" if signing.key.get_secret_value() else str(signing.key_file)


def key_file_text(path: Path) -> str:
    """The key file's text; a new key written there first when it does not exist.

    The key appears whole or not at all: it is written to a file of this process's own,
    then linked into place (``link`` fails when the name exists: another worker made it
    first, and its key is used). A reader never sees half a key.

    Raises:
        OSError: the file can neither be read nor created.
    """
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        pass
    text = private_pem(Signer.generate().key)
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600
    draft = Path(name)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    try:
        os.link(draft, path)
    except FileExistsError:  # another worker made it first: sign with that one
        return path.read_text(encoding="utf-8")
    finally:
        draft.unlink()
    log.warning("created the signing key %s", path)
    return text


def announce(signer: Signer, redis: Any, worker_id: str) -> str:
    """Record the signer's public key where ``evalfleet keys list`` finds it (a failure
    only logs: the key is in the log too); returns the line the worker logs once ready."""
    record = json.dumps({"public_key": public_text(signer.public_key), "worker": worker_id,
                         "seen_at": round(time.time(), 3)})
    try:
        redis.hset(SIGNING_KEYS, signer.key_id, record)
    except Exception as err:  # a full or unreachable Redis: the log line stands in
        log.warning("signing key %s not recorded in Redis: %s", signer.key_id, err)
    return f"results are signed as {signer.key_id} (public key {public_text(signer.public_key)})"


def configured(settings: Settings) -> Signer:
    """:func:`fleet_signer` of the settings (the worker's and the CLI's one door)."""
    return fleet_signer(settings.signing)
