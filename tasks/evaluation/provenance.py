"""The provenance a worker records on every result (:class:`tasks.messages.Provenance`)."""

from __future__ import annotations

import functools
import hashlib
from importlib import metadata
from typing import Any

from evalfleet.scoring import AGENTCLASH_COMMIT, SEMANTICS_VERSION, EvaluationSpec, Pack
from evalfleet.scoring.judges import judge_models, judge_seeds

from ..canonical import canonical, portable
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
               resources: dict[str, Any] | None = None, run_id: str = "") -> Provenance:
    """Today's code and semantics; the pack's content hash, its spec's digest and judges
    (models, and the seeds of ``run_id``'s judging); the sandbox's image ID, runtime and
    supervisor as its driver reports them in ``resources`` (None when it does not)."""
    found = resources or {}
    return Provenance(
        evalfleet_version=evalfleet_version(), scoring_semantics=SEMANTICS_VERSION,
        agentclash_commit=AGENTCLASH_COMMIT,
        pack_hash=pack.content_hash if pack is not None else None, pack_ref=pack_ref,
        image_digest=_text(found.get("image_id")), runtime=_text(found.get("runtime")),
        supervisor=_text(found.get("supervisor")),
        spec_digest=spec_digest(pack.spec) if pack is not None else None,
        judge_models=judge_models(pack.spec) if pack is not None else {},
        seeds=judge_seeds(pack.spec, run_id) if pack is not None and run_id else {})


def spec_digest(spec: EvaluationSpec) -> str:
    """``sha256:<hex>`` of the spec's normalized form as RFC 8785 JSON (once per spec
    object: a worker scores many runs of one pack)."""
    key = id(spec)
    cached = _SPEC_DIGESTS.get(key)
    if cached is None or cached[0] is not spec:
        text = canonical(portable(spec.model_dump(mode="json")))
        cached = (spec, "sha256:" + hashlib.sha256(text).hexdigest())
        if len(_SPEC_DIGESTS) >= 256:
            _SPEC_DIGESTS.clear()
        _SPEC_DIGESTS[key] = cached
    return cached[1]


_SPEC_DIGESTS: dict[int, tuple[EvaluationSpec, str]] = {}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
