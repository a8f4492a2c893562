"""The provenance a worker records on every result (:class:`tasks.messages.Provenance`)."""

from __future__ import annotations

import functools
from importlib import metadata
from typing import Any

from evalfleet.scoring import AGENTCLASH_COMMIT, SEMANTICS_VERSION, Pack

from ..messages import Provenance


@functools.cache
def evalfleet_version() -> str:
    """The installed distribution's version (``unknown`` when run from a bare checkout);
    read once per process (reading the metadata cost ≈ 0.7 ms, a third of a sandbox-free
    run)."""
    try:
        return metadata.version("evalfleet")
    except metadata.PackageNotFoundError:
        return "unknown"


def provenance(pack: Pack | None = None, pack_ref: str | None = None,
               resources: dict[str, Any] | None = None) -> Provenance:
    """Today's code and semantics, the pack's content hash, and the sandbox's image ID and
    runtime as the sandbox driver reports them in ``resources`` (None when it does not)."""
    found = resources or {}
    return Provenance(
        evalfleet_version=evalfleet_version(), scoring_semantics=SEMANTICS_VERSION,
        agentclash_commit=AGENTCLASH_COMMIT,
        pack_hash=pack.content_hash if pack is not None else None, pack_ref=pack_ref,
        image_digest=_text(found.get("image_id")), runtime=_text(found.get("runtime")))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
