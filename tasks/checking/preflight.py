"""Preflight in the fleet: a pack version's check recorded in Redis, required by the operator.

``evalfleet check PACK --fleet REDIS_URL`` runs the check through the fleet and records its
verdict under ``evalfleet:preflight:<digest>`` (:func:`tasks.evaluation.packs.pack_digest`
of the pack document; the latest check of a version wins), with the cases it checked and the ids of
the images its runs used. A worker whose operator sets ``EVALFLEET_PREFLIGHT__MODE``
consults it before any container starts (:class:`PreflightGate`):

* ``off`` (default): no look-up, no ``preflight`` in results;
* ``require``: a run whose pack version has no passing preflight for its case on the image
  it would use is ``rejected`` with the reason (never retried, nothing run);
* ``flag``: such a run is scored as usual, and its result says why it is flagged.

Every result then carries ``preflight`` (:class:`~tasks.messages.Preflight`). A run of a
check itself (``check_run`` set) is never refused: its status is ``preflight``.
``EVALFLEET_PREFLIGHT__SECTIONS`` names further check sections that must have passed, beside
the pack being sound (e.g. ``forgeries`` once the forgery battery exists).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from ..evaluation.packs import pack_digest
from ..messages import Preflight, PreflightStatus
from ..redis_keys import preflight_key
from .report import CheckReport

if TYPE_CHECKING:
    from ..evaluation.pipeline import Prepared

Mode = Literal["off", "flag", "require"]
#: How many of a failed check's errors its record keeps (the reason quotes the first).
KEPT_ERRORS = 20


class PreflightRecord(BaseModel):
    """What a check through the fleet leaves in Redis for one pack version."""

    schema_version: Literal[1] = 1
    digest: str
    pack: str
    version_number: int | None = None
    passed: bool
    """The pack was sound: every core section of every case checked passed."""
    sections: dict[str, bool] = Field(default_factory=dict)
    """Per section key (core or not): passed on every case checked."""
    cases: list[str | None] = Field(default_factory=list)
    image_ids: list[str] = Field(default_factory=list)
    runtimes: list[str] = Field(default_factory=list)
    runs: int
    checked_at: datetime
    errors: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, report: CheckReport, now: datetime) -> PreflightRecord:
        """The record of a finished check."""
        return cls(digest=report.digest, pack=report.pack,
                   version_number=report.version_number, passed=report.passed,
                   sections=report.sections, cases=[c.case_key for c in report.cases],
                   image_ids=report.image_ids, runtimes=report.runtimes, runs=report.runs,
                   checked_at=now, errors=report.errors()[:KEPT_ERRORS])


class PreflightStore:
    """Preflight records in Redis (``evalfleet:preflight:<digest>``, no expiry)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    def get(self, digest: str) -> PreflightRecord | None:
        """The record of a pack version, or None."""
        raw = self.redis.get(preflight_key(digest))
        return None if raw is None else PreflightRecord.model_validate_json(raw)

    def put(self, record: PreflightRecord) -> str:
        """Store ``record`` (replacing the version's previous one); returns its key."""
        key = preflight_key(record.digest)
        self.redis.set(key, record.model_dump_json())
        return key


class Verdict(NamedTuple):
    """The gate's answer: the run's preflight standing, and whether to refuse it."""

    preflight: Preflight
    refuse: bool


class PreflightGate:
    """Looks up the preflight of a prepared run's pack version (one Redis GET)."""

    def __init__(self, store: PreflightStore, image_id: Callable[[str], str], mode: Mode,
                 sections: Collection[str] = ()) -> None:
        self.store, self.image_id, self.mode = store, image_id, mode
        self.sections = tuple(sections)

    def __call__(self, run: Prepared) -> Verdict:
        """The standing of ``run``'s pack version.

        Raises:
            redis.ConnectionError: Redis is unreachable (the run is retried).
            SandboxConfigError: the profile's image is missing.
        """
        digest = pack_digest(run.pack.manifest)
        if run.request.check_run is not None:
            return Verdict(Preflight(status="preflight", reason="a run of evalfleet check",
                                     digest=digest), False)
        image_id = self.image_id(run.profile.image)
        record = self.store.get(digest)
        status, reason = standing(record, image_id, run.case.case_key if run.case else None,
                                  self.sections)
        found = Preflight(status=status, reason=f"{_name(run)} (sha256 {digest[:12]}): "
                                                f"{reason}", digest=digest, image_id=image_id)
        return Verdict(found, self.mode == "require" and status != "passed")


def _name(run: Prepared) -> str:
    spec = run.pack.spec
    return f"pack {spec.name} v{spec.version_number}"


def standing(record: PreflightRecord | None, image_id: str, case_key: str | None,
             sections: Collection[str] = ()) -> tuple[PreflightStatus, str]:
    """The status of a run on ``image_id`` for ``case_key`` given its version's record."""
    if record is None:
        return "missing", ("no preflight recorded for this version; run `evalfleet check "
                           "PACK --fleet REDIS_URL`")
    if case_key not in record.cases:
        return "missing", f"its preflight did not check case {case_key}"
    if image_id not in record.image_ids:
        ran_on = ", ".join(record.image_ids) or "no image"
        return "stale", (f"its preflight ran on {ran_on}, this run would use {image_id}: "
                         "check it again")
    if not record.passed:
        first = record.errors[0] if record.errors else "unsound"
        more = f" (+{len(record.errors) - 1} more)" if len(record.errors) > 1 else ""
        return "failed", f"its preflight failed: {first}{more}"
    unmet = [name for name in sections if not record.sections.get(name)]
    if unmet:
        return "failed", (f"its preflight did not pass {', '.join(unmet)}, which this fleet "
                          "requires")
    return "passed", f"preflight passed {record.checked_at:%Y-%m-%d %H:%M} UTC"
